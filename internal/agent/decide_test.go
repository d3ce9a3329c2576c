package agent

import (
	"github.com/forecast-arena/arena"

	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/trading"
)

// newLLM returns a real llm.Client talking to the local fake server, priced
// at $2.50/$10 per million tokens.
func newLLM(t *testing.T, srv *llmtest.Server, model string) *llm.Client {
	t.Helper()
	spec := llm.ModelSpec{ID: "agent-" + model, Name: model, Provider: "local", Model: model, BaseURL: srv.BaseURL,
		Timeout: arena.Duration(5 * time.Second), InputUSDPerMtok: 2_500_000, OutputUSDPerMtok: 10_000_000}
	c, err := llm.NewClient(spec, "sk-test", llm.WithLogger(slog.New(slog.DiscardHandler)),
		llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecideFirstAnswerValid(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("I like the Fed cut.\n```json\n{\"action\":\"BET\",\"bets\":[{\"market_id\":101,\"side\":\"yes\",\"amount\":500}],\"reasoning\":\"cheap\"}\n```", 2000, 100))
	tr := NewTrader("gpt-4o", newLLM(t, srv, "m"))
	s := testSnapshot()
	d, err := tr.Decide(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 500*usd)}, Reasoning: "cheap"}
	if d.Action.String() != want.String() || d.Action.Reasoning != "cheap" || d.SystemDefault || d.Retries != 0 || len(d.Attempts) != 1 {
		t.Errorf("decision %+v", d)
	}
	// 2000 × 2.5 + 100 × 10 = 6000 µ$.
	if d.InputTokens != 2000 || d.OutputTokens != 100 || d.Cost != 6000 || d.Attempts[0].Cost != 6000 {
		t.Errorf("totals in=%d out=%d cost=%d", d.InputTokens, d.OutputTokens, d.Cost)
	}
	reqs := srv.Requests("m")
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[0].Body.Messages
	if len(msgs) != 2 || msgs[0].Text() != SystemPrompt() || msgs[1].Text() != UserPrompt(s) || *reqs[0].Body.Temperature != 0 {
		t.Errorf("request: %s", reqs[0].Raw)
	}
}

