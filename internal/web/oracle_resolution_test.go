package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

// oracleAPI serves db's oracle as `arena serve` wires it: both tracks'
// hooks, and every applied resolution, decision and dispute in the
// tamper-evident log.
func oracleAPI(t *testing.T, db *store.DB) (*web.Server, *httptest.Server) {
	t.Helper()
	fsvc := &rounds.Service{Store: db, Logger: quiet}
	osvc := &oracle.Service{Store: db, Logger: quiet, Tracks: []arena.ResolutionHook{rounds.Rescore, trading.Resettle, rounds.LogResolution},
		DisputeHooks: []arena.DisputeHook{rounds.LogDispute}}
	srv := web.New(web.Parts{Markets: db, DB: db, AdminToken: "tok", Logger: quiet, Forecast: fsvc, Oracle: osvc})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs
}

// logSize is the length of db's log.
func logSize(t *testing.T, db *store.DB) uint64 {
	t.Helper()
	n, err := db.LogSize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// adminPost sends an admin request and returns the status and the error code
// ("" on success).
func adminPost(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	code, ecode, _ := adminWrite(t, url, token, body)
	return code, ecode
}

// adminWrite is adminPost that also reports whether the answer says the
// write changed nothing (Arena-Unchanged).
func adminWrite(t *testing.T, url, token, body string) (int, string, bool) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error.Code, resp.Header.Get("Arena-Unchanged") == "true"
}

// Arbiters re-resolving one market at once over HTTP: on both engines
// exactly one re-resolution applies; every other one asking the same
// decision answers 200 Arena-Unchanged (it is in force) and every one
// asking another answers 409 resolution_changed through the one error
// path, never 500 (PostgreSQL answered 500 on a duplicate key; SQLite
// applied them all). Without
// "revises", each request revises the resolution in force when it is read:
// still no 500, and the history and the log grow by exactly the changes
// applied. A re-resolution to the decision in force adds nothing to either.
func TestOracleReResolveRaceHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		srv, hs := oracleAPI(t, db)
		m := storetest.SaveMarket(t, db, "raced")
		if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: m, Verdict: arena.OracleVerdict{Architecture: "majority", Decision: arena.OracleNo, Escalate: true},
			Policy: arena.DefaultOraclePolicy}); err != nil {
			t.Fatal(err)
		}
		url := fmt.Sprintf("%s/api/v1/admin/oracle/queue/%d", hs.URL, m)
		if code, _ := adminPost(t, url, "tok", `{"decision":"VOID","arbiter":"ann","reason":"unclear"}`); code != 200 {
			t.Fatalf("decision: %d", code)
		}
		logSize := func() uint64 { return logSize(t, db) }
		history := func() []arena.OracleResolution {
			h, err := db.OracleResolutions(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		// race sends n re-resolutions at once, alternately YES and NO, and
		// counts the answers by status (-200: 200 Arena-Unchanged).
		race := func(n int, revises string) map[int]int {
			codes := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					body := fmt.Sprintf(`{"decision":%q,"arbiter":"arbiter %d","reason":"corrected","re_resolve":true%s}`, []string{"YES", "NO"}[i%2], i, revises)
					code, ecode, unchanged := adminWrite(t, url, "tok", body)
					if code == 409 && ecode != arena.CodeResolutionChanged {
						t.Errorf("409 with code %q", ecode)
					}
					if unchanged {
						code = -code
					}
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			return codes
		}

		size := logSize()
		codes := race(24, `,"revises":1`)
		if codes[200] != 1 || codes[-200] != 11 || codes[409] != 12 || len(codes) != 3 || srv.InternalErrors() != 0 {
			t.Fatalf("answers %v, %d internal errors; want one 200, 11 × 200 unchanged and 12 × 409", codes, srv.InternalErrors())
		}
		h := history()
		if len(h) != 2 || logSize() != size+2 {
			t.Fatalf("history %d long, log grew by %d; want 2 and 2 (the decision and the resolution)", len(h), logSize()-size)
		}

		// A re-resolution must name what it revises.
		if code, ecode := adminPost(t, url, "tok", `{"decision":"NO","arbiter":"dan","reason":"corrected","re_resolve":true}`); code != 400 || ecode != "revises_required" {
			t.Fatalf("re-resolution without revises: %d %q, want 400 revises_required", code, ecode)
		}
		h2 := history()
		if len(h2) != len(h) {
			t.Fatalf("a refused re-resolution changed the history: %d, had %d", len(h2), len(h))
		}

		// The decision in force again: 200, the same resolution, nothing new.
		last := h2[len(h2)-1]
		size = logSize()
		body := fmt.Sprintf(`{"decision":%q,"arbiter":"carol","reason":"confirming","re_resolve":true,"revises":%d}`, last.Final, last.Seq)
		if code, _, unchanged := adminWrite(t, url, "tok", body); code != 200 || !unchanged || len(history()) != len(h2) || logSize() != size {
			t.Fatalf("same decision: %d (unchanged %v), history %d (had %d), log grew by %d", code, unchanged, len(history()), len(h2), logSize()-size)
		}
	})
}

