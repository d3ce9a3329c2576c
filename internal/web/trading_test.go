package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// Tests of the trading track's HTTP API against a real store and a cohort
// run by the real engine.

type trEnv struct {
	t    *testing.T
	url  string
	db   *store.DB
	c    *arena.Cohort
	m1   *arena.Market
	eng  *trading.Engine
	rows map[string]int64 // decision id by agent
}

var trWeek = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// trSetup runs a two-agent cohort: a bets $1000 on YES at 0.40 (2500
// shares), b bets $500 on NO at 0.60 (833.333333 shares); the market then
// resolves YES and is settled, with a snapshot before and after.
func trSetup(t *testing.T, db *store.DB) *trEnv {
	ctx := context.Background()
	m1 := &arena.Market{Source: arena.SourceSim, SourceID: "m1", Kind: arena.KindMarket, Question: "Will m1 happen?", Category: "politics",
		Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6},
		Volume: 1000, CloseTime: trWeek.AddDate(0, 0, 3), Status: arena.StatusOpen}
	if _, err := db.SaveMarkets(ctx, []*arena.Market{m1}); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lu := []arena.LineupEntry{{AgentID: "a", Name: "Agent A", Kind: "llm", Provider: "p", Model: "m/a", InputMicrosPerMtok: 2_500_000, OutputMicrosPerMtok: 10_000_000},
		{AgentID: "b", Name: "Agent B", Kind: "llm", Provider: "p", Model: "m/b"}}
	now := trWeek.Add(5 * time.Minute)
	eng := &trading.Engine{Store: db, Lineup: lu, Logger: quiet, Now: func() time.Time { return now }}
	c, _, err := eng.StartCohort(ctx, trWeek)
	if err != nil {
		t.Fatal(err)
	}
	bet := func(side string, amount arena.Micros) trading.Decider {
		return trading.DeciderFunc(func(context.Context, trading.Snapshot) (trading.Decision, error) {
			return trading.Decision{Action: trading.Action{Kind: trading.ActionBet, Reasoning: "because",
				Bets: []trading.Bet{{MarketID: m1.ID, Side: side, Amount: amount}}},
				SystemPrompt: "sys", UserPrompt: "user " + side, RawResponses: []string{"raw " + side}, TokensIn: 1000, TokensOut: 100, Cost: 3500,
				Latency: 1500 * time.Millisecond}, nil
		})
	}
	if _, err := eng.Run(ctx, c.ID, now, map[string]trading.Decider{"a": bet("YES", 1000*arena.Dollar), "b": bet("NO", 500*arena.Dollar)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Snapshot(ctx, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, m1.ID, arena.Yes, trWeek.AddDate(0, 0, 3)); err != nil {
		t.Fatal(err)
	}
	later := trWeek.AddDate(0, 0, 3).Add(time.Hour)
	now = later
	if _, err := eng.Settle(ctx, later, trading.PolicyRefund); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Snapshot(ctx, later); err != nil {
		t.Fatal(err)
	}
	srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Trading: eng})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	rows := map[string]int64{}
	ds, _ := db.Decisions(ctx, c.ID)
	for _, d := range ds {
		rows[d.AgentID] = d.ID
	}
	return &trEnv{t: t, url: hs.URL, db: db, c: c, m1: m1, eng: eng, rows: rows}
}

// get fetches path, checks the status and decodes the body into v.
func (e *trEnv) get(path string, status int, v any) {
	e.t.Helper()
	resp, err := http.Get(e.url + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		e.t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, b, status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Fatalf("GET %s: content type %q", path, ct)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			e.t.Fatalf("GET %s: %v in %s", path, err, b)
		}
	}
}

func TestTradingAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := trSetup(t, db)
		id := e.c.ID

		var list []map[string]any
		e.get("/api/v1/cohorts", 200, &list)
		if len(list) != 1 || list[0]["id"] != float64(id) || list[0]["week_start"] != "2026-03-01T00:00:00Z" ||
			list[0]["status"] != "active" || list[0]["agents"] != float64(2) || list[0]["initial_cash"] != float64(10000) {
			t.Fatalf("list %v", list)
		}
		e.get("/api/v1/cohorts?status=completed", 200, &list)
		if len(list) != 0 {
			t.Fatalf("completed %v", list)
		}
		e.get("/api/v1/cohorts?offset=1", 200, &list)
		if len(list) != 0 {
			t.Fatalf("offset %v", list)
		}

		// a: 2500 shares paid $1 → cash 9000 + 2500; b's NO lost: 9500.
		var detail struct {
			trading.CohortJSON
			Lineup    []map[string]any `json:"lineup"`
			Decisions []map[string]any `json:"decisions"`
		}
		e.get(fmt.Sprintf("/api/v1/cohorts/%d", id), 200, &detail)
		if len(detail.Agents) != 2 || detail.Status != "active" || !detail.WeekStart.Equal(trWeek) {
			t.Fatalf("cohort %+v", detail.CohortJSON)
		}
		a, b := detail.Agents[0], detail.Agents[1]
		if a.Agent != "a" || a.Name != "Agent A" || a.Cash != arena.Dollars(11_500*arena.Dollar) || a.PositionsValue != 0 ||
			a.TotalValue != arena.Dollars(11_500*arena.Dollar) || a.PnL != arena.Dollars(1_500*arena.Dollar) || a.PnLPct != 15 ||
			a.Brier == nil || math.Abs(*a.Brier-0.36) > 1e-12 || a.ResolvedBets != 1 || a.OpenPositions != 0 || a.Bankrupt {
			t.Fatalf("a %+v", a)
		}
		if b.Agent != "b" || b.Cash != arena.Dollars(9_500*arena.Dollar) || b.PnL != arena.Dollars(-500*arena.Dollar) || b.PnLPct != -5 ||
			b.Brier == nil || math.Abs(*b.Brier-0.04) > 1e-12 {
			t.Fatalf("b %+v", b)
		}
		if len(detail.Lineup) != 2 || detail.Lineup[0]["model"] != "m/a" || detail.Lineup[0]["input_usd_per_mtok"] != 2.5 ||
			len(detail.Decisions) != 2 || detail.Decisions[0]["action"] != "BET" || detail.Decisions[0]["cost"] != 0.0035 {
			t.Fatalf("lineup %v decisions %v", detail.Lineup, detail.Decisions)
		}

		var d web.DecisionJSON
		e.get(fmt.Sprintf("/api/v1/decisions/%d", e.rows["b"]), 200, &d)
		var act trading.Action
		if err := json.Unmarshal(d.Action, &act); err != nil {
			t.Fatal(err)
		}
		var ex []trading.Execution
		if err := json.Unmarshal(d.Executions, &ex); err != nil {
			t.Fatal(err)
		}
		if d.Agent != "b" || d.CohortID != id || d.Status != "done" || d.SystemPrompt != "sys" || d.UserPrompt != "user NO" ||
			len(d.RawResponses) != 1 || d.RawResponses[0] != "raw NO" || act.Kind != trading.ActionBet || act.Bets[0].Side != "NO" ||
			len(ex) != 1 || !ex[0].OK || ex[0].Shares != 833_333_333 || d.TokensIn != 1000 || d.TokensOut != 100 ||
			d.Cost != 3500 || d.LatencyMS != 1500 || d.FinishedAt == nil {
			t.Fatalf("decision %+v", d)
		}

		var curves []view.CurveJSON
		e.get(fmt.Sprintf("/api/v1/cohorts/%d/snapshots?agent=a", id), 200, &curves)
		if len(curves) != 1 || len(curves[0].Points) != 2 {
			t.Fatalf("curves %+v", curves)
		}
		p0, p1 := curves[0].Points[0], curves[0].Points[1]
		if !p0.At.Equal(trWeek) || p0.TotalValue != arena.Dollars(10_000*arena.Dollar) || p0.Brier != nil ||
			p1.TotalValue != arena.Dollars(11_500*arena.Dollar) || p1.Brier == nil || p1.ResolvedBets != 1 {
			t.Fatalf("points %+v", curves[0].Points)
		}
		e.get(fmt.Sprintf("/api/v1/cohorts/%d/snapshots?step=1w", id), 200, &curves)
		if len(curves) != 2 || len(curves[0].Points) != 1 || !curves[0].Points[0].At.Equal(p1.At) {
			t.Fatalf("weekly curves %+v", curves)
		}

		var lb trading.LeaderboardJSON
		e.get("/api/v1/leaderboard?track=trading", 200, &lb)
		if lb.Track != "trading" || lb.Sort != "return" || len(lb.Rows) != 2 {
			t.Fatalf("leaderboard %+v", lb)
		}
		r0, r1 := lb.Rows[0], lb.Rows[1]
		// Both bets paid 0.40 and 0.60 for their sides: market Brier 0.36 each.
		if r0.Rank != 1 || r0.Agent != "a" || r0.MeanReturnPct != 15 || r0.TotalPnL != arena.Dollars(1_500*arena.Dollar) ||
			r0.Brier == nil || math.Abs(*r0.Brier-0.36) > 1e-12 || math.Abs(*r0.MarketBrier-0.36) > 1e-12 || math.Abs(*r0.SkillVsMarket) > 1e-12 ||
			r1.Agent != "b" || math.Abs(*r1.BrierSkill-(1-0.04/0.25)) > 1e-12 || math.Abs(*r1.SkillVsMarket-(1-0.04/0.36)) > 1e-12 {
			t.Fatalf("rows %+v %+v", r0, r1)
		}
		e.get("/api/v1/leaderboard?track=trading&sort=brier", 200, &lb)
		if lb.Rows[0].Agent != "b" {
			t.Fatalf("by brier %+v", lb.Rows)
		}
		// Each agent's one decision cost $0.0035.
		for _, r := range lb.Rows {
			if r.Decisions != 1 || r.Cost == nil || *r.Cost != arena.Dollars(3500) {
				t.Fatalf("cost of %s: %d decisions, %v", r.Agent, r.Decisions, r.Cost)
			}
		}
		// The window keeps cohorts by week start: three days in, the last
		// 7 days hold the cohort; thirty days later only "all" does.
		e.get("/api/v1/leaderboard?track=trading&window=7d", 200, &lb)
		if len(lb.Rows) != 2 {
			t.Fatalf("7d window three days in: %+v", lb.Rows)
		}
		e.eng.Now = func() time.Time { return trWeek.AddDate(0, 0, 30) }
		e.get("/api/v1/leaderboard?track=trading&window=7d", 200, &lb)
		if len(lb.Rows) != 0 {
			t.Fatalf("7d window thirty days on: %+v", lb.Rows)
		}
		e.get("/api/v1/leaderboard?track=trading&window=all", 200, &lb)
		if len(lb.Rows) != 2 {
			t.Fatalf("all window: %+v", lb.Rows)
		}
		// The leaderboard page orders its trading table by trading_sort and
		// links the other order, keeping the filters.
		var page view.LeaderboardPageJSON
		e.get("/api/v1/pages/leaderboard?trading_sort=brier&window=7d", 200, &page)
		if page.Trading == nil || page.Trading.Sort != "brier" || len(page.Trading.Rows) != 0 {
			t.Fatalf("page trading table by Brier, 7 days: %+v", page.Trading)
		}
		e.get("/api/v1/pages/leaderboard?trading_sort=brier", 200, &page)
		if page.Trading.Sort != "brier" || page.Trading.Rows[0].Agent != "b" {
			t.Fatalf("page trading table by Brier: %+v", page.Trading)
		}
		resp, err := http.Get(e.url + "/leaderboard?trading_sort=brier&window=7d")
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(html), `href="/leaderboard?trading_sort=return&amp;window=7d">by mean return</a>`) ||
			!strings.Contains(string(html), `name="trading_sort" value="brier"`) {
			t.Fatalf("leaderboard page lacks the trading order link or keeps no order in its form:\n%s", html)
		}

		// Errors are JSON with stable kinds.
		for _, c := range []struct {
			path   string
			status int
			msg    string
		}{
			{"/api/v1/cohorts?status=open", 400, "want active or completed"},
			{"/api/v1/cohorts?limit=0", 400, "limit"},
			{"/api/v1/cohorts/abc", 400, "positive integer"},
			{"/api/v1/cohorts/999", 404, "cohort 999 not found"},
			{"/api/v1/cohorts/999/snapshots", 404, "cohort 999 not found"},
			{fmt.Sprintf("/api/v1/cohorts/%d/snapshots?agent=zed", id), 404, `agent "zed" is not in cohort`},
			{fmt.Sprintf("/api/v1/cohorts/%d/snapshots?step=2h", id), 400, "want 10m, 1h, 1d or 1w"},
			{"/api/v1/decisions/999", 404, "decision 999 not found"},
			{"/api/v1/decisions/-1", 400, "positive integer"},
			{"/api/v1/leaderboard?track=trading&sort=pnl", 400, "want return or brier"},
			{"/api/v1/leaderboard?track=trading&window=1y", 400, "want 7d, 30d, 90d or all"},
			{"/api/v1/leaderboard?track=trading&category=politics", 400, "filter the forecast track"},
			{"/api/v1/pages/leaderboard?trading_sort=pnl", 400, "want return or brier"},
		} {
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			e.get(c.path, c.status, &body)
			if !strings.Contains(body.Error.Message, c.msg) {
				t.Errorf("%s: %+v, want %q", c.path, body, c.msg)
			}
		}
	})
}

