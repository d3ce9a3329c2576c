package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/shareddata"
)

func TestClassOfErrorResponse(t *testing.T) {
	for _, c := range []struct {
		status         int
		code, typ, msg string
		want           Class
	}{
		{400, "tool_use_failed", "invalid_request_error", "Tool call validation failed", ClassToolUse},
		{404, "model_not_found", "invalid_request_error", "The model `x` does not exist", ClassUnknownModel},
		{404, "", "", "Not Found", ClassUnknownModel},
		{400, "context_length_exceeded", "invalid_request_error", "", ClassContextLength},
		// Providers without the code say it in words.
		{400, "", "", "This model's maximum context length is 8192 tokens", ClassContextLength},
		{413, "", "", "prompt exceeds the context window", ClassContextLength},
		{429, "rate_limit_exceeded", "tokens", "", ClassRateLimit},
		{429, "", "", "", ClassRateLimit},
		{401, "invalid_api_key", "", "", ClassAuth},
		{402, "", "", "Insufficient credits", ClassAuth},
		{400, "unsupported_value", "invalid_request_error", "Unsupported value: 'messages[0].role'", ClassBadRequest},
		{422, "", "", "", ClassBadRequest},
		{408, "", "", "", ClassTimeout},
		{503, "", "", "overloaded", ClassServer},
	} {
		if got := classOf(c.status, c.code, c.typ, c.msg); got != c.want {
			t.Errorf("classOf(%d, %q, %q, %q) = %q, want %q", c.status, c.code, c.typ, c.msg, got, c.want)
		}
	}
}

func TestResponseCheck(t *testing.T) {
	for _, c := range []struct {
		r    Response
		want Class
	}{
		{Response{Content: `{"a":1}`, FinishReason: "stop"}, ""},
		{Response{ToolCalls: []ToolCall{{ID: "c", Name: "f"}}, FinishReason: "tool_calls"}, ""},
		{Response{Refusal: "I can't help with that."}, ClassRefusal},
		{Response{FinishReason: "content_filter"}, ClassRefusal},
		{Response{Content: `{"action":"HOLD","reasoning":"cut`, FinishReason: "length"}, ClassLengthCut},
		// A complete-looking answer is still cut off when the provider says so.
		{Response{Content: `{"action":"HOLD"}`, FinishReason: "length"}, ClassLengthCut},
		{Response{Content: `{"decision":"YES","confidence":0.`, FinishReason: "model_length"}, ClassLengthCut},
	} {
		err := c.r.Check()
		if got := ClassOf(err); got != c.want || (err == nil) != (c.want == "") {
			t.Errorf("%+v: Check() = %v (class %q), want class %q", c.r, err, got, c.want)
		}
	}
}

func TestBilledCost(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"0.0006125", 613, true}, // 612.5 µ$ rounds half up
		{"0", 0, true},
		{"1.5", 1_500_000, true},
		{"2e-6", 2, true},
		{"0.0000004", 0, true},
		{"", 0, false},
		{"null", 0, false},
		{`"0.1"`, 100_000, true}, // a number sent as a string is still the number
		{`"cheap"`, 0, false},
		{"-0.1", 0, false},
		{"1e300", 0, false},
	} {
		got, ok := billedCost(c.raw)
		if got != c.want || ok != c.ok {
			t.Errorf("billedCost(%q) = %d, %v; want %d, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

// bodyTransport answers every request with one status and body, in
// memory: the fuzz target's provider.
type bodyTransport struct {
	status int
	ctype  string
	body   []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{"Content-Type": {b.ctype}}
	return &http.Response{StatusCode: b.status, Status: strconv.Itoa(b.status), Header: h, Request: r,
		Body: io.NopCloser(bytes.NewReader(b.body)), ContentLength: int64(len(b.body))}, nil
}

// FuzzResponse feeds arbitrary bodies to the client as a provider's answer.
// The seeds are the recorded responses (when ../shared/data is present)
// and the project-made ones. Whatever arrives, the call returns a response
// or an *Error with a failure class, never panics, and a returned
// response's tool calls all carry ids and names.
func FuzzResponse(f *testing.F) {
	seeds := llmtest.ProjectMade()
	if dir, ok := shareddata.Find(); ok {
		rec, err := llmtest.LoadCassettes(dir + "/llm-responses")
		if err == nil {
			seeds = append(seeds, rec...)
		}
	}
	for _, ex := range seeds {
		f.Add(ex.Status, ex.Header["Content-Type"], []byte(ex.Body))
	}
	spec := ModelSpec{ID: "fuzz", Model: "m", BaseURL: "http://provider.invalid/v1", Timeout: 0}
	f.Fuzz(func(t *testing.T, status int, ctype string, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		c, err := NewClient(spec, "", WithHTTPClient(&http.Client{Transport: bodyTransport{status, ctype, body}}),
			WithLogger(slog.New(slog.DiscardHandler)), WithRetryPolicy(RetryPolicy{MaxAttempts: 1}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := c.Complete(ctx, Request{User: "hi"})
		if err != nil {
			var le *Error
			if !errors.As(err, &le) || le.Class == "" {
				t.Fatalf("status %d body %q: unclassified error %v", status, body, err)
			}
			return
		}
		for _, tc := range r.ToolCalls {
			if tc.ID == "" {
				t.Fatalf("body %q: tool call without id: %+v", body, tc)
			}
		}
		if r.Billed && r.BilledMicros < 0 {
			t.Fatalf("body %q: negative billed cost %d", body, r.BilledMicros)
		}
		_ = r.Check()
	})
}
