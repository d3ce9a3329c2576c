package trading_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

// scenarioAgents are the scripted behaviours of TestLLMCohortScenario, in
// lineup order; each agent's model name is its id.
var scenarioAgents = []string{"bet", "seller", "hold", "fenced", "prose", "retry-ok", "garbage", "small", "big",
	"unknown", "timeout", "ratelimit", "unauthorized"}

// registryJSON is a model registry file (`--agents FILE`) for agents
// served by the test server: every agent $2.50/$10 per Mtok, 5 s timeout
// except the one that times out; one agent whose key is missing.
func registryJSON(baseURL string, ids []string, timeout func(id string) string) string {
	var items []string
	for _, id := range ids {
		items = append(items, fmt.Sprintf(`{"id":%q,"name":"Model %s","provider":"local","model":%q,"base_url":%q,
			"api_key_env":"ARENA_TEST_LLM_KEY","temperature":0,"max_tokens":2048,"timeout":%q,
			"input_usd_per_mtok":2.5,"output_usd_per_mtok":10,"training_cutoff":"2025-06-01"}`, id, id, id, baseURL, timeout(id)))
	}
	items = append(items, fmt.Sprintf(`{"id":"nokey","name":"No Key","provider":"local","model":"nokey","base_url":%q,
		"api_key_env":"NOKEY_API_KEY","input_usd_per_mtok":1,"output_usd_per_mtok":1}`, baseURL))
	return `{"agents":[` + strings.Join(items, ",\n") + `]}`
}

func testEnv(k string) (string, bool) {
	if k == "ARENA_TEST_LLM_KEY" {
		return "sk-test", true
	}
	return "", false
}

type wantTrade struct {
	kind   arena.TradeKind
	market int64
	side   string
	amount trading.Micros
	shares trading.Shares
	price  trading.PPM
}

