package llm

import (
	"github.com/forecast-arena/arena"

	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/llm/llmtest"
)

// recorder captures the client's backoff waits without sleeping.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

var quietLogger = slog.New(slog.DiscardHandler)

func testSpec(model string) ModelSpec {
	return ModelSpec{ID: "agent-" + model, Name: "Agent " + model, Provider: "local", Model: model,
		Timeout: arena.Duration(5 * time.Second), InputUSDPerMtok: 2_500_000, OutputUSDPerMtok: 10_000_000}
}

// newTestClient returns a client on srv whose waits are recorded, with
// deterministic jitter (the maximum of the range).
func newTestClient(t *testing.T, srv *llmtest.Server, spec ModelSpec, key string, opts ...Option) (*Client, *recorder) {
	t.Helper()
	spec.BaseURL = srv.BaseURL
	opts = append([]Option{WithLogger(quietLogger)}, opts...)
	c, err := NewClient(spec, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c.sleep = rec.sleep
	c.rnd = func(n int64) int64 { return n - 1 }
	return c, rec
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not *llm.Error", err, err)
	}
	return le
}

func TestCompleteSuccessWireFormat(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m1", llmtest.Reply{Content: `{"action":"HOLD"}`, PromptTokens: 1000, OutputTokens: 500, Model: "m1-2025"})
	c, rec := newTestClient(t, srv, testSpec("m1"), "sk-test")
	resp, err := c.Complete(context.Background(), Request{System: "sys", User: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"action":"HOLD"}` || resp.Model != "m1-2025" || resp.Attempts != 1 || resp.FinishReason != "stop" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.InputTokens != 1000 || resp.OutputTokens != 500 {
		t.Errorf("tokens = %d/%d", resp.InputTokens, resp.OutputTokens)
	}
	// 1000 × $2.50/M + 500 × $10/M = $0.0025 + $0.005 = 7500 µ$.
	if resp.CostMicros != 7500 {
		t.Errorf("cost = %d µ$, want 7500", resp.CostMicros)
	}
	if len(rec.waits) != 0 {
		t.Errorf("waited %v on success", rec.waits)
	}
	reqs := srv.Requests("m1")
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Authorization != "Bearer sk-test" {
		t.Errorf("Authorization = %q", r.Authorization)
	}
	if r.Body.Temperature == nil || *r.Body.Temperature != 0 {
		t.Errorf("temperature must be sent as 0, got %s", r.Raw)
	}
	if r.Body.MaxTokens != nil {
		t.Errorf("max_tokens sent without a limit configured: %s", r.Raw)
	}
	if len(r.Body.Messages) != 2 || r.Body.Messages[0].Role != "system" || r.Body.Messages[0].Text() != "sys" ||
		r.Body.Messages[1].Role != "user" || r.Body.Messages[1].Text() != "hello" {
		t.Errorf("messages = %s", r.Raw)
	}
	if r.Header.Get("X-Stainless-Retry-Count") != "" && r.Header.Get("X-Stainless-Retry-Count") != "0" {
		t.Errorf("SDK retry header %q", r.Header.Get("X-Stainless-Retry-Count"))
	}
}

func TestCompleteOverridesAndFollowUps(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("ok", 1, 1))
	spec := testSpec("m")
	spec.MaxTokens = 300
	spec.Temperature = 0.3
	c, _ := newTestClient(t, srv, spec, "k")
	if _, err := c.Complete(context.Background(), Request{System: "s", User: "u", Messages: []Message{
		{Role: RoleAssistant, Content: "bad"}, {Role: RoleUser, Content: "fix it"}}}); err != nil {
		t.Fatal(err)
	}
	b := srv.Requests("m")[0].Body
	if *b.Temperature != 0.3 || *b.MaxTokens != 300 {
		t.Errorf("temperature %v max_tokens %v", *b.Temperature, *b.MaxTokens)
	}
	var roles []string
	for _, m := range b.Messages {
		roles = append(roles, m.Role+":"+m.Text())
	}
	if got := strings.Join(roles, ","); got != "system:s,user:u,assistant:bad,user:fix it" {
		t.Errorf("messages %s", got)
	}
	srv.Script("m", llmtest.OK("ok", 1, 1))
	zero := 0.0
	if _, err := c.Complete(context.Background(), Request{User: "u", Temperature: &zero, MaxTokens: 10}); err != nil {
		t.Fatal(err)
	}
	b = srv.Requests("m")[1].Body
	if *b.Temperature != 0 || *b.MaxTokens != 10 || len(b.Messages) != 1 {
		t.Errorf("per-request overrides not applied: %s", srv.Requests("m")[1].Raw)
	}
	if _, err := c.Complete(context.Background(), Request{}); err == nil {
		t.Error("empty request accepted")
	}
	if _, err := c.Complete(context.Background(), Request{User: "u", Messages: []Message{{Role: "wizard"}}}); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestRetryOn429ThenSuccess(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(429, "rate limited"), llmtest.Fail(429, "rate limited"), llmtest.OK("fine", 10, 5))
	c, rec := newTestClient(t, srv, testSpec("m"), "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}))
	resp, err := c.Complete(context.Background(), Request{User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 3 || resp.Content != "fine" {
		t.Errorf("attempts %d content %q", resp.Attempts, resp.Content)
	}
	// Equal jitter with the maximum draw: d/2 + d/2 = d, doubling.
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
	if len(rec.waits) != 2 || rec.waits[0] != want[0] || rec.waits[1] != want[1] {
		t.Errorf("waits %v, want %v", rec.waits, want)
	}
	if n := len(srv.Requests("m")); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestRetryOn5xxThenSuccess(t *testing.T) {
	for _, rep := range []llmtest.Reply{
		llmtest.Fail(500, "internal"),
		llmtest.Fail(503, "overloaded"),
		{Status: 502, Body: "<html>Bad Gateway</html>", Header: map[string]string{"Content-Type": "text/html"}},
		{Body: `{"error":{"code":502,"message":"upstream provider error"}}`}, // 200 with an error object (OpenRouter)
		{Body: `{"id":"x","object":"chat.completion","choices":[]}`},
	} {
		srv := llmtest.New(t)
		srv.Script("m", rep, llmtest.OK("ok", 1, 1))
		c, rec := newTestClient(t, srv, testSpec("m"), "k")
		resp, err := c.Complete(context.Background(), Request{User: "u"})
		if err != nil {
			t.Errorf("%d %q: %v", rep.Status, rep.Body, err)
			continue
		}
		if resp.Attempts != 2 || len(rec.waits) != 1 {
			t.Errorf("%d %q: attempts %d waits %v", rep.Status, rep.Body, resp.Attempts, rec.waits)
		}
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		srv := llmtest.New(t)
		srv.Script("m", llmtest.Fail(status, "nope: bad key"), llmtest.OK("never", 1, 1))
		c, rec := newTestClient(t, srv, testSpec("m"), "k")
		_, err := c.Complete(context.Background(), Request{User: "u"})
		le := asError(t, err)
		if le.Status != status || le.Retryable || le.Attempts != 1 || le.Timeout {
			t.Errorf("%d: error %+v", status, le)
		}
		if !strings.Contains(le.Error(), "nope: bad key") || !strings.Contains(le.Error(), "agent-m") {
			t.Errorf("%d: message %q lacks provider message or agent", status, le.Error())
		}
		if n := len(srv.Requests("m")); n != 1 || len(rec.waits) != 0 {
			t.Errorf("%d: %d requests, waits %v", status, n, rec.waits)
		}
	}
}

func TestTimeoutIsRetriedThenReported(t *testing.T) {
	srv := llmtest.New(t)
	slow := llmtest.Reply{Delay: 2 * time.Second, Content: "late"}
	srv.Script("m", slow, slow)
	spec := testSpec("m")
	spec.Timeout = arena.Duration(50 * time.Millisecond)
	c, rec := newTestClient(t, srv, spec, "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}))
	t0 := time.Now()
	_, err := c.Complete(context.Background(), Request{User: "u"})
	le := asError(t, err)
	if !le.Timeout || !le.Retryable || le.Attempts != 2 || le.Status != 0 {
		t.Errorf("error %+v", le)
	}
	if el := time.Since(t0); el > time.Second {
		t.Errorf("took %v; per-call timeout not applied", el)
	}
	if len(rec.waits) != 1 || len(srv.Requests("m")) != 2 {
		t.Errorf("waits %v requests %d", rec.waits, len(srv.Requests("m")))
	}

	// A timeout followed by a fast answer succeeds on the second attempt.
	srv.Script("m", slow, llmtest.OK("fast", 1, 1))
	resp, err := c.Complete(context.Background(), Request{User: "u"})
	if err != nil || resp.Content != "fast" || resp.Attempts != 2 {
		t.Errorf("resp %+v err %v", resp, err)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After-Ms": "1500"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(42 * time.Second).Format(http.TimeFormat)}, 42 * time.Second},
	}
	for _, tc := range cases {
		srv := llmtest.New(t)
		srv.Script("m", llmtest.Reply{Status: 429, Header: tc.header}, llmtest.OK("ok", 1, 1))
		c, rec := newTestClient(t, srv, testSpec("m"), "k")
		c.now = func() time.Time { return now }
		if _, err := c.Complete(context.Background(), Request{User: "u"}); err != nil {
			t.Fatal(err)
		}
		if len(rec.waits) != 1 || rec.waits[0] != tc.want {
			t.Errorf("%v: waits %v, want [%v]", tc.header, rec.waits, tc.want)
		}
	}

	// A Retry-After beyond the policy stops at once with the real error.
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}}, llmtest.OK("ok", 1, 1))
	c, rec := newTestClient(t, srv, testSpec("m"), "k")
	_, err := c.Complete(context.Background(), Request{User: "u"})
	le := asError(t, err)
	if le.Status != 429 || le.RetryAfter != time.Hour || len(rec.waits) != 0 || !strings.Contains(le.Error(), "Retry-After") {
		t.Errorf("error %+v waits %v", le, rec.waits)
	}
}

func TestRetriesExhausted(t *testing.T) {
	srv := llmtest.New(t)
	for range 5 {
		srv.Script("m", llmtest.Fail(500, "down"))
	}
	c, rec := newTestClient(t, srv, testSpec("m"), "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 1500 * time.Millisecond}))
	_, err := c.Complete(context.Background(), Request{User: "u"})
	le := asError(t, err)
	if le.Attempts != 3 || !le.Retryable || le.Status != 500 || !strings.Contains(le.Error(), "after 3 attempts") {
		t.Errorf("error %+v (%s)", le, le)
	}
	if want := []time.Duration{time.Second, 1500 * time.Millisecond}; len(rec.waits) != 2 || rec.waits[0] != want[0] || rec.waits[1] != want[1] {
		t.Errorf("waits %v, want %v (capped)", rec.waits, want)
	}
	if srv.Remaining("m") != 2 {
		t.Errorf("remaining %d", srv.Remaining("m"))
	}
}

func TestContextDeadlineStopsRetrying(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(503, "busy"), llmtest.OK("ok", 1, 1))
	c, rec := newTestClient(t, srv, testSpec("m"), "k", WithRetryPolicy(RetryPolicy{BaseDelay: time.Minute}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Complete(ctx, Request{User: "u"})
	le := asError(t, err)
	if le.Status != 503 || len(rec.waits) != 0 {
		t.Errorf("error %+v waits %v: a wait past the deadline must not start", le, rec.waits)
	}

	// A cancelled context is reported as such, not as a model failure.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.Complete(ctx, Request{User: "u"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	var le2 *Error
	if errors.As(err, &le2) {
		t.Errorf("cancellation reported as *Error %+v", le2)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	spec := testSpec("m")
	spec.BaseURL = "http://" + addr + "/v1"
	c, err := NewClient(spec, "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 2}), WithLogger(quietLogger))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c.sleep = rec.sleep
	_, err = c.Complete(context.Background(), Request{User: "u"})
	le := asError(t, err)
	if !le.Retryable || le.Attempts != 2 || le.Status != 0 || len(rec.waits) != 1 {
		t.Errorf("error %+v waits %v", le, rec.waits)
	}
}

func TestReasoningFallback(t *testing.T) {
	cases := []struct {
		name          string
		rep           llmtest.Reply
		content, reas string
		fromReasoning bool
	}{
		{"openrouter reasoning, empty content", llmtest.Reply{Reasoning: `think... {"action":"HOLD"}`}, `think... {"action":"HOLD"}`, `think... {"action":"HOLD"}`, true},
		{"deepseek reasoning_content, null content", llmtest.Reply{NullContent: true, Reasoning: "R", ReasoningField: "reasoning_content"}, "R", "R", true},
		{"content wins over reasoning", llmtest.Reply{Content: "answer", Reasoning: "thoughts"}, "answer", "thoughts", false},
		{"whitespace content falls back", llmtest.Reply{Content: "\n  ", Reasoning: "R"}, "R", "R", true},
		{"nothing at all", llmtest.Reply{}, "", "", false},
	}
	for _, tc := range cases {
		srv := llmtest.New(t)
		srv.Script("m", tc.rep)
		c, _ := newTestClient(t, srv, testSpec("m"), "k")
		resp, err := c.Complete(context.Background(), Request{User: "u"})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if resp.Content != tc.content || resp.Reasoning != tc.reas || resp.FromReasoning != tc.fromReasoning {
			t.Errorf("%s: got content %q reasoning %q from=%v", tc.name, resp.Content, resp.Reasoning, resp.FromReasoning)
		}
	}
}

func TestCostAccounting(t *testing.T) {
	cases := []struct {
		in, out      Price
		inTok, outTk int64
		want         int64
	}{
		{2_500_000, 10_000_000, 1000, 500, 7500},
		{75_000, 300_000, 7, 0, 1},      // 0.525 µ$ rounds half up to 1
		{75_000, 300_000, 6, 0, 0},      // 0.45 µ$ rounds to 0
		{0, 0, 1_000_000, 1_000_000, 0}, // free model
		{3_000_000, 15_000_000, 1_000_000, 1_000_000, 18_000_000},
		{1, 1, 500_000, 0, 1}, // 0.5 µ$: half up
	}
	for _, tc := range cases {
		s := ModelSpec{InputUSDPerMtok: tc.in, OutputUSDPerMtok: tc.out}
		if got := s.Cost(tc.inTok, tc.outTk); got != tc.want {
			t.Errorf("Cost(%d,%d) at %v/%v = %d, want %d", tc.inTok, tc.outTk, tc.in, tc.out, got, tc.want)
		}
	}
	// Through the wire: usage from the server drives the cost.
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("x", 123_456, 7_890))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	resp, err := c.Complete(context.Background(), Request{User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	// 123456 × 2.5 + 7890 × 10 = 308640 + 78900 = 387540 µ$.
	if resp.CostMicros != 387_540 {
		t.Errorf("cost %d", resp.CostMicros)
	}
}

func TestToolCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "getMarketDetails", Arguments: `{"i":2}`}}},
		llmtest.OK("done", 1, 1))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	tools := []Tool{{Name: "getMarketDetails", Description: "details of market i", Parameters: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}`)}}
	resp, err := c.Complete(context.Background(), Request{User: "u", Tools: tools, ToolChoice: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0] != (ToolCall{ID: "call_1", Name: "getMarketDetails", Arguments: `{"i":2}`}) || resp.FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v finish %q", resp.ToolCalls, resp.FinishReason)
	}
	_, err = c.Complete(context.Background(), Request{User: "u", Tools: tools, ToolChoice: "getMarketDetails", Messages: []Message{
		{Role: RoleAssistant, ToolCalls: resp.ToolCalls},
		{Role: RoleTool, ToolCallID: "call_1", Content: `{"question":"Q"}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests("m")
	var tl []map[string]any
	if err := json.Unmarshal(reqs[0].Body.Tools, &tl); err != nil || len(tl) != 1 || tl[0]["type"] != "function" {
		t.Errorf("tools sent: %s", reqs[0].Body.Tools)
	}
	if string(reqs[0].Body.ToolChoice) != `"auto"` {
		t.Errorf("tool_choice %s", reqs[0].Body.ToolChoice)
	}
	if !strings.Contains(string(reqs[1].Body.ToolChoice), `"getMarketDetails"`) {
		t.Errorf("named tool_choice %s", reqs[1].Body.ToolChoice)
	}
	msgs := reqs[1].Body.Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || !strings.Contains(string(msgs[1].ToolCalls), "call_1") ||
		msgs[2].Role != "tool" || msgs[2].ToolCallID != "call_1" || msgs[2].Text() != `{"question":"Q"}` {
		t.Errorf("follow-up messages: %s", reqs[1].Raw)
	}
	if _, err := c.Complete(context.Background(), Request{User: "u", Messages: []Message{{Role: RoleTool, Content: "x"}}}); err == nil {
		t.Error("tool message without id accepted")
	}
}

func TestNoKeySendsNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-ambient-must-not-leak")
	t.Setenv("OPENAI_ORG_ID", "org-ambient")
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("ok", 1, 1))
	c, _ := newTestClient(t, srv, testSpec("m"), "")
	if _, err := c.Complete(context.Background(), Request{User: "u"}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests("m")[0]
	if strings.Contains(r.Authorization, "ambient") || r.Header.Get("OpenAI-Organization") != "" {
		t.Errorf("ambient credentials leaked: auth %q org %q", r.Authorization, r.Header.Get("OpenAI-Organization"))
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 8 * time.Second}.withDefaults()
	if p.BaseDelay != time.Second || p.MaxDelay != 8*time.Second || p.MaxAttempts != 4 || p.MaxRetryAfter != 2*time.Minute {
		t.Errorf("defaults %+v", p)
	}
}

func TestConcurrentCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle("m", func(r llmtest.ChatRequest) llmtest.Reply {
		return llmtest.OK("echo:"+r.Messages[len(r.Messages)-1].Text(), 2, 3)
	})
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := "q" + strings.Repeat("x", i)
			resp, err := c.Complete(context.Background(), Request{User: u})
			if err == nil && resp.Content != "echo:"+u {
				err = errors.New("crossed answer " + resp.Content)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestTruncatedBodyRetried: a 200 whose body is cut off by the connection
// closing is a connection failure, retried like one; a later complete
// answer is used.
func TestTruncatedBodyRetried(t *testing.T) {
	srv := llmtest.New(t)
	cut := llmtest.OK(`{"action":"HOLD","reasoning":"a long enough answer"}`, 10, 5)
	cut.TruncateAfter = 40
	srv.Script("m", cut, llmtest.OK("fine", 10, 5))
	c, rec := newTestClient(t, srv, testSpec("m"), "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}))
	resp, err := c.Complete(context.Background(), Request{User: "u"})
	if err != nil {
		t.Fatalf("truncated body not retried: %v", err)
	}
	if resp.Attempts != 2 || resp.Content != "fine" || len(rec.waits) != 1 || len(srv.Requests("m")) != 2 {
		t.Errorf("attempts %d content %q waits %v requests %d", resp.Attempts, resp.Content, rec.waits, len(srv.Requests("m")))
	}

	// Cut off every time: reported as a retryable connection error.
	srv.Script("m2", cut, cut)
	c2, _ := newTestClient(t, srv, testSpec("m2"), "k", WithRetryPolicy(RetryPolicy{MaxAttempts: 2}))
	_, err = c2.Complete(context.Background(), Request{User: "u"})
	le := asError(t, err)
	if !le.Retryable || le.Attempts != 2 || !strings.Contains(le.Message, "connection") {
		t.Errorf("error %+v", le)
	}
}

func TestResponseFormatWire(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("{}", 1, 1), llmtest.OK("{}", 1, 1), llmtest.OK("{}", 1, 1))
	c, _ := newTestClient(t, srv, testSpec("m"), "")
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)
	reqs := []Request{
		{User: "u", ResponseFormat: &ResponseFormat{Type: FormatJSONSchema, Name: "answer", Schema: schema, Strict: true}},
		{User: "u", ResponseFormat: &ResponseFormat{Type: FormatJSONObject}},
		{User: "u"},
	}
	for _, r := range reqs {
		if _, err := c.Complete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`{"json_schema":{"name":"answer","strict":true,"schema":{"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}},"type":"json_schema"}`,
		`{"type":"json_object"}`,
		``,
	}
	for i, r := range srv.Requests("m") {
		var body struct {
			RF json.RawMessage `json:"response_format"`
		}
		if err := json.Unmarshal(r.Raw, &body); err != nil {
			t.Fatal(err)
		}
		var got string
		if len(body.RF) > 0 {
			var v any
			json.Unmarshal(body.RF, &v)
			b, _ := json.Marshal(v)
			got = string(b)
		}
		var wv any
		if want[i] != "" {
			json.Unmarshal([]byte(want[i]), &wv)
			b, _ := json.Marshal(wv)
			want[i] = string(b)
		}
		if got != want[i] {
			t.Errorf("request %d response_format %s, want %s", i, got, want[i])
		}
	}
	// A request without a format keeps the cache key it had before the
	// field existed.
	k1, _ := CacheKey("ns", Request{User: "u"})
	b, _ := json.Marshal(Request{User: "u"})
	if strings.Contains(string(b), "response_format") || k1 == "" {
		t.Fatalf("nil format marshals as %s", b)
	}
	if _, err := c.Complete(context.Background(), Request{User: "u", ResponseFormat: &ResponseFormat{Type: "xml"}}); err == nil {
		t.Error("unknown format accepted")
	}
}
