package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/tlog/tlogtest"
)

// An ambiguous market in the trading track: the panel resolves one market
// by itself (unanimous, confident) and escalates the other (split); an
// arbiter decides it over the API, re-resolves it with a reason before
// settlement, and the cash follows, as computed by hand.
func TestOracleTradingFlow(t *testing.T) {
	t.Parallel()
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
	resolvers := scriptedPanel(t, srv, answers)
	svc := app.WireOracle(&oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Workers: 3}, Policy: arena.DefaultOraclePolicy, Logger: quiet,
		Now: func() time.Time { return run.Add(time.Hour) }})
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

	api := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, AdminToken: "tok", Logger: quiet, Oracle: svc}).Handler())
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
		{decide, "tok", `{"decision":"NO","arbiter":"bob","reason":"the source retracted","re_resolve":true,"revises":1}`, 200},
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
	if code, body := call("POST", decide, "tok", `{"decision":"YES","arbiter":"bob","reason":"changed again","re_resolve":true,"revises":2}`); code != 200 {
		t.Fatalf("re-resolution after settlement: %d %s", code, body)
	}
	if c, r := cash(); c != 9900*arena.Dollar || r != -100*arena.Dollar {
		t.Fatalf("after re-resolution to YES: cash %d realized %d", c, r)
	}
	// VOID refunds the $400 cost basis instead: cash 9300, realized −700.
	if code, body := call("POST", decide, "tok", `{"decision":"VOID","arbiter":"bob","reason":"market annulled","re_resolve":true,"revises":3}`); code != 200 {
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

// scriptedPanel is three resolvers (alpha, beta, gamma) on srv, each
// answering the question "Will Q happen?" with answers[model][Q].
func scriptedPanel(t *testing.T, srv *llmtest.Server, answers map[string]map[string]string) []*oracle.Resolver {
	t.Helper()
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
		cl, err := llm.NewClient(llm.ModelSpec{ID: model, Provider: "local", Model: model, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second)}, "",
			llm.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		resolvers = append(resolvers, &oracle.Resolver{ID: model, Completer: cl})
	}
	return resolvers
}

// An ambiguous market in the forecast track, end to end: the panel
// resolves one market by itself and escalates another, an arbiter decides
// it over the API, the round is scored, and two re-resolutions over the
// API (YES → NO, then NO → VOID) re-score it exactly as computed by hand;
// the export, log included, still verifies.
func TestOracleForecastRescoreFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) { oracleForecastRescoreFlow(t, db) })
}

