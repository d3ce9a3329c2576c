package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// getPage fetches an HTML page and returns its body.
func (e *env) page(path string) string {
	e.t.Helper()
	return htmlPage(e.t, e.url+path)
}

// The round page publishes no prediction, salt or commit hash while the
// round runs; after the trigger it shows the revealed predictions and the
// scores, equal on the page and in its JSON.
func TestRoundPageRevealsOnlyAfterTrigger(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(10*24*time.Hour))
		cd, rs, rd := t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), t0.Add(3*time.Hour)
		r := e.createRound(ms, cd, rs, rd)
		k := newKey("pager")
		preds := []uint16{1234, 5678, 9012}
		e.commit(k, r.ID, preds, saltOf("pager"), common.Hash{}, 0)
		subs := e.submissions(r.ID)
		if len(subs) != 1 {
			t.Fatalf("%d submissions", len(subs))
		}
		secrets := []string{subs[0].CommitHash, "0.1234", "0.5678", "0.9012", saltOf("pager").Hex()[2:]}
		check := func(when string) {
			t.Helper()
			var v view.RoundPageJSON
			e.ok(200, "GET", fmt.Sprintf("/api/v1/pages/rounds/%d", r.ID), nil, "", &v)
			if v.Triggered || len(v.Entries) != 0 || v.Commits != 1 {
				t.Fatalf("%s: round page JSON %+v", when, v)
			}
			_, raw := e.call("GET", fmt.Sprintf("/api/v1/pages/rounds/%d", r.ID), nil, "")
			html := e.page(fmt.Sprintf("/rounds/%d", r.ID))
			for _, s := range secrets {
				if strings.Contains(html, s) || strings.Contains(string(raw), s) {
					t.Errorf("%s: round page leaks %q", when, s)
				}
			}
		}
		check("open")
		clk.Set(rs.Add(time.Second))
		e.reveal(k, r.ID, preds, saltOf("pager"), 1)
		check("revealing, after the reveal")
		clk.Set(rd.Add(time.Second))
		check("scoring")
		var beforeBoard web.BoardJSON
		e.ok(200, "GET", "/api/v1/leaderboard", nil, "", &beforeBoard) // caches the empty analysis
		before := beforeBoard.Rows
		if len(before) != 0 {
			t.Fatalf("leaderboard before any trigger: %+v", before)
		}
		for _, m := range ms {
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), map[string]string{"outcome": "YES"}, adminToken, nil)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken, nil)
		var afterBoard web.BoardJSON
		e.ok(200, "GET", "/api/v1/leaderboard", nil, "", &afterBoard) // the trigger invalidates the cached analysis
		after := afterBoard.Rows
		if len(after) < 2 {
			t.Fatalf("leaderboard after the trigger: %+v", after)
		}
		var v view.RoundPageJSON
		e.ok(200, "GET", fmt.Sprintf("/api/v1/pages/rounds/%d", r.ID), nil, "", &v)
		var mine *view.RoundEntryJSON
		for i := range v.Entries {
			if v.Entries[i].Agent == k.Address().Hex() {
				mine = &v.Entries[i]
			}
		}
		if !v.Triggered || mine == nil || len(mine.Predictions) != 3 || mine.Predictions[0] == nil || *mine.Predictions[0] != 0.1234 || mine.Brier == nil {
			t.Fatalf("triggered round page: %+v", v)
		}
		// The baselines show what they were scored on: the market the
		// benchmarks, random its draws from the round's public seed.
		baselines := 0
		for _, en := range v.Entries {
			if !en.Baseline {
				continue
			}
			baselines++
			if len(en.Predictions) != len(v.Markets) {
				t.Fatalf("baseline %s: %d predictions for %d markets", en.Agent, len(en.Predictions), len(v.Markets))
			}
			for i, p := range en.Predictions {
				want := v.Markets[i].Benchmark
				if en.Agent == forecast.RandomAgent {
					f := float64(scoring.RandomPredictions(r.ID, r.CommitDeadline, len(v.Markets))[i]) / forecast.MaxBps
					want = &f
				}
				if (p == nil) != (want == nil) || p != nil && math.Abs(*p-*want) > 0.5/forecast.MaxBps {
					t.Errorf("baseline %s, market %d: prediction %v, want %v", en.Agent, i, p, want)
				}
			}
		}
		html := e.page(fmt.Sprintf("/rounds/%d", r.ID))
		if !strings.Contains(html, fmt.Sprintf("%.4f", *mine.Brier)) || !strings.Contains(html, "0.12") {
			t.Errorf("round page lacks the agent's Brier %.4f or predictions", *mine.Brier)
		}
		if baselines == 0 || strings.Contains(html, "no revealed predictions") {
			t.Errorf("round page: %d baselines; a baseline without its predictions: %v", baselines, strings.Contains(html, "no revealed predictions"))
		}
	})
}

// Reads carry an ETag; If-None-Match with it answers 304 without a body.
func TestETag(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := startServer(t, db, nil, forecast.Domain{})
		seedMarkets(t, db, 2, time.Now().Add(48*time.Hour))
		for _, path := range []string{"/api/v1/markets", "/api/v1/pages/home", "/api/v1/leaderboard", "/api/v1/openapi.json", "/api/v1/domain"} {
			resp, err := http.Get(e.url + path)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			tag := resp.Header.Get("ETag")
			if resp.StatusCode != 200 || !strings.HasPrefix(tag, `"`) {
				t.Fatalf("GET %s: %d ETag %q", path, resp.StatusCode, tag)
			}
			req, _ := http.NewRequest("GET", e.url+path, nil)
			req.Header.Set("If-None-Match", `"other", `+tag)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 304 || len(b) != 0 || resp.Header.Get("ETag") != tag {
				t.Errorf("GET %s with If-None-Match: %d, %d bytes", path, resp.StatusCode, len(b))
			}
		}
	})
}

