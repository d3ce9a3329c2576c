package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/tlog/tlogtest"
)

// The export routes stream the tables `arena export` writes. Mid-round —
// one round scored, the next revealed but not triggered — neither they nor
// the directory export show anything of the untriggered round's commits,
// reveals or reasoning (the log keeps their leaf hashes, sealed), and the
// directory export still verifies. CSV cells that a spreadsheet would run
// as a formula come out escaped.
func TestExportSealsUntriggeredRound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := &clock.Manual{}
		t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		clk.Set(t0)
		key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
		if err != nil {
			t.Fatal(err)
		}
		lg := &tlog.Log{Store: db, Key: key}
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		srv := web.New(web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: quiet, Forecast: svc, Log: lg})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		e := &env{t: t, db: db, svc: svc, url: hs.URL, domain: svc.Domain, now: clk.Now}
		markets := func(prefix string, questions ...string) []*arena.Market {
			var ms []*arena.Market
			for i, q := range questions {
				ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprint(prefix, i), Kind: arena.KindMarket, Question: q, Category: "politics",
					EventID: fmt.Sprint(prefix, i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6},
					Volume: 1e5, Liquidity: 5000, CloseTime: t0.Add(60 * 24 * time.Hour), Status: arena.StatusOpen})
			}
			if _, err := db.SaveMarkets(ctx, ms); err != nil {
				t.Fatal(err)
			}
			return ms
		}
		ms := markets("first", "=HYPERLINK(\"http://evil.example\",\"click\")", "@SUM(1+1)")
		k := newKey("export agent")
		play := func(preds []uint16, salt, reason string, trigger bool) uint64 {
			now := clk.Now()
			r := e.createRound(ms, now.Add(time.Hour), now.Add(2*time.Hour), now.Add(3*time.Hour))
			reasons := []string{reason + " one", reason + " two"}
			canon, err := forecast.CanonicalReasoning(reasons)
			if err != nil {
				t.Fatal(err)
			}
			rh, _ := forecast.ReasoningHash(reasons)
			e.commit(k, r.ID, preds, saltOf(salt), rh, e.nonce(k.Address().Hex()))
			clk.Set(now.Add(150 * time.Minute))
			e.reveal(k, r.ID, preds, saltOf(salt), e.nonce(k.Address().Hex()))
			e.ok(201, "POST", fmt.Sprintf("/api/v1/rounds/%d/reasoning", r.ID), forecast.ReasoningRequest{Agent: k.Address().Hex(), Content: string(canon)}, "", nil)
			clk.Set(now.Add(4 * time.Hour))
			if trigger {
				for _, m := range ms {
					e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), map[string]string{"outcome": "YES"}, adminToken, nil)
				}
				e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken, nil)
			}
			return r.ID
		}
		scored := play([]uint16{8111, 7222}, "scored salt", "scored reasoning", true)
		// Fresh markets for the second round: the first ones are resolved.
		ms = markets("second", "+1 or -1?", "-2 or not?")
		open := play([]uint16{6333, 5444}, "sealed salt", "sealed reasoning", false)
		secrets := []string{"6333 5444", "6333,5444", saltOf("sealed salt").Hex()[2:], "sealed reasoning"}
		visible := []string{"8111 7222", "8111,7222", saltOf("scored salt").Hex()[2:]}

		get := func(path string) (int, http.Header, string) {
			t.Helper()
			resp, err := http.Get(hs.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, resp.Header, string(b)
		}
		var all strings.Builder
		var idx web.ExportIndexJSON
		e.ok(200, "GET", "/api/v1/export", nil, "", &idx)
		if len(idx.Tables) != len(export.Specs) {
			t.Fatalf("index lists %d tables, want %d", len(idx.Tables), len(export.Specs))
		}
		for _, tb := range idx.Tables {
			for _, f := range []string{export.CSV, export.JSONL} {
				st, h, body := get(tb.URLs[f])
				if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), map[string]string{"csv": "text/csv", "jsonl": "application/jsonl"}[f]) ||
					!strings.Contains(h.Get("Content-Disposition"), tb.Name+"."+f) {
					t.Fatalf("GET %s: %d %v", tb.URLs[f], st, h)
				}
				got, err := export.ReadTable(strings.NewReader(body), tb.Name, f)
				if err != nil {
					t.Fatalf("%s: %v", tb.URLs[f], err)
				}
				if f == export.CSV && strings.Join(got.Columns, ",") != strings.Join(tb.Columns, ",") {
					t.Fatalf("%s: columns %v, want %v", tb.URLs[f], got.Columns, tb.Columns)
				}
				all.WriteString(body)
				if tb.Name == "submissions" {
					for _, r := range got.Rows {
						if r[0] == fmt.Sprint(open) {
							t.Fatalf("%s has a row of the untriggered round %d: %v", tb.URLs[f], open, r)
						}
					}
					if len(got.Rows) != 1 || got.Rows[0][0] != fmt.Sprint(scored) {
						t.Fatalf("%s: %v, want the scored round's submission", tb.URLs[f], got.Rows)
					}
				}
			}
		}
		for _, s := range secrets {
			if strings.Contains(all.String(), s) {
				t.Errorf("an export shows %q of the untriggered round", s)
			}
		}
		for _, s := range visible {
			if !strings.Contains(all.String(), s) {
				t.Errorf("the exports miss %q of the scored round", s)
			}
		}
		// Two sealed log leaves (the open round's commit and reveal), with
		// their hashes.
		_, _, logCSV := get("/api/v1/export/log_entries.csv")
		lt, _ := export.ReadTable(strings.NewReader(logCSV), "log_entries", export.CSV)
		sealed := 0
		for _, r := range lt.Rows {
			if r[5] == "true" {
				sealed++
				if r[2] != "" || len(r[3]) != 64 {
					t.Errorf("sealed entry %v", r)
				}
			}
		}
		if sealed != 2 {
			t.Errorf("%d sealed log entries, want 2", sealed)
		}
		// Formula cells are escaped in the CSV as sent, read back intact.
		_, _, mcsv := get("/api/v1/export/markets.csv")
		recs, err := csv.NewReader(strings.NewReader(mcsv)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var questions []string
		q := slices.Index(recs[0], "question")
		for _, r := range recs[1:] {
			questions = append(questions, r[q])
		}
		if strings.Join(questions, "|") != `'=HYPERLINK("http://evil.example","click")|'@SUM(1+1)|'+1 or -1?|'-2 or not?` {
			t.Errorf("formula cells not escaped: %q", questions)
		}
		// since keeps the later round only; JSONL keeps the cells as they are.
		_, _, rj := get("/api/v1/export/rounds.jsonl?since=" + clk.Now().Add(-5*time.Hour).Format(time.RFC3339))
		if n := strings.Count(rj, "\n"); n != 1 || !strings.Contains(rj, fmt.Sprintf(`"id":"%d"`, open)) {
			t.Errorf("rounds since the second round: %s", rj)
		}
		for path, want := range map[string]int{"/api/v1/export/nope.csv": 404, "/api/v1/export/rounds.xlsx": 404, "/api/v1/export/rounds": 404,
			"/api/v1/export/rounds.csv?since=yesterday": 400} {
			if st, _, body := get(path); st != want || !strings.Contains(body, `"error"`) {
				t.Errorf("GET %s: %d %s, want %d", path, st, body, want)
			}
		}

		// The directory export (what `arena export` writes) holds the same
		// rows, no secret, and verifies with the sealed entries.
		dir := t.TempDir()
		if _, err := export.Write(ctx, export.Source{Forecast: svc, Log: lg}, dir, export.Options{Format: export.CSV, Checkpoint: tlogtest.Checkpoint(t, lg)}); err != nil {
			t.Fatal(err)
		}
		for _, sp := range export.Specs {
			b := readFile(t, filepath.Join(dir, sp.Name+".csv"))
			for _, s := range secrets {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("%s.csv shows %q of the untriggered round", sp.Name, s)
				}
			}
		}
		rep, err := export.Verify(dir, export.VerifyOptions{LogKey: lg.PublicKey()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.SealedEntries != 2 || rep.Submissions != 1 || rep.CommitHashes != 1 {
			t.Fatalf("verify report %+v", rep)
		}
		// After the trigger the round's submission and leaves come out.
		for _, m := range ms {
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), map[string]string{"outcome": "NO"}, adminToken, nil)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", open), nil, adminToken, nil)
		_, _, subs := get("/api/v1/export/submissions.jsonl")
		_, _, logs := get("/api/v1/export/log_entries.jsonl")
		if !strings.Contains(subs, "6333 5444") || strings.Contains(logs, `"sealed":"true"`) || !strings.Contains(logs, saltOf("sealed salt").Hex()[2:]) {
			t.Errorf("after the trigger: submissions %s", subs)
		}
	})
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