// The dispute endpoint and the free-text rules of every oracle input over
// HTTP, on both engines: a market its source resolved is disputed with who
// and why (listed, and the dead ends of flag and re-resolve now point to
// it); refusals answer 4xx and store nothing; NUL and other control
// characters, and bidirectional controls, in a reason or a name answer
// 400, never 500.
func TestOracleDisputeAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		srv, hs := oracleAPI(t, db)
		up, open := storetest.SaveMarket(t, db, "up"), storetest.SaveMarket(t, db, "open")
		if _, err := db.ResolveMarket(ctx, up, arena.Yes, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		dispute := func(m int64) string { return fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/dispute", hs.URL, m) }
		flag := fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/flag", hs.URL, open)
		decide := func(m int64) string { return fmt.Sprintf("%s/api/v1/admin/oracle/queue/%d", hs.URL, m) }
		for _, c := range []struct {
			name, url, token, body string
			want                   int
		}{
			{"dispute without the admin token", dispute(up), "", `{"admin":"ann","reason":"wrong"}`, 401},
			{"dispute without a reason", dispute(up), "tok", `{"admin":"ann"}`, 400},
			{"dispute without the admin's name", dispute(up), "tok", `{"reason":"wrong"}`, 400},
			{"dispute reason with a NUL", dispute(up), "tok", `{"admin":"ann","reason":"wr\u0000ong"}`, 400},
			{"dispute admin with a NUL", dispute(up), "tok", `{"admin":"a\u0000nn","reason":"wrong"}`, 400},
			{"dispute reason with an escape sequence", dispute(up), "tok", `{"admin":"ann","reason":"\u001b[2Jwrong"}`, 400},
			{"dispute reason over the cap", dispute(up), "tok", `{"admin":"ann","reason":"` + strings.Repeat("x", arena.MaxReasonChars+1) + `"}`, 400},
			{"dispute of an unknown market", dispute(99999), "tok", `{"admin":"ann","reason":"wrong"}`, 404},
			{"dispute of an unresolved market", dispute(open), "tok", `{"admin":"ann","reason":"wrong"}`, 409},
			{"flag reason with a NUL", flag, "tok", `{"reason":"dis\u0000puted"}`, 400},
			{"flag reason with a bell", flag, "tok", `{"reason":"dis\u0007puted"}`, 400},
			{"dispute reason with a right-to-left override", dispute(up), "tok", `{"admin":"ann","reason":"the source \u202eenod\u202c wrong"}`, 400},
			{"dispute admin with a right-to-left isolate", dispute(up), "tok", `{"admin":"\u2067nna\u2069","reason":"wrong"}`, 400},
			{"flag reason with a right-to-left mark", flag, "tok", `{"reason":"dis\u200fputed"}`, 400},
			{"flag of a market its source resolved", fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/flag", hs.URL, up), "tok", `{"reason":"wrong"}`, 409},
			{"re-resolution of a market its source resolved", decide(up), "tok", `{"decision":"NO","arbiter":"bob","reason":"wrong","re_resolve":true,"revises":1}`, 409},
			{"arbiter decision on an undisputed market", decide(up), "tok", `{"decision":"NO","arbiter":"bob","reason":"wrong"}`, 409},
			{"dispute accepted", dispute(up), "tok", `{"admin":"ann","reason":"the source misread\nits own rules"}`, 200},
			{"second dispute", dispute(up), "tok", `{"admin":"bob","reason":"again"}`, 409},
			{"arbiter name with a NUL", decide(up), "tok", `{"decision":"NO","arbiter":"b\u0000ob","reason":"rules"}`, 400},
			{"arbiter reason with a NUL", decide(up), "tok", `{"decision":"NO","arbiter":"bob","reason":"ru\u0000les"}`, 400},
			{"arbiter name with a right-to-left override", decide(up), "tok", `{"decision":"NO","arbiter":"\u202ebob","reason":"rules"}`, 400},
			{"arbiter reason with an Arabic letter mark", decide(up), "tok", `{"decision":"NO","arbiter":"bob","reason":"ru\u061cles"}`, 400},
			{"arbiter decides the dispute", decide(up), "tok", `{"decision":"NO","arbiter":"bob","reason":"the rules say no"}`, 200},
			{"dispute of an oracle resolution", dispute(up), "tok", `{"admin":"ann","reason":"again"}`, 409},
		} {
			if code, _ := adminPost(t, c.url, c.token, c.body); code != c.want {
				t.Errorf("%s: %d, want %d", c.name, code, c.want)
			}
		}
		if n := srv.InternalErrors(); n != 0 {
			t.Errorf("%d internal errors", n)
		}
		resp, err := http.Get(hs.URL + "/api/v1/oracle/disputes")
		if err != nil {
			t.Fatal(err)
		}
		var ds []arena.OracleDispute
		err = json.NewDecoder(resp.Body).Decode(&ds)
		resp.Body.Close()
		if err != nil || len(ds) != 1 || ds[0].MarketID != up || ds[0].Admin != "ann" || ds[0].Resolution != arena.Yes || ds[0].Reason != "the source misread\nits own rules" {
			t.Fatalf("disputes %+v %v", ds, err)
		}
		if m, _ := db.Market(ctx, up); m.Resolution != arena.No {
			t.Fatalf("decided dispute: %+v", m)
		}
		if fs, _ := db.OracleFlags(ctx); len(fs) != 0 {
			t.Fatalf("refused flags stored: %+v", fs)
		}
		page, err := http.Get(hs.URL + "/oracle")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(page.Body)
		page.Body.Close()
		if !strings.Contains(string(b), "Resolutions disputed by an admin") || !strings.Contains(string(b), "the source misread") {
			t.Errorf("oracle page lacks the dispute")
		}
	})
}