func TestDecideRetriesWithErrorAndExcerpt(t *testing.T) {
	srv := llmtest.New(t)
	bad := strings.Repeat("Let me think about market 101. ", 40) + `{"action":"BET","bets":[{"market_id":777,"side":"YES","amount":100}]}`
	srv.Script("m", llmtest.OK(bad, 1000, 400), llmtest.OK(`{"action":"HOLD","reasoning":"fine, holding"}`, 1500, 20))
	d, err := NewTrader("a", newLLM(t, srv, "m")).Decide(context.Background(), testSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.Kind != trading.ActionHold || d.Action.Reasoning != "fine, holding" || d.SystemDefault || d.Retries != 1 {
		t.Errorf("decision %+v", d)
	}
	if len(d.Attempts) != 2 || d.Attempts[0].Raw != bad || d.Attempts[0].Code != CodeInvalidAction ||
		!strings.Contains(d.Attempts[0].Error, "market_id 777 is not in the list") || d.Attempts[1].Error != "" {
		t.Errorf("attempts %+v", d.Attempts)
	}
	if d.InputTokens != 2500 || d.OutputTokens != 420 || d.Cost != 2500*5/2+420*10 {
		t.Errorf("totals %d %d %d", d.InputTokens, d.OutputTokens, d.Cost)
	}
	msgs := srv.Requests("m")[1].Body.Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[3].Role != "user" {
		t.Fatalf("retry messages: %s", srv.Requests("m")[1].Raw)
	}
	if got := msgs[2].Text(); got != bad[:ExcerptChars] {
		t.Errorf("excerpt is %d chars, want the first %d", len(got), ExcerptChars)
	}
	if !strings.Contains(msgs[3].Text(), "market_id 777 is not in the list of markets") {
		t.Errorf("correction lacks the error: %q", msgs[3].Text())
	}
}

func TestDecideFallsBackToHold(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("YES, definitely.", 10, 5), llmtest.OK(`{"action":"BET","bets":[{"market_id":101,"side":"YES","amount":10}]}`, 10, 5))
	tr := NewTrader("a", newLLM(t, srv, "m"))
	d, err := tr.Decide(context.Background(), testSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !d.SystemDefault || d.Action.Kind != trading.ActionHold || !strings.HasPrefix(d.Action.Reasoning, SystemDefaultPrefix) ||
		!strings.Contains(d.Action.Reasoning, "below the minimum bet") || d.Retries != 1 || len(d.Attempts) != 2 {
		t.Errorf("decision %+v", d)
	}
	if d.Attempts[0].Code != CodeNoJSON || d.Attempts[1].Code != CodeInvalidAction {
		t.Errorf("codes %s %s", d.Attempts[0].Code, d.Attempts[1].Code)
	}
	if n := len(srv.Requests("m")); n != 2 || srv.Exhausted() != 0 {
		t.Errorf("called the model %d times, want 2", n)
	}
	// More retries are honoured; none at all means one call.
	srv.Script("m", llmtest.OK("no", 1, 1), llmtest.OK("no", 1, 1), llmtest.OK("no", 1, 1))
	tr.Retries = 2
	d, _ = tr.Decide(context.Background(), testSnapshot())
	if len(d.Attempts) != 3 || d.Retries != 2 || !d.SystemDefault {
		t.Errorf("retries=2: %d attempts", len(d.Attempts))
	}
	srv.Script("m", llmtest.OK("no", 1, 1))
	tr.Retries = 0
	d, _ = tr.Decide(context.Background(), testSnapshot())
	if len(d.Attempts) != 1 || d.Retries != 0 || !d.SystemDefault {
		t.Errorf("retries=0: %d attempts", len(d.Attempts))
	}
}

func TestDecideReasoningModel(t *testing.T) {
	// A reasoning model that leaves content empty: the answer is in the
	// reasoning field, and the llm layer falls back to it.
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Reply{Reasoning: "Market 103 YES at 12.55% is cheap. Final: {\"action\":\"BET\",\"bets\":[{\"market_id\":103,\"side\":\"YES\",\"amount\":\"$250\"}],\"reasoning\":\"cheap tail\"}",
		ReasoningField: "reasoning_content", PromptTokens: 10, OutputTokens: 900})
	d, err := NewTrader("r1", newLLM(t, srv, "m")).Decide(context.Background(), testSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.Kind != trading.ActionBet || d.Action.Bets[0] != bet(103, "YES", 250*usd) || !d.Attempts[0].FromReasoning {
		t.Errorf("decision %+v", d)
	}
}

func TestDecideModelFailureIsAnError(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(401, "invalid api key"))
	d, err := NewTrader("a", newLLM(t, srv, "m")).Decide(context.Background(), testSnapshot())
	if err == nil {
		t.Fatal("401 produced a decision")
	}
	var le *llm.Error
	if !asLLMError(err, &le) || le.Status != 401 {
		t.Errorf("error %v does not wrap *llm.Error 401", err)
	}
	if d == nil || len(d.Attempts) != 1 || !d.Attempts[0].CallFailed || d.Prompt.User == "" {
		t.Errorf("partial record %+v", d)
	}

	// A failure on the correction call is also an error, with the record so far.
	srv.Script("m", llmtest.OK("garbage", 5, 5), llmtest.Fail(500, "down"), llmtest.Fail(500, "down"))
	d, err = NewTrader("a", newLLM(t, srv, "m")).Decide(context.Background(), testSnapshot())
	if err == nil || len(d.Attempts) != 2 || d.Attempts[0].Code != CodeNoJSON || !d.Attempts[1].CallFailed || d.InputTokens != 5 {
		t.Errorf("err %v record %+v", err, d)
	}
}

func TestExcerptRunes(t *testing.T) {
	s := strings.Repeat("é", 600)
	if got := Excerpt(s); len([]rune(got)) != ExcerptChars {
		t.Errorf("excerpt has %d runes", len([]rune(got)))
	}
	if Excerpt("  ") != "(empty response)" || Excerpt("short") != "short" {
		t.Error("excerpt of short or empty output")
	}
}

func asLLMError(err error, target **llm.Error) bool { return errors.As(err, target) }
