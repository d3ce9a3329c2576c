package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// Each export a Publisher makes from its previous one is, file for file,
// the export Write makes of the same checkpoint from scratch: over a
// random life of rounds created, committed to (sealed log entries),
// triggered (unsealing them, earlier in the log), profiles and market
// resolutions, and runs of small appends. A checkpoint after appends
// alone reads no table but the log's. A new Publisher (a restart) makes
// the same exports from scratch.
func TestPublishFromPreviousMatchesWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, "sqlite")
	lg := &tlog.Log{Store: db, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))}
	pub, err := tlog.NewPublisher(lg, "incremental.example/log", db)
	if err != nil {
		t.Fatal(err)
	}
	svc := &rounds.Service{Store: db}
	src := export.Source{Forecast: svc, Log: lg}
	p := &export.Publisher{Store: db}
	var ms []*arena.Market
	for i := range 12 {
		ms = append(ms, storetest.Binary(fmt.Sprintf("m%d", i), float64(i+1)))
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var open []uint64 // rounds not triggered yet
	entry := func(kind string, round uint64, n int) {
		t.Helper()
		data := fmt.Appendf(nil, `{"kind":%q,"data":{"round_id":%d,"agent":"0x%040d","n":%d}}`, kind, round, n, rng.IntN(1<<30))
		if _, err := db.AppendLog(ctx, kind, data, tlog.LeafHash(data), t0); err != nil {
			t.Fatal(err)
		}
	}
	exportOf := func(size uint64) string {
		t.Helper()
		note, err := pub.PublishAt(ctx, size)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := export.Write(ctx, src, dir, export.Options{Format: export.JSONL, Checkpoint: note}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	exportedAt := regexp.MustCompile(`"exported_at": "[^"]*"`)
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return exportedAt.ReplaceAllString(string(b), "")
	}
	appendsOnly := 0
	for step := range 80 {
		onlyAppends := false
		switch a := rng.IntN(10); {
		case a < 2 || len(open) == 0:
			r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour), CreatedAt: t0,
				Markets: []arena.RoundMarket{{MarketID: ms[rng.IntN(6)].ID}, {MarketID: ms[6+rng.IntN(6)].ID}}}
			if err := db.CreateRound(ctx, r); err != nil {
				t.Fatal(err)
			}
			open = append(open, r.ID)
			entry(tlog.KindCommit, r.ID, step)
		case a < 6:
			for i := range 1 + rng.IntN(3) {
				entry([]string{tlog.KindCommit, tlog.KindReveal}[i%2], open[rng.IntN(len(open))], step)
			}
			onlyAppends = true
		case a < 8:
			i := rng.IntN(len(open))
			if err := db.SaveRoundResult(ctx, open[i], []int8{1, 0}, nil, nil, t0.Add(4*time.Hour)); err != nil {
				t.Fatal(err)
			}
			entry(tlog.KindOutcome, open[i], step)
			open = append(open[:i], open[i+1:]...)
		case a < 9:
			if err := db.SetAgent(ctx, arena.AgentInfo{Address: fmt.Sprintf("0x%040d", step), Name: fmt.Sprintf("Agent %d", step)}); err != nil {
				t.Fatal(err)
			}
			entry(tlog.KindProfile, 0, step)
		default:
			if _, err := db.ResolveMarket(ctx, ms[rng.IntN(len(ms))].ID, arena.Yes, t0); err != nil && arena.ErrorKind(err) != arena.ECONFLICT {
				t.Fatal(err)
			}
			entry(tlog.KindResolution, 0, step)
		}
		if step == 40 {
			p = &export.Publisher{Store: db} // a restart: made from scratch, storing what the latest export lacks
		}
		st, err := p.Publish(ctx, src, pub.PublishAt)
		if err != nil || !st.Stored {
			t.Fatalf("step %d: publish %+v %v", step, st, err)
		}
		_, manifest, err := db.ExportManifest(ctx, st.Size, false)
		if err != nil {
			t.Fatal(err)
		}
		got := filepath.Join(t.TempDir(), "published")
		if err := export.Mirror(ctx, db, manifest, got); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want := exportOf(st.Size)
		files, _ := os.ReadDir(want)
		for _, f := range files {
			if f.Name() == export.IndexFile {
				continue // it lists meta.json's digest, which holds the time of export
			}
			if a, b := read(filepath.Join(got, f.Name())), read(filepath.Join(want, f.Name())); a != b {
				t.Fatalf("step %d: %s differs from the export made from scratch:\n%s\nwant\n%s", step, f.Name(), a, b)
			}
		}
		if onlyAppends && step != 40 {
			appendsOnly++
			if st.Read != 1 {
				t.Errorf("step %d: appends alone read %d tables, want the log's alone", step, st.Read)
			}
		}
	}
	if appendsOnly == 0 {
		t.Fatal("no step appended alone")
	}
	// Pruned to the latest, past the grace period: it mirrors whole, and
	// the next export, made from it, still matches.
	if st, err := export.Prune(ctx, db, export.Retention{Latest: 1}, time.Now().Add(2*export.Grace)); err != nil || st.ExportsDeleted != st.Exports-1 || st.PartsDeleted == 0 {
		t.Fatalf("prune: %+v %v", st, err)
	}
	entry(tlog.KindReveal, open[0], 1000)
	st, err := p.Publish(ctx, src, pub.PublishAt)
	if err != nil {
		t.Fatal(err)
	}
	_, manifest, err := db.ExportManifest(ctx, st.Size, false)
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(t.TempDir(), "after")
	if err := export.Mirror(ctx, db, manifest, got); err != nil {
		t.Fatalf("after the prune: %v", err)
	}
	if a, b := read(filepath.Join(got, "log_entries.jsonl")), read(filepath.Join(exportOf(st.Size), "log_entries.jsonl")); a != b {
		t.Fatal("after the prune, the log's entries differ from the export made from scratch")
	}
}