// The oracle's admin acts are in the tamper-evident log: a dispute (who,
// why, when, the resolution disputed), then the arbiter's decision (who,
// why, when, what) before the resolution it applies. An admin resolving a
// market to the resolution its source gave, or an arbiter re-resolving to
// the decision in force, adds nothing to the log or the market and says
// so (Arena-Unchanged on the former).
func TestOracleAuditLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_, hs := oracleAPI(t, db)
		up := storetest.SaveMarket(t, db, "up")
		sourceAt := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		if _, err := db.ResolveMarket(ctx, up, arena.Yes, sourceAt); err != nil {
			t.Fatal(err)
		}
		size := func() uint64 { return logSize(t, db) }
		resolve := func(outcome string) http.Header {
			t.Helper()
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/admin/markets/%d/resolve", hs.URL, up), strings.NewReader(`{"outcome":"`+outcome+`"}`))
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("resolve %s: %d", outcome, resp.StatusCode)
			}
			return resp.Header
		}
		for _, outcome := range []string{"YES", "yes", "YES"} {
			if h := resolve(outcome); h.Get("Arena-Unchanged") != "true" {
				t.Errorf("the source's resolution %s again: no Arena-Unchanged header", outcome)
			}
		}
		if n := size(); n != 0 {
			t.Fatalf("the source's resolution repeated by an admin: %d log entries, want none", n)
		}
		if m, _ := db.Market(ctx, up); !m.ResolvedAt.Equal(sourceAt) {
			t.Errorf("the repeat moved resolved_at to %s", m.ResolvedAt)
		}
		if code, _ := adminPost(t, fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/dispute", hs.URL, up), "tok", `{"admin":"ann","reason":"the source misread its rules"}`); code != 200 {
			t.Fatalf("dispute: %d", code)
		}
		decide := fmt.Sprintf("%s/api/v1/admin/oracle/queue/%d", hs.URL, up)
		if code, _ := adminPost(t, decide, "tok", `{"decision":"NO","arbiter":"bob","reason":"the rules say no"}`); code != 200 {
			t.Fatalf("decide: %d", code)
		}
		before := size()
		if code, ecode := adminPost(t, decide, "tok", `{"decision":"NO","arbiter":"carl","reason":"still no","re_resolve":true,"revises":1}`); code != 200 {
			t.Fatalf("re-resolution to the decision in force: %d %s", code, ecode)
		}
		if size() != before {
			t.Errorf("a re-resolution to the decision in force grew the log from %d to %d", before, size())
		}
		es, err := db.LogEntries(ctx, 0, size())
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		var d forecast.DisputeEntry
		var dec forecast.DecisionEntry
		for _, e := range es {
			kinds = append(kinds, e.Kind)
			var l tlog.Leaf
			if err := json.Unmarshal(e.Data, &l); err != nil {
				t.Fatal(err)
			}
			switch e.Kind {
			case tlog.KindDispute:
				json.Unmarshal(l.Data, &d)
			case tlog.KindDecision:
				json.Unmarshal(l.Data, &dec)
			}
		}
		if strings.Join(kinds, ",") != "dispute,decision,resolution" {
			t.Fatalf("log kinds %v, want a dispute, a decision and a resolution", kinds)
		}
		if d.MarketID != up || d.Admin != "ann" || d.Reason != "the source misread its rules" || d.Resolution != arena.Yes || d.AtMicros == 0 {
			t.Errorf("dispute entry %+v", d)
		}
		if dec.MarketID != up || dec.Arbiter != "bob" || dec.Reason != "the rules say no" || dec.Decision != "NO" || dec.Seq != 1 || dec.AtMicros < d.AtMicros {
			t.Errorf("decision entry %+v", dec)
		}
	})
}

