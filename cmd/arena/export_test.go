package main

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// `arena export` in the middle of a round — committed, revealed, reasoning
// uploaded, outcomes not triggered — writes nothing of that round's
// predictions, salt, signatures or reasoning; the log keeps the commit's
// and the reveal's leaf hashes (sealed), and `arena verify` passes.
func TestExportMidRound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	ids := fcMarkets(t, dbURL, 2)
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keyPath := filepath.Join(dir, "log.key")
	key, record := newLogKey(t, keyPath)
	lg := &tlog.Log{Store: db, Key: key, Signed: record}
	dom, err := app.Domain(ctx, config.Defaults(), db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	clock := now
	svc := &rounds.Service{Store: db, Domain: dom, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return clock }}
	r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids, CommitDeadline: now.Add(time.Hour), RevealStart: now.Add(2 * time.Hour),
		RevealDeadline: now.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	k := fcKey("mid-round export")
	preds := []uint16{6333, 5444}
	salt := crypto.Keccak256Hash([]byte("mid-round salt"))
	reasons := []string{"sealed reasoning one", "sealed reasoning two"}
	rh, _ := forecast.ReasoningHash(reasons)
	deadline := uint64(now.Add(24 * time.Hour).Unix())
	csig, err := k.SignCommit(dom, forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, salt), ReasoningHash: rh,
		Agent: k.Address(), Nonce: 0, Deadline: deadline})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Commit(ctx, r.ID, forecast.CommitRequest{Agent: k.Address().Hex(), CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, salt).Hex(),
		ReasoningHash: rh.Hex(), Nonce: 0, Deadline: deadline, Signature: forecast.EncodeSignature(csig)}); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(150 * time.Minute)
	rsig, err := k.SignReveal(dom, forecast.Reveal{RoundID: r.ID, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: 1, Deadline: deadline})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reveal(ctx, r.ID, forecast.RevealRequest{Agent: k.Address().Hex(), Predictions: preds, Salt: salt.Hex(), Nonce: 1, Deadline: deadline,
		Signature: forecast.EncodeSignature(rsig)}); err != nil {
		t.Fatal(err)
	}
	canon, _ := forecast.CanonicalReasoning(reasons)
	if err := svc.UploadReasoning(ctx, r.ID, forecast.ReasoningRequest{Agent: k.Address().Hex(), Content: string(canon)}); err != nil {
		t.Fatal(err)
	}

	for _, format := range []string{export.CSV, export.JSONL} {
		out := filepath.Join(dir, "export-"+format)
		if _, _, err := cli(t, nil, "export", "--db", dbURL, "--out", out, "--format", format, "--log-key", keyPath); err != nil {
			t.Fatal(err)
		}
		for _, sp := range export.Specs {
			b, err := os.ReadFile(filepath.Join(out, sp.Name+"."+format))
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"6333 5444", "6333,5444", salt.Hex()[2:], "sealed reasoning", forecast.EncodeSignature(csig)[2:], forecast.EncodeSignature(rsig)[2:]} {
				if strings.Contains(string(b), secret) {
					t.Errorf("%s.%s shows %q of the untriggered round", sp.Name, format, secret)
				}
			}
		}
		got, _, err := cli(t, nil, "verify", "--export", out, "--log-key", lg.PublicKeyHex())
		if err != nil || !strings.Contains(got, "(2 sealed until their round is triggered") || !strings.Contains(got, "submissions 0") {
			t.Fatalf("verify: %v\n%s", err, got)
		}
	}
	// Both exports carry the checkpoint of one size: each is known to the
	// other's verification. An export made after the log grew carries a
	// larger one, which the earlier export is then a roll-back from.
	csv, jsonl := filepath.Join(dir, "export-"+export.CSV), filepath.Join(dir, "export-"+export.JSONL)
	got, _, err := cli(t, nil, "verify", "--export", jsonl, "--known-checkpoint", filepath.Join(csv, export.CheckpointFile))
	if err != nil || !strings.Contains(got, "1 known checkpoints consistent with the export's") {
		t.Fatalf("verify with the checkpoint known: %v\n%s", err, got)
	}
	if err := lg.Append(ctx, tlog.KindScore, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "export-later")
	if _, _, err := cli(t, nil, "export", "--db", dbURL, "--out", later, "--log-key", keyPath); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, nil, "verify", "--export", csv, "--known-checkpoint", filepath.Join(later, export.CheckpointFile)); err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("verify of the earlier export with the later checkpoint known: %v, want a roll-back", err)
	}
	if _, _, err := cli(t, nil, "verify", "--export", csv, "--known-checkpoint", filepath.Join(dir, "nowhere")); err == nil || !strings.Contains(err.Error(), "--known-checkpoint") {
		t.Fatalf("a known checkpoint file that does not exist: %v", err)
	}
}

// A log that has published a checkpoint is never signed by another key: export with
// the key file missing, or with another key, fails, makes no key file and
// signs nothing; with the log's own key it succeeds.
func TestLogKeyGuard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "a.db")
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own.key")
	key, record := newLogKey(t, own)
	lg := &tlog.Log{Store: db, Key: key, Logger: slog.New(slog.DiscardHandler), Signed: record}
	if err := lg.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	pub, err := tlog.NewPublisher(lg, "arena.test/log", db)
	if err != nil {
		t.Fatal(err)
	}
	published, err := pub.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	other := filepath.Join(dir, "other.key")
	if _, err := tlog.LoadOrCreateKey(other); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.key")
	for _, c := range []struct{ key, want string }{
		{missing, "does not exist, but this database's log has a published checkpoint:"},
		{other, "was not signed by the log key"},
	} {
		_, _, err := cli(t, nil, "export", "--db", dbURL, "--out", filepath.Join(dir, "x"), "--log-key", c.key)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("export with %s: %v, want %q", filepath.Base(c.key), err, c.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a refused export made the key file: %v", err)
	}
	db, err = store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := db.LatestCheckpoint(ctx)
	db.Close()
	if c, perr := tlog.ParseCheckpoint([]byte(tlog.NoteText(latest))); err != nil || perr != nil || c.Size != published.Size || !tlog.Equal(c.Hash, published.Hash) {
		t.Fatalf("checkpoint %+v after refused exports (%v, %v), want the one published before, %+v", c, err, perr, published)
	}
	if _, _, err := cli(t, nil, "export", "--db", dbURL, "--out", filepath.Join(dir, "ok"), "--log-key", own); err != nil {
		t.Fatalf("export with the log's own key: %v", err)
	}
}

// newLogKey makes a log key at path with its record of the trees it
// signed (the empty tree), as the first start of an arena does.
func newLogKey(t *testing.T, path string) (ed25519.PrivateKey, tlog.StateFile) {
	t.Helper()
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	record := tlog.StateFile{Path: tlog.StatePath(path)}
	if err := record.Create(tlog.SignedTree{}); err != nil {
		t.Fatal(err)
	}
	return key, record
}
