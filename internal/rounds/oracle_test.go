package rounds_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// Ambiguous markets in the forecast track: the oracle resolves one by
// itself (unanimous, confident) and escalates the other; the round is not
// scored while a market is escalated, and is scored, as computed by hand,
// once an arbiter decides; a re-resolution after scoring re-scores it.
func TestOracleForecastFlow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: 6 * time.Hour}
		r, ms := newRound(t, db, svc, "o", 3)
		alice := agentKey("alice")
		preds := []uint16{8000, 3000, 6000}
		salt := commit(t, svc, clk, alice, r, preds)
		for _, m := range ms {
			addPoints(t, db, m, arena.PricePoint{Time: r.CommitDeadline, Price: 0.5, Source: arena.PriceCLOBMid})
		}
		clk.Set(r.CommitDeadline.Add(forecast.BenchmarkTolerance))
		if _, err := svc.CaptureBenchmarks(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Set(r.RevealStart)
		reveal(t, svc, clk, alice, r, preds, salt)
		clk.Set(r.RevealDeadline.Add(time.Second))
		// o0 resolves YES upstream; o1 and o2 resolve with no winner.
		if _, err := db.ResolveMarket(ctx, ms[0].ID, arena.Yes, clk.Now()); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms[1:] {
			m.Status, m.Ambiguous, m.Prices, m.History = arena.StatusResolved, true, nil, nil
		}
		if _, err := db.SaveMarkets(ctx, ms[1:]); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("trigger with ambiguous markets: %d %v", n, err)
		}

		srv := llmtest.New(t)
		answers := map[string][]string{ // per model: o1 (split), o2 (unanimous)
			"alpha": {`{"decision":"NO","confidence":0.9,"reasoning":"r"}`, `{"decision":"YES","confidence":0.9,"reasoning":"r"}`},
			"beta":  {`{"decision":"YES","confidence":0.6,"reasoning":"r"}`, `{"decision":"YES","confidence":0.95,"reasoning":"r"}`},
			"gamma": {`{"decision":"TOO_EARLY","confidence":0.5,"reasoning":"r"}`, `{"decision":"YES","confidence":0.85,"reasoning":"r"}`},
		}
		var resolvers []*oracle.Resolver
		for _, model := range []string{"alpha", "beta", "gamma"} {
			srv.Handle(model, func(req llmtest.ChatRequest) llmtest.Reply {
				user := req.Messages[1].Text()
				switch {
				case strings.Contains(user, "Question: Q o1\n"):
					return llmtest.OK(answers[model][0], 10, 5)
				case strings.Contains(user, "Question: Q o2\n"):
					return llmtest.OK(answers[model][1], 10, 5)
				}
				return llmtest.Fail(400, "unknown question")
			})
			cl, err := llm.NewClient(llm.ModelSpec{ID: model, Provider: "local", Model: model, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second)}, "", llm.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			resolvers = append(resolvers, &oracle.Resolver{ID: model, Completer: cl})
		}
		osvc := &oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Workers: 2}, Policy: arena.DefaultOraclePolicy, Now: clk.Now, Logger: quiet, Metrics: metrics.New()}
		if n, err := osvc.RunPending(ctx); err != nil || n != 2 {
			t.Fatalf("oracle: %d %v", n, err)
		}
		if esc, res := osvc.Metrics.Value("arena_oracle_runs_total", map[string]string{"status": arena.OracleEscalated}),
			osvc.Metrics.Value("arena_oracle_runs_total", map[string]string{"status": arena.OracleAuto}); esc != 1 || res != 1 {
			t.Fatalf("oracle runs counted: %v escalated, %v auto; want 1 and 1", esc, res)
		}
		if m, _ := db.Market(ctx, ms[2].ID); m.Resolution != arena.Yes {
			t.Fatalf("unanimous market: %+v", m)
		}
		q, _ := db.OracleQueue(ctx)
		if len(q) != 1 || q[0].MarketID != ms[1].ID || strings.Join(q[0].Verdict.Reasons, ",") != "too_early,split,not_unanimous,low_score" {
			t.Fatalf("queue %+v", q)
		}
		// Escalated: the round waits (grace not over).
		if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("trigger while escalated: %d %v", n, err)
		}
		if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: ms[1].ID, Decision: arena.OracleNo, Arbiter: "ann", Reason: "official"}); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
			t.Fatalf("trigger after the decision: %d %v", n, err)
		}
		// Brier by hand: o0 YES (0.8), o1 NO (0.3), o2 YES (0.6).
		want := ((0.8-1)*(0.8-1) + 0.3*0.3 + (0.6-1)*(0.6-1)) / 3
		s := scoreMap(t, db, r.ID)[alice.Address().Hex()]
		if s.Scored != 3 || math.Abs(s.Brier-want) > 1e-12 {
			t.Fatalf("alice %+v, want Brier %v over 3 markets", s, want)
		}
		// Re-resolved YES after scoring: the round is re-scored with the
		// trigger's scorer. Brier by hand: (0.2² + 0.7² + 0.4²)/3 = 0.23.
		osvc.Tracks = []arena.ResolutionHook{rounds.Rescore, rounds.LogResolution}
		rr, _, err := osvc.Decide(ctx, arena.OracleDecisionInput{MarketID: ms[1].ID, Decision: arena.OracleYes, Arbiter: "bob", Reason: "changed", ReResolve: true})
		if err != nil || len(rr.Rescored) != 1 || rr.Rescored[0].RoundID != r.ID {
			t.Fatalf("re-resolution after scoring: %+v %v", rr, err)
		}
		s = scoreMap(t, db, r.ID)[alice.Address().Hex()]
		if s.Scored != 3 || s.BrierBps2 != 23_000_000 || math.Abs(s.Brier-0.23) > 1e-12 {
			t.Fatalf("alice after re-resolution %+v, want Brier 0.23", s)
		}
	})
}