// Identical admin writes sent at once, on both engines: 24 resolutions of
// one market, then 24 disputes of it by one admin for one reason, then 24
// arbiters deciding it alike. Each time one request changes the market and
// logs it, and the 23 others answer 200 with Arena-Unchanged, adding
// nothing to the log.
func TestIdenticalAdminWritesOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		srv, hs := oracleAPI(t, db)
		m := storetest.SaveMarket(t, db, "identical")
		size := func() uint64 { return logSize(t, db) }
		all := func(what, url, body string, logged uint64) {
			t.Helper()
			before := size()
			var changed, unchanged atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					code, ecode, same := adminWrite(t, url, "tok", body)
					switch {
					case code != 200:
						t.Errorf("%s: %d %s", what, code, ecode)
					case same:
						unchanged.Add(1)
					default:
						changed.Add(1)
					}
				}()
			}
			close(start)
			wg.Wait()
			if changed.Load() != 1 || unchanged.Load() != 23 || size() != before+logged || srv.InternalErrors() != 0 {
				t.Fatalf("24 identical %s: %d changed, %d unchanged, the log grew by %d (want %d), %d internal errors", what,
					changed.Load(), unchanged.Load(), size()-before, logged, srv.InternalErrors())
			}
		}
		all("resolutions", fmt.Sprintf("%s/api/v1/admin/markets/%d/resolve", hs.URL, m), `{"outcome":"YES"}`, 1)
		all("disputes", fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/dispute", hs.URL, m), `{"admin":"ann","reason":"the source misread its rules"}`, 1)
		all("decisions", fmt.Sprintf("%s/api/v1/admin/oracle/queue/%d", hs.URL, m), `{"decision":"NO","arbiter":"bob","reason":"the rules say no"}`, 2)
		if mk, _ := db.Market(ctx, m); mk.Resolution != arena.No {
			t.Fatalf("after the decision: %+v", mk)
		}
		if h, _ := db.OracleResolutions(ctx, m); len(h) != 1 {
			t.Fatalf("%d resolutions recorded, want 1", len(h))
		}
	})
}