func oracleForecastRescoreFlow(t *testing.T, db *store.DB) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	lg := &tlog.Log{Store: db, Key: key, Logger: quiet}
	fsvc := &rounds.Service{Store: db, Now: clock, Logger: quiet, Grace: 6 * time.Hour}
	var ms []*arena.Market
	for _, id := range []string{"fr0", "fr1", "fr2"} {
		ms = append(ms, &arena.Market{Source: "test", SourceID: id, Kind: arena.KindMarket, Question: "Will " + id + " happen?", Category: "politics",
			EventID: "ev-" + id, Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5},
			Volume: 100_000, Liquidity: 5000, CloseTime: t0.Add(5 * 24 * time.Hour), Status: arena.StatusOpen})
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	r, err := fsvc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: []int64{ms[0].ID, ms[1].ID, ms[2].ID},
		CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// Benchmarks 0.50, 0.40, 0.70 at the commit deadline.
	for i, p := range []float64{0.5, 0.4, 0.7} {
		ms[i].History = []arena.PricePoint{{Outcome: arena.Yes, Time: r.CommitDeadline, Price: p, Source: arena.PriceCLOBMid}}
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	preds := map[string][]uint16{"alice": {8000, 3000, 6000}, "bob": {2000, 9000, 5000}, "carol": {5000, 5000, 5000}}
	salts := map[string]common.Hash{}
	for _, name := range []string{"alice", "bob", "carol"} {
		k := fcKey(name)
		salts[name] = crypto.Keccak256Hash([]byte("salt"), []byte(name))
		c := forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds[name], salts[name]), Agent: k.Address(),
			Deadline: uint64(now.Add(time.Hour).Unix())}
		sig, err := k.SignCommit(fsvc.Domain, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fsvc.Commit(ctx, r.ID, forecast.CommitRequest{Agent: c.Agent.Hex(), CommitHash: c.CommitHash.Hex(), Deadline: c.Deadline,
			Signature: forecast.EncodeSignature(sig)}); err != nil {
			t.Fatal(err)
		}
	}
	now = r.CommitDeadline.Add(forecast.BenchmarkTolerance)
	if _, err := fsvc.CaptureBenchmarks(ctx); err != nil {
		t.Fatal(err)
	}
	now = r.RevealStart
	for _, name := range []string{"alice", "bob"} { // carol never reveals: a forfeit
		k := fcKey(name)
		m := forecast.Reveal{RoundID: r.ID, Predictions: preds[name], Salt: salts[name], Agent: k.Address(), Nonce: 1, Deadline: uint64(now.Add(time.Hour).Unix())}
		sig, err := k.SignReveal(fsvc.Domain, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fsvc.Reveal(ctx, r.ID, forecast.RevealRequest{Agent: m.Agent.Hex(), Predictions: m.Predictions, Salt: m.Salt.Hex(), Nonce: 1,
			Deadline: m.Deadline, Signature: forecast.EncodeSignature(sig)}); err != nil {
			t.Fatal(err)
		}
	}
	now = r.RevealDeadline.Add(time.Minute)
	// fr0 resolves YES upstream; fr1 and fr2 resolve with no winner.
	if _, err := fsvc.ResolveMarket(ctx, ms[0].ID, arena.Yes); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		m.Status, m.Ambiguous, m.Prices, m.History = arena.StatusResolved, true, nil, nil
	}
	if _, err := db.SaveMarkets(ctx, ms[1:]); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.New(t)
	answers := map[string]map[string]string{ // model → question → answer
		"alpha": {"fr1": `{"decision":"YES","confidence":0.9,"reasoning":"reported"}`, "fr2": `{"decision":"NO","confidence":0.9,"reasoning":"not met"}`},
		"beta":  {"fr1": `{"decision":"YES","confidence":0.95,"reasoning":"reported"}`, "fr2": `{"decision":"YES","confidence":0.6,"reasoning":"maybe"}`},
		"gamma": {"fr1": `{"decision":"YES","confidence":0.85,"reasoning":"reported"}`, "fr2": `{"decision":"NO","confidence":0.7,"reasoning":"unclear"}`},
	}
	resolvers := scriptedPanel(t, srv, answers)
	osvc := app.WireOracle(&oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Workers: 3}, Policy: arena.DefaultOraclePolicy, Logger: quiet, Now: clock})
	if n, err := osvc.RunPending(ctx); err != nil || n != 2 {
		t.Fatalf("oracle run: %d %v", n, err)
	}
	if n, err := fsvc.TriggerDue(ctx); err != nil || n != 0 {
		t.Fatalf("trigger while fr2 is escalated: %d %v", n, err)
	}

	api := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, AdminToken: "tok", Logger: quiet, Forecast: fsvc, Oracle: osvc}).Handler())
	defer api.Close()
	post := func(market int64, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/admin/oracle/queue/%d", api.URL, market), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", body, resp.StatusCode, b)
		}
	}
	post(ms[2].ID, `{"decision":"NO","arbiter":"ann","reason":"the official source says no"}`)
	if n, err := fsvc.TriggerDue(ctx); err != nil || n != 1 {
		t.Fatalf("trigger after the decision: %d %v", n, err)
	}
	// scores checks every agent's integer Brier and Alpha (bps²).
	scores := func(stage string, want map[string][2]int64) {
		t.Helper()
		got, err := db.RoundScores(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]arena.RoundScore{}
		for _, s := range got {
			byName[s.Agent] = s
		}
		for name, w := range want {
			agent := name
			if name != forecast.MarketAgent {
				agent = fcKey(name).Address().Hex()
			}
			s := byName[agent]
			if s.BrierBps2 != w[0] || s.AlphaBps2 == nil || *s.AlphaBps2 != w[1] || math.Abs(s.Brier-float64(w[0])/1e8) > 1e-8 {
				t.Errorf("%s: %s Brier %d Alpha %v, want %d and %d", stage, name, s.BrierBps2, s.AlphaBps2, w[0], w[1])
			}
		}
	}
	// Outcomes YES, YES, NO; benchmarks 5000, 4000, 7000 bps. Alice
	// (8000, 3000, 6000): Brier (2000² + 7000² + 6000²)/3 = 29666666,
	// Alpha ((25 − 4) + (36 − 49) + (49 − 36))·10⁶/3 = 7000000. Bob (2000,
	// 9000, 5000): (64 + 1 + 25)·10⁶/3 = 30000000, Alpha ((25 − 64) +
	// (36 − 1) + (49 − 25))·10⁶/3 = 6666666. Carol forfeits: 10⁸ and
	// (110·10⁶ − 3·10⁸)/3 = −63333333. Market: 110·10⁶/3 = 36666666.
	scores("scored", map[string][2]int64{"alice": {29_666_666, 7_000_000}, "bob": {30_000_000, 6_666_666},
		"carol": {100_000_000, -63_333_333}, forecast.MarketAgent: {36_666_666, 0}})

	// fr1 re-resolved NO: outcomes YES, NO, NO. Alice (4 + 9 + 36)·10⁶/3 =
	// 16333333, Alpha (21 + 7 + 13)·10⁶/3 = 13666666; Bob (64 + 81 + 25)·10⁶/3
	// = 56666666, Alpha (−39 − 65 + 24)·10⁶/3 = −26666666; Carol
	// (90·10⁶ − 3·10⁸)/3 = −70000000; market 90·10⁶/3 = 30000000.
	post(ms[1].ID, `{"decision":"NO","arbiter":"bob","reason":"the report was retracted","re_resolve":true,"revises":1}`)
	scores("fr1 re-resolved NO", map[string][2]int64{"alice": {16_333_333, 13_666_666}, "bob": {56_666_666, -26_666_666},
		"carol": {100_000_000, -70_000_000}, forecast.MarketAgent: {30_000_000, 0}})

	// fr2 re-resolved VOID: dropped, fr0 and fr1 remain. Alice (4 + 9)/2 =
	// 6500000, Alpha (21 + 7)/2 = 14000000; Bob (64 + 81)/2 = 72500000,
	// Alpha (−39 − 65)/2 = −52000000; Carol (41·10⁶ − 2·10⁸)/2 = −79500000;
	// market 41·10⁶/2 = 20500000.
	post(ms[2].ID, `{"decision":"VOID","arbiter":"bob","reason":"the question was annulled","re_resolve":true,"revises":1}`)
	scores("fr2 re-resolved VOID", map[string][2]int64{"alice": {6_500_000, 14_000_000}, "bob": {72_500_000, -52_000_000},
		"carol": {100_000_000, -79_500_000}, forecast.MarketAgent: {20_500_000, 0}})

	// The audit trail: which round, why, the totals before.
	resp, err := http.Get(fmt.Sprintf("%s/api/v1/oracle/resolutions/%d", api.URL, ms[1].ID))
	if err != nil {
		t.Fatal(err)
	}
	var hist web.OracleResolutionsJSON
	err = json.NewDecoder(resp.Body).Decode(&hist)
	resp.Body.Close()
	if err != nil || len(hist.Resolutions) != 2 || len(hist.Resolutions[1].Rescored) != 1 {
		t.Fatalf("history %v %+v", err, hist)
	}
	rs := hist.Resolutions[1].Rescored[0]
	prev := map[string]int64{}
	for _, s := range rs.Previous {
		prev[s.Agent] = s.BrierBps2
	}
	if rs.RoundID != r.ID || rs.PrevOutcome != 1 || rs.Outcome != 0 || hist.Resolutions[1].Reason != "the report was retracted" ||
		prev[fcKey("alice").Address().Hex()] != 29_666_666 || len(rs.Scores) != 5 {
		t.Fatalf("re-score audit %+v", rs)
	}

	// Accuracy against audits: fr1 (auto YES, re-resolved NO) disagrees;
	// fr2's final decision is VOID, not a YES/NO truth; fr0 never went
	// through the oracle. So 0 of 1, each resolver 0 of 1.
	resp, err = http.Get(api.URL + "/api/v1/oracle/accuracy")
	if err != nil {
		t.Fatal(err)
	}
	var acc oracle.Accuracy
	err = json.NewDecoder(resp.Body).Decode(&acc)
	resp.Body.Close()
	if err != nil || acc.N != 1 || acc.Agreed != 0 || !acc.Accuracy.OK || acc.Accuracy.V != 0 || acc.AutoAudited.N != 1 || acc.Escalated.N != 0 ||
		acc.ByResolver["alpha"].N != 1 || acc.ByResolver["alpha"].Agreed != 0 || acc.ByArchitecture["majority"].N != 1 || len(acc.Markets) != 1 || acc.Markets[0].MarketID != ms[1].ID {
		t.Fatalf("accuracy %v %+v", err, acc)
	}

	// The dashboard pages, without JavaScript: the queue page with the
	// audit figures and the resolver leaderboard (each resolver agreed with
	// none of the two YES/NO finals: fr1 NO after YES votes, and fr0 never
	// went through the panel), and fr1's resolution page with its history.
	page := func(path string) string {
		t.Helper()
		resp, err := http.Get(api.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	for path, wants := range map[string][]string{
		"/oracle": {"Accuracy against human audits", "<strong>0 of 1</strong>", "No market is waiting", `<td class="l agent">alpha</td><td>0.0%</td><td>1</td><td>0</td>`},
		fmt.Sprintf("/oracle/%d", ms[1].ID): {"Will fr1 happen?", "Resolution 2: decided, NO", "NO by bob", "the report was retracted", "Rounds re-scored",
			fmt.Sprintf(`<a href="/rounds/%d">#%d</a></td><td data-label="outcome before">1</td><td data-label="after">0</td>`, r.ID, r.ID),
			`<td class="l agent">gamma</td><td class="l">YES</td><td data-label="confidence">0.85</td><td data-label="round">1</td><td class="l q">reported</td>`},
	} {
		body := page(path)
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
	if body := page(fmt.Sprintf("/api/v1/pages/oracle/%d", ms[1].ID)); !strings.Contains(body, `"rescored"`) {
		t.Errorf("oracle market page JSON: %s", body)
	}

	// The export verifies: the log holds the new outcomes and scores after
	// the old ones, and the verifier recomputes the re-scored round.
	dir := t.TempDir()
	if _, err := export.Write(ctx, export.Source{Forecast: fsvc, Log: lg}, dir, export.Options{Format: export.JSONL, Checkpoint: tlogtest.Checkpoint(t, lg)}); err != nil {
		t.Fatal(err)
	}
	rep, err := export.Verify(dir, export.VerifyOptions{LogKey: lg.PublicKey()})
	if err != nil {
		t.Fatalf("verify after re-resolutions: %v", err)
	}
	// 3 outcomes; 5 scores (alice, bob, carol, random, market).
	if rep.Outcomes != 3 || rep.Scores != 5 || rep.LeaderboardRows == 0 {
		t.Fatalf("verified %+v", rep)
	}
	entries, _ := db.LogEntries(ctx, 0, uint64(rep.LogEntries))
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e.Kind]++
	}
	// Outcomes logged at the trigger and at each re-score; resolutions for
	// fr0 (upstream), fr1 (panel), fr2 (arbiter) and the two re-resolutions.
	if kinds[tlog.KindOutcome] != 3 || kinds[tlog.KindScore] != 15 || kinds[tlog.KindResolution] != 5 {
		t.Fatalf("log kinds %v", kinds)
	}
}