// TestLLMCohortScenario runs one cohort week against the local
// OpenAI-compatible test server with a scripted answer per agent, and
// checks every trade, cash balance, stored decision (retries, system
// default HOLDs, raw answers, tokens, cost, latency) and what was sent
// back to the models. A rerun of the week decides nobody twice; the
// second week sells part of a position bought in the first.
func TestLLMCohortScenario(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fed, cpi := mkBinary("fed", 0.40, 3_000_000), mkBinary("cpi", 0.70, 2_000_000)
		elect := &arena.Market{Source: arena.SourceSim, SourceID: "elect", Kind: arena.KindMarket, Question: "Who wins the election?",
			Category: "politics", Type: arena.Multi, Outcomes: []string{"Alice", "Bob", "Carol"},
			Prices: map[string]float64{"Alice": 0.5, "Bob": 0.3, "Carol": 0.2}, Volume: 1_000_000,
			CloseTime: week.AddDate(0, 0, 30), Status: arena.StatusOpen}
		save(t, db, fed, cpi, elect)
		M1, M2, M3 := fed.ID, cpi.ID, elect.ID

		srv := llmtest.New(t)
		ok := func(content string) llmtest.Reply { return llmtest.OK(content, 1000, 100) }
		bet := func(market int64, side string, amount float64) string {
			return fmt.Sprintf(`{"action":"BET","bets":[{"market_id":%d,"side":%q,"amount":%v}],"reasoning":"edge"}`, market, side, amount)
		}
		garbage := strings.Repeat("I need to think about this carefully. ", 20) // 760 characters, no JSON
		srv.Script("bet", ok(bet(M1, "YES", 500)))
		srv.Script("seller", ok(bet(M2, "NO", 1000)))
		srv.Script("hold", ok(`{"action":"HOLD","reasoning":"nothing compelling"}`))
		srv.Script("fenced", ok("```json\n"+bet(M2, "YES", 250)+"\n```"))
		srv.Script("prose", ok("Looking at the list, Alice is underpriced.\n"+bet(M3, "alice", 400)+"\nThat is my final answer."))
		srv.Script("retry-ok", ok("I am not sure what to do this week."), ok(bet(M1, "NO", 100)))
		srv.Script("garbage", ok(garbage), ok("still thinking"))
		srv.Script("small", ok(bet(M1, "YES", 20)), ok(bet(M1, "YES", 50)))
		srv.Script("big", ok(bet(M1, "YES", 3000)), ok(bet(M1, "YES", 3000)))
		srv.Script("unknown", ok(bet(99999, "YES", 100)), ok(`{"action":"HOLD","reasoning":"fine, I hold"}`))
		srv.Script("timeout", llmtest.Reply{Delay: 2 * time.Second, Content: bet(M2, "NO", 200)}, ok(bet(M2, "NO", 200)))
		srv.Script("ratelimit", llmtest.Reply{Status: 429, ErrorMessage: "slow down", Header: map[string]string{"Retry-After-Ms": "20"}},
			ok(bet(M3, "Bob", 300)))
		srv.Script("unauthorized", llmtest.Fail(401, "invalid api key"))

		reg, err := llm.ParseRegistry(strings.NewReader(registryJSON(srv.BaseURL, scenarioAgents, func(id string) string {
			if id == "timeout" {
				return "250ms"
			}
			return "5s"
		})))
		if err != nil {
			t.Fatal(err)
		}
		lu, skipped, err := agent.LLMLineup(reg, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		if len(skipped) != 1 || skipped[0].String() != `agent "nokey" (No Key) skipped: environment variable NOKEY_API_KEY is not set` {
			t.Fatalf("skipped %v", skipped)
		}
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		f := &agent.Factory{Getenv: testEnv, Logger: quiet, LLMOptions: []llm.Option{llm.WithLogger(quiet),
			llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond})}}
		clk := clock.New(run)
		e := engine(db, clk, lu)
		e.ProviderLimit = 4
		e.ModelTimeout = f.ModelTimeout(lu)
		if e.ModelTimeout != 5*time.Second {
			t.Fatalf("model timeout %v", e.ModelTimeout)
		}
		c, _, err := e.StartCohort(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		// T9: the cohort froze ids, display names, model, provider and prices.
		if len(c.Lineup) != len(scenarioAgents) || c.Lineup[0].AgentID != "bet" || c.Lineup[0].Name != "Model bet" ||
			c.Lineup[0].Model != "bet" || c.Lineup[0].Provider != "local" || c.Lineup[0].InputMicrosPerMtok != 2_500_000 ||
			c.Lineup[0].OutputMicrosPerMtok != 10_000_000 {
			t.Fatalf("lineup %+v", c.Lineup)
		}
		ds, skippedNow := f.Deciders(c.Lineup)
		if len(ds) != len(scenarioAgents) || len(skippedNow) != 0 {
			t.Fatalf("deciders %d, skipped %v", len(ds), skippedNow)
		}
		rep, err := e.Run(ctx, c.ID, run, ds)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Count(trading.OutcomeDone) != 12 || rep.Count(trading.OutcomeRetryable) != 1 || rep.Markets != 3 {
			t.Fatalf("report %+v", rep.Agents)
		}

		type want struct {
			status    arena.DecisionStatus
			action    trading.ActionKind
			retries   int
			sysDef    bool
			raw       int // stored raw answers
			requests  int // HTTP requests the server saw
			tokensIn  int64
			tokensOut int64
			cost      trading.Micros
			trades    []wantTrade
			cash      trading.Micros
			note      string // in the stored error/note
		}
		one := func(k trading.Micros, tr ...wantTrade) want {
			return want{status: arena.DecisionDone, action: trading.ActionBet, raw: 1, requests: 1, tokensIn: 1000, tokensOut: 100, cost: 3500, trades: tr, cash: k}
		}
		twice := func(w want) want {
			w.retries, w.raw, w.requests, w.tokensIn, w.tokensOut, w.cost = 1, 2, 2, 2000, 200, 7000
			return w
		}
		holdW := func(sysDef bool, note string) want {
			return twice(want{status: arena.DecisionDone, action: trading.ActionHold, sysDef: sysDef, cash: usd(10000), note: note})
		}
		b := func(m int64, side string, amount trading.Micros, shares trading.Shares, price trading.PPM) wantTrade {
			return wantTrade{arena.TradeBet, m, side, amount, shares, price}
		}
		wants := map[string]want{
			"bet":    one(usd(9500), b(M1, "YES", usd(500), 1250*arena.OneShare, 400_000)),
			"seller": one(usd(9000), b(M2, "NO", usd(1000), 3_333_333_333, 300_000)),
			"hold":   {status: arena.DecisionDone, action: trading.ActionHold, raw: 1, requests: 1, tokensIn: 1000, tokensOut: 100, cost: 3500, cash: usd(10000)},
			"fenced": one(usd(9750), b(M2, "YES", usd(250), 357_142_857, 700_000)),
			"prose":  one(usd(9600), b(M3, "Alice", usd(400), 800*arena.OneShare, 500_000)),
			"retry-ok": func() want {
				w := twice(one(usd(9900), b(M1, "NO", usd(100), 166_666_666, 600_000)))
				w.note = "answer 1 rejected: no JSON object"
				return w
			}(),
			"garbage": holdW(true, "no JSON object"),
			"small": func() want {
				w := twice(one(usd(9950), b(M1, "YES", usd(50), 125*arena.OneShare, 400_000)))
				w.note = "amount $20.00 is below the minimum bet of $50.00"
				return w
			}(),
			"big":     holdW(true, "exceeds 25% of your cash (max $2,500.00)"),
			"unknown": holdW(false, "market_id 99999 is not in the list of markets"),
			// One decision attempt; the llm client retried the timed-out call.
			"timeout":      {status: arena.DecisionDone, action: trading.ActionBet, raw: 1, requests: 2, tokensIn: 1000, tokensOut: 100, cost: 3500, trades: []wantTrade{b(M2, "NO", usd(200), 666_666_666, 300_000)}, cash: usd(9800)},
			"ratelimit":    {status: arena.DecisionDone, action: trading.ActionBet, raw: 1, requests: 2, tokensIn: 1000, tokensOut: 100, cost: 3500, trades: []wantTrade{b(M3, "Bob", usd(300), 1000*arena.OneShare, 300_000)}, cash: usd(9700)},
			"unauthorized": {status: arena.DecisionRetryable, requests: 1, cash: usd(10000), note: "HTTP 401 Unauthorized: invalid api key"},
		}
		rows, err := db.Decisions(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		byAgent := map[string]*arena.Decision{}
		for _, d := range rows {
			byAgent[d.AgentID] = d
		}
		for _, id := range scenarioAgents {
			w, d := wants[id], byAgent[id]
			if d == nil {
				t.Errorf("%s: no decision row", id)
				continue
			}
			var act trading.Action
			if len(d.Action) > 0 {
				if err := json.Unmarshal(d.Action, &act); err != nil {
					t.Errorf("%s: action %s: %v", id, d.Action, err)
				}
			}
			if d.Status != w.status || act.Kind != w.action || d.Retries != w.retries || d.SystemDefault != w.sysDef ||
				len(d.RawResponses) != w.raw || d.TokensIn != w.tokensIn || d.TokensOut != w.tokensOut || d.Cost != w.cost || d.Attempts != 1 {
				t.Errorf("%s: stored %s action=%s retries=%d default=%v raw=%d tokens=%d/%d cost=%d attempts=%d; want %+v",
					id, d.Status, act.Kind, d.Retries, d.SystemDefault, len(d.RawResponses), d.TokensIn, d.TokensOut, d.Cost, d.Attempts, w)
			}
			if w.sysDef != strings.HasPrefix(act.Reasoning, agent.SystemDefaultPrefix) {
				t.Errorf("%s: reasoning %q", id, act.Reasoning)
			}
			if w.note != "" && !strings.Contains(d.Error, w.note) {
				t.Errorf("%s: stored error %q, want it to mention %q", id, d.Error, w.note)
			}
			if w.note == "" && d.Error != "" {
				t.Errorf("%s: unexpected stored error %q", id, d.Error)
			}
			if w.status == arena.DecisionDone && (d.SystemPrompt != agent.SystemPrompt() || !strings.Contains(d.UserPrompt, fmt.Sprintf("Market %d: Will fed happen?", M1))) {
				t.Errorf("%s: prompts not stored: %q", id, d.UserPrompt)
			}
			if got := len(srv.Requests(id)); got != w.requests {
				t.Errorf("%s: %d requests, want %d", id, got, w.requests)
			}
			p := mustPortfolio(t, db, c.ID, id)
			trades, err := db.Trades(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.Cash != w.cash || len(trades) != len(w.trades) || len(p.Positions) != len(w.trades) {
				t.Errorf("%s: cash %s, %d trades, %d positions; want %s, %d", id, p.Cash, len(trades), len(p.Positions), w.cash, len(w.trades))
				continue
			}
			for i, tr := range trades {
				x := w.trades[i]
				if tr.Kind != x.kind || tr.MarketID != x.market || tr.Side != x.side || tr.Amount != x.amount || tr.Shares != x.shares ||
					tr.Price != x.price || tr.DecisionID != d.ID || tr.CashBefore != usd(10000) {
					t.Errorf("%s: trade %+v, want %+v", id, tr, x)
				}
			}
		}
		if d := byAgent["timeout"]; d.LatencyMS < 250 {
			t.Errorf("timeout agent latency %d ms, want at least the 250 ms timeout", d.LatencyMS)
		}
		if tr, _ := db.Trades(ctx, mustPortfolio(t, db, c.ID, "bet").ID); !near(tr[0].Confidence, 0.2) {
			t.Errorf("implied confidence %v, want 500/2500", tr[0].Confidence)
		}

		// What went over the wire: temperature 0, the key, and corrections
		// holding the first 500 characters of the bad answer and the error.
		first := srv.Requests("bet")[0]
		if first.Authorization != "Bearer sk-test" || first.Body.Temperature == nil || *first.Body.Temperature != 0 ||
			first.Body.MaxTokens == nil || *first.Body.MaxTokens != 2048 {
			t.Errorf("request %s (auth %q)", first.Raw, first.Authorization)
		}
		fix := srv.Requests("garbage")[1].Body.Messages
		if len(fix) != 4 || fix[2].Role != "assistant" || fix[2].Text() != garbage[:500] || fix[3].Role != "user" ||
			!strings.Contains(fix[3].Text(), "Error: ") {
			t.Errorf("correction request: %+v", fix)
		}
		if msg := srv.Requests("small")[1].Body.Messages[3].Text(); !strings.Contains(msg, "bets[0]: amount $20.00 is below the minimum bet of $50.00") {
			t.Errorf("small correction %q", msg)
		}
		if msg := srv.Requests("big")[1].Body.Messages[3].Text(); !strings.Contains(msg, "bets[0]: amount $3,000.00 exceeds 25% of your cash (max $2,500.00)") {
			t.Errorf("big correction %q", msg)
		}

		// A rerun decides nobody twice; only the 401 failure is retried.
		srv.Script("unauthorized", llmtest.Fail(401, "invalid api key"))
		rep, err = e.Run(ctx, c.ID, run, ds)
		if err != nil || rep.Count(trading.OutcomeSkipped) != 12 || rep.Count(trading.OutcomeRetryable) != 1 {
			t.Fatalf("rerun %v %+v", err, rep.Agents)
		}
		if n := len(srv.Requests("")); n != 21 {
			t.Fatalf("%d requests after the rerun, want 20 + 1 retry of the 401", n)
		}
		if d, _ := db.Decisions(ctx, c.ID); len(d) != len(scenarioAgents) {
			t.Fatalf("%d decision rows", len(d))
		}
		for _, d := range mustDecisions(t, db, c.ID) {
			if d.AgentID == "unauthorized" && (d.Attempts != 2 || d.Status != arena.DecisionRetryable) {
				t.Fatalf("401 row %+v", d)
			}
		}

		// Week 2: cpi moves to 60% YES; the seller sells half of its NO
		// position at 0.40. Sold floor(3333.333333 × 50%) = 1666.666666
		// shares for $666.666666, releasing $499.999999 of basis.
		cpi.Prices = yesNo(0.60)
		save(t, db, cpi)
		pos := mustPortfolio(t, db, c.ID, "seller").Positions[0]
		srv.Script("seller", ok(fmt.Sprintf(`{"action":"SELL","sells":[{"position_id":%d,"percentage":50}],"reasoning":"take profit"}`, pos.ID)))
		next := run.AddDate(0, 0, 7)
		clk.Set(next)
		rep, err = e.Run(ctx, c.ID, next, map[string]trading.Decider{"seller": ds["seller"]})
		if err != nil || rep.Agents[1].Outcome != trading.OutcomeDone || rep.Agents[1].Executed != 1 {
			t.Fatalf("week 2: %v %+v", err, rep.Agents)
		}
		p := mustPortfolio(t, db, c.ID, "seller")
		if p.Cash != 9_666_666_666 || p.Realized != 166_666_667 || len(p.Positions) != 1 ||
			p.Positions[0].Shares != 1_666_666_667 || p.Positions[0].CostBasis != 500_000_001 {
			t.Fatalf("seller after the sale: %+v %+v", p, p.Positions[0])
		}
		trades, _ := db.Trades(ctx, p.ID)
		if len(trades) != 2 || trades[1].Kind != arena.TradeSell || trades[1].Amount != 666_666_666 || trades[1].Shares != 1_666_666_666 ||
			trades[1].Price != 400_000 || trades[1].CostBasis != 499_999_999 {
			t.Fatalf("sell trade %+v", trades[1])
		}
		// The week-2 prompt showed the position with every T2 field.
		up := srv.Requests("seller")[1].Body.Messages[1].Text()
		for _, s := range []string{fmt.Sprintf("Position %d: market %d", pos.ID, M2), "side NO | 3333.33 shares | avg entry $0.30 | current $0.40 | value $1,333.33 | unrealized P/L +$333.33",
			"Cash: $9,000.00", fmt.Sprintf("Market %d: Who wins the election?", M3), "politics | multi-outcome", "prices: Alice 50%, Bob 30%, Carol 20%",
			"prices: 60% YES / 40% NO", "volume $3,000,000", "closes 2026-03-31"} {
			if !strings.Contains(up, s) {
				t.Errorf("week-2 prompt lacks %q:\n%s", s, up)
			}
		}
	})
}

func mustDecisions(t *testing.T, db *store.DB, cohort int64) []*arena.Decision {
	t.Helper()
	ds, err := db.Decisions(ctx, cohort)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
