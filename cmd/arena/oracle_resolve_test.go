package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// `arena oracle resolve` on an open market, unflagged (closing in a week)
// or flagged (three weeks before close), is refused with the reason and
// changes nothing: no model is asked, no vote stored, no log entry, the
// market still open and unresolved. `arena oracle dispute` hands a market
// its source resolved to the oracle, which then resolves it.
func TestOracleResolveCommand(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dbURL := storetest.URL(t, engine)
			now := time.Now().UTC()
			mk := func(id string, closes time.Time) *arena.Market {
				return &arena.Market{Source: arena.SourceSim, SourceID: id, Kind: arena.KindMarket, Question: "Will " + id + " happen?", Type: arena.Binary,
					Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5}, CloseTime: closes, Status: arena.StatusOpen}
			}
			ids := saveMarkets(t, dbURL, []*arena.Market{mk("week", now.Add(7*24*time.Hour)), mk("flagged", now.Add(21*24*time.Hour)), mk("upstream", now), mk("upstream2", now)})
			srv := llmtest.New(t)
			for _, model := range []string{"alpha", "beta", "gamma"} {
				srv.Handle(model, func(llmtest.ChatRequest) llmtest.Reply {
					return llmtest.OK(`{"decision":"NO","confidence":0.95,"reasoning":"not yet"}`, 10, 5)
				})
			}
			agents := writeOracleRegistry(t, srv.BaseURL, "alpha", "beta", "gamma")
			logKey := filepath.Join(t.TempDir(), "log.key")
			run := func(args ...string) (string, error) {
				out, _, err := cli(t, nil, append(args, "--db", dbURL)...)
				return out, err
			}
			if _, err := run("oracle", "flag", "--market", fmt.Sprint(ids[1]), "--reason", "the source is disputed"); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids[:2] {
				_, err := run("oracle", "resolve", "--market", fmt.Sprint(id), "--agents", agents, "--log-key", logKey)
				if arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "still open") {
					t.Errorf("resolve of open market %d: %v", id, err)
				}
			}
			db := openStore(t, dbURL)
			for _, id := range ids[:2] {
				if _, err := db.OracleResolutions(ctx, id); arena.ErrorKind(err) != arena.ENOTFOUND {
					t.Errorf("market %d: votes stored (%v)", id, err)
				}
				if m, _ := db.Market(ctx, id); m.Status != arena.StatusOpen || m.Resolution != "" {
					t.Errorf("market %d changed: %+v", id, m)
				}
			}
			if n, _ := db.LogSize(ctx); n != 0 || len(srv.Requests("")) != 0 {
				t.Fatalf("refusals logged %d entries and asked the panel %d times", n, len(srv.Requests("")))
			}

			// The source resolves "upstream" YES; disputed, the panel's NO replaces it.
			if _, err := db.ResolveMarket(ctx, ids[2], arena.Yes, now); err != nil {
				t.Fatal(err)
			}
			if _, err := run("oracle", "dispute", "--market", fmt.Sprint(ids[1]), "--admin", "ann", "--reason", "wrong", "--log-key", logKey); arena.ErrorKind(err) != arena.ECONFLICT {
				t.Errorf("dispute of an unresolved market: %v", err)
			}
			if _, err := run("oracle", "dispute", "--market", fmt.Sprint(ids[2]), "--reason", "wrong", "--log-key", logKey); arena.ErrorKind(err) != arena.EINVALID {
				t.Errorf("dispute without --admin: %v", err)
			}
			out, err := run("oracle", "dispute", "--market", fmt.Sprint(ids[2]), "--admin", "ann", "--reason", "the source misread its rules", "--log-key", logKey)
			if err != nil || !strings.Contains(out, "resolution Yes disputed by ann") {
				t.Fatalf("dispute: %q %v", out, err)
			}
			// The dispute is the log's only entry: who, why, when.
			if es, err := db.LogEntries(ctx, 0, 10); err != nil || len(es) != 1 || es[0].Kind != "dispute" ||
				!strings.Contains(string(es[0].Data), `"admin":"ann","reason":"the source misread its rules"`) {
				t.Fatalf("log after the dispute: %v %+v", err, es)
			}
			out, err = run("oracle", "resolve", "--market", fmt.Sprint(ids[2]), "--agents", agents, "--log-key", logKey)
			if want := fmt.Sprintf("market %d: NO, resolved by the panel\n", ids[2]); err != nil || !strings.HasPrefix(out, want) || !strings.Contains(out, "composite 1.95") ||
				strings.Count(out, "\n") > 12 {
				t.Fatalf("resolve of the disputed market: want a summary starting %q, got %v\n%s", want, err, out)
			}
			// --format json prints the full record.
			if _, err := db.ResolveMarket(ctx, ids[3], arena.Yes, now); err != nil {
				t.Fatal(err)
			}
			if _, err := run("oracle", "dispute", "--market", fmt.Sprint(ids[3]), "--admin", "ann", "--reason", "wrong", "--log-key", logKey); err != nil {
				t.Fatal(err)
			}
			out, err = run("oracle", "resolve", "--market", fmt.Sprint(ids[3]), "--agents", agents, "--log-key", logKey, "--format", "json")
			if err != nil || !strings.Contains(out, `"final": "NO"`) || !strings.Contains(out, `"system_prompt"`) {
				t.Fatalf("resolve --format json: %v\n%.300s", err, out)
			}
			if m, _ := db.Market(ctx, ids[2]); m.Resolution != arena.No {
				t.Fatalf("disputed market after the oracle: %+v", m)
			}
		})
	}
}

// `arena oracle resolve` prints a one-screen summary, figures rounded for
// people (a composite of 1.8530000000000002 reads 1.85); the prompts and
// raw answers are only in --format json.
func TestOracleResolveSummary(t *testing.T) {
	t.Parallel()
	vote := func(agent string, round int, d arena.OracleDecision, conf float64, why string) arena.OracleVote {
		return arena.OracleVote{Agent: agent, Round: round, Decision: d, Confidence: conf, Reasoning: why, System: "SYSTEM PROMPT",
			Prompt: "PROMPT", Raw: "RAW", Calls: 1, CostMicros: 1234}
	}
	res := &arena.OracleResolution{MarketID: 42, Seq: 1, Status: arena.OracleAuto, Final: arena.OracleYes,
		Evidence: arena.EvidencePacket{Sources: []arena.EvidenceSource{{Title: "a"}, {Title: "b"}}},
		Policy:   arena.DefaultOraclePolicy,
		Verdict: arena.OracleVerdict{Architecture: "majority", Decision: arena.OracleYes, Rule: "majority", Unanimous: true, Composite: 1.8530000000000002,
			Round1: []arena.OracleVote{
				vote("alpha", 1, arena.OracleYes, 0.853, "The official result,\nannounced on the 3rd, names the winner."),
				vote("beta", 1, arena.OracleYes, 0.9, "Confirmed by two sources."),
				{Agent: "gamma", Round: 1, Failure: "provider: 503 Service Unavailable", Calls: 3},
			}}}
	var b strings.Builder
	if err := printResolution(&b, res); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "oracle_resolve_auto", b.String())
	res.Status, res.Final = arena.OracleEscalated, ""
	res.Verdict.Escalate, res.Verdict.Reasons, res.Verdict.Composite = true, []string{"failure", "low_composite"}, 1.2
	b.Reset()
	if err := printResolution(&b, res); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "oracle_resolve_escalated", b.String())
}