// The cohorts' cursor: 0 starts at the newest week like no cursor; a
// cursor the API produced stays good when its cohort left the list since
// (completed while a client pages the active ones); any other answers
// 400 saying what a cursor is.
func TestCohortsCursor(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		eng := &trading.Engine{Store: db, Logger: quiet, Lineup: []arena.LineupEntry{{AgentID: "a", Name: "A", Kind: "sim"}}}
		var weeks []time.Time
		for w := range 3 {
			week := arena.WeekStart(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*w))
			if _, _, err := eng.StartCohort(ctx, week); err != nil {
				t.Fatal(err)
			}
			weeks = append(weeks, week)
		}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Trading: eng}).Handler()
		get := func(path string) (*httptest.ResponseRecorder, []int64) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			var cs []trading.CohortSummaryJSON
			json.Unmarshal(rec.Body.Bytes(), &cs)
			var ids []int64
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			return rec, ids
		}
		if rec, ids := get("/api/v1/cohorts?cursor=0"); rec.Code != 200 || len(ids) != 3 {
			t.Fatalf("cursor=0: %d %s", rec.Code, rec.Body)
		}
		rec, first := get("/api/v1/cohorts?status=active&limit=2")
		next := strings.TrimSuffix(strings.TrimPrefix(rec.Header().Get("Link"), "<"), `>; rel="next"`)
		if rec.Code != 200 || len(first) != 2 || next == "" {
			t.Fatalf("first page of the active cohorts: %d %v %q", rec.Code, first, rec.Header().Get("Link"))
		}
		// The two older cohorts complete before the client reads on.
		if n, err := db.CompleteCohorts(ctx, weeks[2], time.Now()); err != nil || n != 2 {
			t.Fatalf("completed %d cohorts: %v", n, err)
		}
		if rec, ids := get(next); rec.Code != 200 || len(ids) != 0 {
			t.Errorf("the next page after the cursor's cohort completed: %d %s, want 200 and no cohort", rec.Code, rec.Body)
		}
		if rec, ids := get(strings.Replace(next, "status=active", "status=completed", 1)); rec.Code != 200 || len(ids) != 1 || ids[0] != first[1]-1 {
			t.Errorf("the completed cohorts after the cursor: %d %s, want cohort %d", rec.Code, rec.Body, first[1]-1)
		}
		if rec, _ := get("/api/v1/cohorts?cursor=999"); rec.Code != 400 || !strings.Contains(rec.Body.String(), "Link header") {
			t.Errorf("a cursor no cohort has: %d %s", rec.Code, rec.Body)
		}
	})
}
