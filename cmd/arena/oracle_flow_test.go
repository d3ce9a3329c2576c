package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
)

// An ambiguous market in the trading track: the panel resolves one market
// by itself (unanimous, confident) and escalates the other (split); an
// arbiter decides it over the API, re-resolves it with a reason before
// settlement, and the cash follows, as computed by hand.
func TestOracleTradingFlow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) { oracleTradingFlow(t, db) })
}

func oracleTradingFlow(t *testing.T, db *store.DB) {
	ctx := context.Background()
	week := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	run := week.Add(5 * time.Minute)
	mk := func(id string, yes float64) *arena.Market {
		return &arena.Market{Source: arena.SourceSim, SourceID: id, Kind: arena.KindMarket, Question: "Will " + id + " happen?",
			Criteria: "Resolves Yes if " + id + " happens.", Category: "politics", Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
			Prices: map[string]float64{arena.Yes: yes, arena.No: 1 - yes}, Volume: 10, CloseTime: week.AddDate(0, 0, 3), Status: arena.StatusOpen}
	}
	unan, split := mk("unan", 0.3), mk("split", 0.4)
	if _, err := db.SaveMarkets(ctx, []*arena.Market{unan, split}); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eng := &trading.Engine{Store: db, Lineup: []arena.LineupEntry{{AgentID: "a", Name: "A", Kind: "llm", Provider: "p", Model: "m/a"}},
		ModelTimeout: time.Minute, Now: func() time.Time { return run }, Logger: quiet}
	c, _, err := eng.StartCohort(ctx, week)
	if err != nil {
		t.Fatal(err)
	}
	// NO $700 on unan at 0.70 (1000 shares), YES $400 on split at 0.40 (1000 shares).
	bets := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: unan.ID, Side: "NO", Amount: 700 * arena.Dollar}, {MarketID: split.ID, Side: "YES", Amount: 400 * arena.Dollar}}}
	dec := trading.DeciderFunc(func(context.Context, trading.Snapshot) (trading.Decision, error) {
		return trading.Decision{Action: bets}, nil
	})
	if _, err := eng.Run(ctx, c.ID, run, map[string]trading.Decider{"a": dec}); err != nil {
		t.Fatal(err)
	}
	cash := func() (arena.Micros, arena.Micros) {
		ps, err := db.Portfolios(ctx, c.ID)
		if err != nil || len(ps) != 1 {
			t.Fatal(err)
		}
		return ps[0].Cash, ps[0].Realized
	}
	if c, _ := cash(); c != 8900*arena.Dollar {
		t.Fatalf("cash after bets %d", c)
	}
	// Upstream: resolved, winner unknown.
	for _, m := range []*arena.Market{unan, split} {
		m.Status, m.Ambiguous, m.Prices = arena.StatusResolved, true, nil
	}
	if _, err := db.SaveMarkets(ctx, []*arena.Market{unan, split}); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.New(t)
	answers := map[string]map[string]string{ // model → question → answer
		"alpha": {"unan": `{"decision":"YES","confidence":0.9,"reasoning":"reported"}`, "split": `{"decision":"YES","confidence":0.9,"reasoning":"reported"}`},
		"beta":  {"unan": `{"decision":"YES","confidence":0.95,"reasoning":"reported"}`, "split": `{"decision":"NO","confidence":0.8,"reasoning":"not met"}`},
		"gamma": {"unan": `{"decision":"YES","confidence":0.85,"reasoning":"reported"}`, "split": `{"decision":"YES","confidence":0.7,"reasoning":"likely"}`},
	}
	var resolvers []*oracle.Resolver
	for _, model := range []string{"alpha", "beta", "gamma"} {
		srv.Handle(model, func(req llmtest.ChatRequest) llmtest.Reply {
			for q, a := range answers[model] {
				if strings.Contains(req.Messages[1].Text(), "Will "+q+" happen?") {
					return llmtest.OK(a, 100, 10)
				}
			}
			return llmtest.Fail(400, "unknown question")
		})
		cl, err := llm.NewClient(llm.ModelSpec{ID: model, Provider: "local", Model: model, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second)}, "", llm.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		resolvers = append(resolvers, &oracle.Resolver{ID: model, Completer: cl})
	}
	svc := &oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Workers: 3}, Policy: arena.DefaultOraclePolicy, Logger: quiet,
		Now: func() time.Time { return run.Add(time.Hour) }}
	n, err := svc.RunPending(ctx)
	if err != nil || n != 2 {
		t.Fatalf("oracle run: %d %v", n, err)
	}
	if n, _ := svc.RunPending(ctx); n != 0 || len(srv.Requests("")) != 6 {
		t.Fatalf("second run resolved %d markets, %d requests", n, len(srv.Requests("")))
	}
	if m, _ := db.Market(ctx, unan.ID); m.Resolution != arena.Yes {
		t.Fatalf("unanimous market: %+v", m)
	}
	if m, _ := db.Market(ctx, split.ID); m.Resolution != "" {
		t.Fatalf("escalated market resolved: %+v", m)
	}
	// Settlement under the oracle policy: unan settles (NO loses: −$700),
	// split waits for the arbiter.
	sr, err := eng.Settle(ctx, run.Add(2*time.Hour), trading.PolicyOracle)
	if err != nil || len(sr.Markets) != 1 || sr.Markets[0].MarketID != unan.ID || len(sr.AwaitingOracle) != 1 || sr.AwaitingOracle[0] != split.ID {
		t.Fatalf("settle %+v %v", sr, err)
	}
	if c, r := cash(); c != 8900*arena.Dollar || r != -700*arena.Dollar {
		t.Fatalf("after unan: cash %d realized %d", c, r)
	}

	api := httptest.NewServer(web.Build(web.Parts{Markets: db, DB: db, AdminToken: "tok", Logger: quiet, Oracle: db}).Handler())
	defer api.Close()
	call := func(method, path, token, body string) (int, string) {
		req, _ := http.NewRequest(method, api.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := call("GET", "/api/v1/oracle/queue", "", "")
	var queue []arena.OracleResolution
	if json.Unmarshal([]byte(body), &queue); code != 200 || len(queue) != 1 || queue[0].MarketID != split.ID {
		t.Fatalf("queue %d %s", code, body)
	}
	q0 := queue[0].Verdict
	if q0.Decision != arena.OracleYes || q0.Rule != oracle.RuleMajority || q0.Unanimous || fmt.Sprintf("%.4f", q0.Composite) != "0.8000" ||
		strings.Join(q0.Reasons, ",") != "split,not_unanimous,low_score" || len(q0.Round1) != 3 || q0.Round1[1].Raw == "" {
		t.Fatalf("escalated verdict %+v", q0)
	}
	decide := fmt.Sprintf("/api/v1/admin/oracle/queue/%d", split.ID)
	for _, c := range []struct {
		path, token, body string
		want              int
	}{
		{decide, "", `{"decision":"YES","arbiter":"ann","reason":"r"}`, 401},
		{decide, "wrong", `{"decision":"YES","arbiter":"ann","reason":"r"}`, 401},
		{fmt.Sprintf("/api/v1/admin/oracle/queue/%d", unan.ID), "tok", `{"decision":"NO","arbiter":"ann","reason":"r"}`, 409},
		{decide, "tok", `{"decision":"MAYBE","arbiter":"ann"}`, 400},
		{decide, "tok", `{"decision":"YES"}`, 400},
		{decide, "tok", `{"decision":"YES","arbiter":"ann","extra":1}`, 400},
		{decide, "tok", `{"decision":"YES","arbiter":"ann","reason":"the source confirms it"}`, 200},
		{decide, "tok", `{"decision":"NO","arbiter":"ann","reason":"again"}`, 409},
		{decide, "tok", `{"decision":"NO","arbiter":"bob","re_resolve":true}`, 400},
		{decide, "tok", `{"decision":"NO","arbiter":"bob","reason":"the source retracted","re_resolve":true}`, 200},
	} {
		if code, body := call("POST", c.path, c.token, c.body); code != c.want {
			t.Errorf("POST %s %s: %d %s, want %d", c.path, c.body, code, body, c.want)
		}
	}
	if m, _ := db.Market(ctx, split.ID); m.Resolution != arena.No {
		t.Fatalf("re-resolved market %+v", m)
	}
	code, body = call("GET", fmt.Sprintf("/api/v1/oracle/resolutions/%d", split.ID), "", "")
	var hist web.OracleResolutionsJSON
	if json.Unmarshal([]byte(body), &hist); code != 200 || len(hist.Resolutions) != 2 || hist.Resolutions[0].Status != arena.OracleDecided ||
		hist.Resolutions[0].Final != arena.OracleYes || hist.Resolutions[0].Arbiter != "ann" || hist.Resolutions[1].Final != arena.OracleNo ||
		hist.Resolutions[1].Reason != "the source retracted" || hist.Resolutions[1].Policy != arena.DefaultOraclePolicy || hist.Resolutions[1].Evidence.Question != "Will split happen?" {
		t.Fatalf("resolutions %d %s", code, body)
	}
	if code, _ := call("GET", "/api/v1/oracle/queue", "", ""); code != 200 {
		t.Fatal(code)
	}
	// Settled at the final decision (NO): the YES position loses its $400.
	sr, err = eng.Settle(ctx, run.Add(3*time.Hour), trading.PolicyOracle)
	if err != nil || len(sr.Markets) != 1 || sr.Markets[0].Resolution != arena.No {
		t.Fatalf("settle %+v %v", sr, err)
	}
	if c, r := cash(); c != 8900*arena.Dollar || r != -1100*arena.Dollar {
		t.Fatalf("after split: cash %d realized %d", c, r)
	}
	// Re-resolved after settlement: the YES position now wins 1000 shares
	// ($1000 instead of $0): cash 9900, realized −700 + 600 = −100.
	if code, body := call("POST", decide, "tok", `{"decision":"YES","arbiter":"bob","reason":"changed again","re_resolve":true}`); code != 200 {
		t.Fatalf("re-resolution after settlement: %d %s", code, body)
	}
	if c, r := cash(); c != 9900*arena.Dollar || r != -100*arena.Dollar {
		t.Fatalf("after re-resolution to YES: cash %d realized %d", c, r)
	}
	// VOID refunds the $400 cost basis instead: cash 9300, realized −700.
	if code, body := call("POST", decide, "tok", `{"decision":"VOID","arbiter":"bob","reason":"market annulled","re_resolve":true}`); code != 200 {
		t.Fatalf("re-resolution to VOID: %d %s", code, body)
	}
	if c, r := cash(); c != 9300*arena.Dollar || r != -700*arena.Dollar {
		t.Fatalf("after re-resolution to VOID: cash %d realized %d", c, r)
	}
	sts, _ := db.Settlements(ctx)
	ps, _ := db.Portfolios(ctx, c.ID)
	pos, _ := db.PositionsOf(ctx, ps[0].ID)
	trades, _ := db.Trades(ctx, ps[0].ID)
	var kinds []string
	for _, tr := range trades {
		kinds = append(kinds, fmt.Sprintf("%s:%d", tr.Kind, tr.Amount/arena.Dollar))
	}
	if len(sts) != 2 || sts[1].Resolution != arena.Void || len(pos) != 2 || pos[1].Status != arena.PositionCancelled ||
		strings.Join(kinds, " ") != "BET:700 BET:400 SETTLE:0 SETTLE:0 RESETTLE:1000 RESETTLE:-600" {
		t.Fatalf("settlements %+v positions %+v trades %v", sts, pos, kinds)
	}
	if m, _ := db.Market(ctx, split.ID); m.Resolution != arena.Void {
		t.Fatalf("market %+v", m)
	}
}