// An admin flags a market over the API; the source then resolves it YES,
// but the trading track waits for the oracle, whose unanimous NO settles
// it: the YES bet ($400 at 0.40) loses its stake.
func TestOracleFlagFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		quiet := slog.New(slog.DiscardHandler)
		week := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		run := week.Add(5 * time.Minute)
		m := &arena.Market{Source: arena.SourceSim, SourceID: "flagme", Kind: arena.KindMarket, Question: "Will flagme happen?",
			Criteria: "Resolves Yes if flagme happens.", Category: "politics", Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
			Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6}, Volume: 10, CloseTime: week.AddDate(0, 0, 3), Status: arena.StatusOpen}
		if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
			t.Fatal(err)
		}
		eng := &trading.Engine{Store: db, Lineup: []arena.LineupEntry{{AgentID: "a", Name: "A", Kind: "llm", Provider: "p", Model: "m/a"}},
			ModelTimeout: time.Minute, Now: func() time.Time { return run }, Logger: quiet}
		c, _, err := eng.StartCohort(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		dec := trading.DeciderFunc(func(context.Context, trading.Snapshot) (trading.Decision, error) {
			return trading.Decision{Action: trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m.ID, Side: "YES", Amount: 400 * arena.Dollar}}}}, nil
		})
		if _, err := eng.Run(ctx, c.ID, run, map[string]trading.Decider{"a": dec}); err != nil {
			t.Fatal(err)
		}
		srv := llmtest.New(t)
		no := `{"decision":"NO","confidence":0.95,"reasoning":"the official record says no"}`
		resolvers := scriptedPanel(t, srv, map[string]map[string]string{"alpha": {"flagme": no}, "beta": {"flagme": no}, "gamma": {"flagme": no}})
		svc := app.WireOracle(&oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Workers: 3}, Policy: arena.DefaultOraclePolicy, Logger: quiet,
			Now: func() time.Time { return run.Add(time.Hour) }})
		api := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, AdminToken: "tok", Logger: quiet, Oracle: svc}).Handler())
		defer api.Close()
		flag := func(market int64, token, body string) int {
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/admin/oracle/markets/%d/flag", api.URL, market), strings.NewReader(body))
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, c := range []struct {
			market      int64
			token, body string
			want        int
		}{
			{m.ID, "", `{"reason":"disputed"}`, 401},
			{m.ID, "tok", `{"reason":"  "}`, 400},
			{m.ID, "tok", `{}`, 400},
			{99999, "tok", `{"reason":"disputed"}`, 404},
			{m.ID, "tok", `{"reason":"the resolution source is disputed"}`, 200},
			{m.ID, "tok", `{"reason":"again"}`, 409},
		} {
			if got := flag(c.market, c.token, c.body); got != c.want {
				t.Errorf("flag %d %s: %d, want %d", c.market, c.body, got, c.want)
			}
		}
		// The source reports YES; the market stays unresolved for the oracle.
		m.Status, m.Resolution, m.ResolvedAt, m.Prices = arena.StatusResolved, arena.Yes, run.Add(time.Hour), nil
		if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
			t.Fatal(err)
		}
		sr, err := eng.Settle(ctx, run.Add(2*time.Hour), trading.PolicyOracle)
		if err != nil || len(sr.Markets) != 0 || len(sr.AwaitingOracle) != 1 {
			t.Fatalf("settle before the oracle: %+v %v", sr, err)
		}
		if n, err := svc.RunPending(ctx); err != nil || n != 1 {
			t.Fatalf("oracle run: %d %v", n, err)
		}
		if got, _ := db.Market(ctx, m.ID); got.Resolution != arena.No {
			t.Fatalf("market after the oracle: %+v", got)
		}
		if got := flag(m.ID, "tok", `{"reason":"late"}`); got != 409 {
			t.Fatalf("flag of a resolved market: %d", got)
		}
		// The oracle page lists the flagged market with its question and
		// the outcome the oracle gave it.
		var page view.OraclePageJSON
		if getJSON(t, api.URL+"/api/v1/pages/oracle", &page); len(page.Flags) != 1 ||
			page.Flags[0].MarketID != m.ID || page.Flags[0].Question != m.Question || page.Flags[0].Resolution != arena.No {
			t.Fatalf("oracle page's flags: %+v", page.Flags)
		}
		if html := string(getOK(t, api.URL+"/oracle")); !strings.Contains(html, `<td class="l q">Will flagme happen?</td>`) || !strings.Contains(html, `<td class="l" data-label="outcome">No</td>`) {
			t.Errorf("oracle page's flag row lacks the question or the outcome")
		}
		sr, err = eng.Settle(ctx, run.Add(3*time.Hour), trading.PolicyOracle)
		if err != nil || len(sr.Markets) != 1 || sr.Markets[0].Resolution != arena.No {
			t.Fatalf("settle after the oracle: %+v %v", sr, err)
		}
		ps, _ := db.Portfolios(ctx, c.ID)
		if ps[0].Cash != 9600*arena.Dollar || ps[0].Realized != -400*arena.Dollar {
			t.Fatalf("cash %d realized %d, want 9600 and −400 dollars", ps[0].Cash, ps[0].Realized)
		}
	})
}
