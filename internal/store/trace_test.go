package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/forecast-arena/arena"
)

func TestTracesAndBacktest(t *testing.T) {
	for engine, open := range submitTestDBs(t) {
		t.Run(engine, func(t *testing.T) {
			db := open()
			ctx := context.Background()
			seedRounds(t, db, 1)
			if _, err := db.Trace(ctx, 1, "0xA"); arena.ErrorKind(err) != arena.ENOTFOUND {
				t.Fatalf("missing trace: %v", err)
			}
			tr := &arena.ForecastTrace{RoundID: 1, Agent: "0xA", AgentID: "m", Failure: "x", Calls: 3, CachedCalls: 1, InputTokens: 10,
				OutputTokens: 20, Cost: 1234, Billed: 1300, BilledCalls: 2, LatencyMS: 5, Trace: json.RawMessage(`{"steps":[]}`), CreatedAt: t0}
			for i := 0; i < 2; i++ { // the second save replaces the first
				if err := db.SaveTrace(ctx, tr); err != nil {
					t.Fatal(err)
				}
				tr.Submitted, tr.Failure = true, ""
			}
			got, err := db.Trace(ctx, 1, "0xA")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(*got) != fmt.Sprint(*tr) {
				t.Errorf("got %+v\nwant %+v", got, tr)
			}
			// Costs sum by agent over rounds.
			seedRounds(t, db, 1)
			tr2 := *tr
			tr2.RoundID, tr2.Cost, tr2.Calls, tr2.CachedCalls = 2, 66, 2, 2
			tr3 := tr2
			tr3.Agent, tr3.Cost, tr3.Billed, tr3.BilledCalls = "0xB", 7, 0, 0
			for _, x := range []*arena.ForecastTrace{&tr2, &tr3} {
				if err := db.SaveTrace(ctx, x); err != nil {
					t.Fatal(err)
				}
			}
			costs, err := db.TraceCosts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(costs) != "[{0xA 2 5 3 $0.0013 $0.0026 4} {0xB 1 2 2 $0.000007 $0.00 0}]" {
				t.Errorf("trace costs %v", costs)
			}
			// A round's traces, by agent.
			rt, err := db.RoundTraces(ctx, 2)
			if err != nil || len(rt) != 2 || fmt.Sprint(rt[0]) != fmt.Sprint(tr2) || fmt.Sprint(rt[1]) != fmt.Sprint(tr3) {
				t.Errorf("round traces: %+v %v", rt, err)
			}
			ms, err := db.Markets(ctx, arena.MarketFilter{})
			if err != nil || len(ms) < 2 {
				t.Fatal(err)
			}
			b := 0.25
			rows := []arena.BacktestForecast{
				{Agent: "m", Round: "r1", MarketID: ms[0].ID, SourceID: ms[0].SourceID, Forecast: 7000, Benchmark: &b, Outcome: 1, CreatedAt: t0},
				{Agent: "m", Round: "r1", MarketID: ms[1].ID, SourceID: ms[1].SourceID, Forecast: 100, Outcome: 0, CreatedAt: t0},
			}
			if err := db.SaveBacktest(ctx, rows); err != nil {
				t.Fatal(err)
			}
			rows[0].Forecast = 7100
			if err := db.SaveBacktest(ctx, rows[:1]); err != nil {
				t.Fatal(err)
			}
			out, err := db.BacktestForecasts(ctx)
			if err != nil || len(out) != 2 || out[0].Forecast != 7100 || *out[0].Benchmark != 0.25 || out[1].Benchmark != nil || out[1].Outcome != 0 {
				t.Fatalf("%+v %v", out, err)
			}
			if err := db.SaveBacktest(ctx, []arena.BacktestForecast{{Agent: "m", MarketID: ms[0].ID, Outcome: 2}}); arena.ErrorKind(err) != arena.EINVALID {
				t.Errorf("bad outcome: %v", err)
			}
		})
	}
}