// Rounds page by cursor: following Link rel="next" visits every round
// once, newest first.
func TestRoundsCursor(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(10*24*time.Hour))
		for i := range 5 {
			d := time.Duration(i) * time.Minute
			e.createRound(ms, t0.Add(time.Hour+d), t0.Add(2*time.Hour+d), t0.Add(3*time.Hour+d))
		}
		var seen []uint64
		next := "/api/v1/rounds?limit=2"
		for pages := 0; next != ""; pages++ {
			if pages > 5 {
				t.Fatal("pagination does not end")
			}
			resp, err := http.Get(e.url + next)
			if err != nil {
				t.Fatal(err)
			}
			var out []forecast.RoundJSON
			decodeJSON(t, resp, &out)
			for _, r := range out {
				seen = append(seen, r.ID)
			}
			next = ""
			if l := resp.Header.Get("Link"); l != "" {
				next = strings.TrimPrefix(strings.Split(l, ">")[0], "<")
			}
		}
		if fmt.Sprint(seen) != "[5 4 3 2 1]" {
			t.Errorf("pages visited rounds %v", seen)
		}
	})
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", resp.Request.URL, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", resp.Request.URL, err)
	}
}

// The market page states who resolved the market: the oracle's verdict,
// votes and evidence when it ran, the upstream source otherwise.
func TestMarketPageOracle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ms := seedMarkets(t, db, 2, time.Now().Add(48*time.Hour))
		res := &arena.OracleResolution{MarketID: ms[0].ID, Policy: arena.DefaultOraclePolicy,
			Evidence: arena.EvidencePacket{Question: ms[0].Question, Sources: []arena.EvidenceSource{{Title: "Official report", URL: "https://example.org/report"}}},
			Verdict: arena.OracleVerdict{Architecture: "majority", Decision: arena.OracleYes, Rule: "majority", Unanimous: true, Composite: 1.9,
				Round1: []arena.OracleVote{{Agent: "judge-a", Round: 1, Decision: arena.OracleYes, Confidence: 0.95, Reasoning: "the report says so"}}}}
		if err := db.SaveOracleResolution(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Oracle: &oracle.Service{Store: db}}).Handler())
		defer hs.Close()
		var v view.MarketPageJSON
		resp, err := http.Get(fmt.Sprintf("%s/api/v1/pages/markets/%d", hs.URL, ms[0].ID))
		if err != nil {
			t.Fatal(err)
		}
		decodeJSON(t, resp, &v)
		if len(v.Oracle) != 1 || v.Oracle[0].Final != arena.OracleYes || v.Market.Resolution == nil || *v.Market.Resolution != arena.Yes {
			t.Fatalf("market page JSON: %+v", v)
		}
		resp, err = http.Get(fmt.Sprintf("%s/markets/%d", hs.URL, ms[0].ID))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"oracle resolution #1: auto", "judge-a", "the report says so", "Official report"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("market page lacks %q", want)
			}
		}
		resp, err = http.Get(fmt.Sprintf("%s/api/v1/pages/markets/%d", hs.URL, ms[1].ID))
		if err != nil {
			t.Fatal(err)
		}
		var u view.MarketPageJSON
		decodeJSON(t, resp, &u)
		if u.Oracle == nil || len(u.Oracle) != 0 {
			t.Errorf("market without oracle runs: %+v", u.Oracle)
		}
	})
}

// The home page lists the latest oracle resolutions, newest first, each
// linked to its market's oracle record, escalations marked.
func TestHomeRecentOracle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms := seedMarkets(t, db, 2, time.Now().Add(48*time.Hour))
		for i, v := range []arena.OracleVerdict{
			{Architecture: "majority", Decision: arena.OracleYes, Rule: "majority", Unanimous: true, Composite: 1.9},
			{Architecture: "weighted", Decision: arena.OracleNo, Rule: "majority", Composite: 0.4, Escalate: true, Reasons: []string{"low composite"}},
		} {
			res := &arena.OracleResolution{MarketID: ms[i].ID, Policy: arena.DefaultOraclePolicy, Evidence: arena.EvidencePacket{Question: ms[i].Question}, Verdict: v}
			if err := db.SaveOracleResolution(ctx, res); err != nil {
				t.Fatal(err)
			}
		}
		hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Oracle: &oracle.Service{Store: db}}).Handler())
		defer hs.Close()
		resp, err := http.Get(hs.URL + "/api/v1/pages/home")
		if err != nil {
			t.Fatal(err)
		}
		var v view.HomeJSON
		decodeJSON(t, resp, &v)
		if !v.HasOracle || len(v.Oracle) != 2 || v.Oracle[0].MarketID != ms[1].ID || v.Oracle[0].Status != arena.OracleEscalated ||
			v.Oracle[0].Final != "" || v.Oracle[1].Final != string(arena.OracleYes) || v.Oracle[1].Architecture != "majority" {
			t.Fatalf("home oracle block: %+v", v.Oracle)
		}
		resp, err = http.Get(hs.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"Recent oracle resolutions", fmt.Sprintf(`href="/oracle/%d"`, ms[1].ID), "escalated to a person", "automatic", ms[0].Question} {
			if !strings.Contains(string(b), want) {
				t.Errorf("home page lacks %q", want)
			}
		}
	})
}
