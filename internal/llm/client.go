// Package llm calls chat-completion models on any OpenAI-compatible endpoint
// (OpenRouter by default; vLLM, llama.cpp or OpenAI itself), with a model
// registry, per-call timeouts and an observable retry policy. Each agent's
// calls go through one Chain: the client, a content-addressed cache, and a
// meter for tokens, cost, budgets and metrics.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/retry"
)

// Completer is anything that answers a chat request: the HTTP Client, the
// Chain over it, or a scripted fake. Agents depend on this only.
type Completer interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Model is a Completer that names the registry model answering it: the
// Client and every layer of a Chain over it. The cache keys its entries
// by the spec and the meter prices calls by it, so no layer needs the
// concrete client.
type Model interface {
	Completer
	Spec() ModelSpec
}

// Role of a conversation message after the system prompt.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn after the system prompt and the first user prompt:
// an earlier answer, a follow-up (e.g. a validation error sent back), or a
// tool result.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant turn made (RoleAssistant).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool result to its call (RoleTool).
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Tool is a function the model may call. Parameters is a JSON Schema object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one function call requested by the model; Arguments is the
// model's JSON text, unvalidated.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one chat completion: system prompt, user prompt, then any
// further turns. Zero Temperature/MaxTokens fields use the registry's.
type Request struct {
	System   string    `json:"system,omitempty"`
	User     string    `json:"user,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice is "", "auto", "none", "required" or a tool name to force.
	ToolChoice  string   `json:"tool_choice,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// ResponseFormat asks for structured output; nil sends none (and keeps
	// the cache keys of requests made before the field existed).
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// Response format types.
const (
	FormatJSONSchema = "json_schema" // output constrained to Schema
	FormatJSONObject = "json_object" // any JSON object
)

// ResponseFormat is OpenAI's response_format: a JSON schema the answer must
// follow (Name and Schema required, Strict optional) or plain JSON-object
// mode. Endpoints that do not support a format answer 400.
type ResponseFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

// Response is a successful completion with its accounting.
type Response struct {
	// Content is the answer text. When the provider put the whole answer in
	// a reasoning field and left content empty, Content holds the reasoning
	// and FromReasoning is set.
	Content       string     `json:"content"`
	Reasoning     string     `json:"reasoning,omitempty"`
	FromReasoning bool       `json:"from_reasoning,omitempty"`
	ToolCalls     []ToolCall `json:"tool_calls,omitempty"`
	FinishReason  string     `json:"finish_reason,omitempty"`
	ID            string     `json:"id,omitempty"`    // provider's response id
	Model         string     `json:"model,omitempty"` // model that answered, as reported
	// Refusal is the provider's refusal text (OpenAI's message.refusal);
	// an answer with one is unusable (see Check).
	Refusal      string `json:"refusal,omitempty"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// PromptCachedTokens are the prompt tokens the provider served from its
	// own prompt cache (usage.prompt_tokens_details.cached_tokens), and
	// ReasoningTokens the answer tokens spent on hidden reasoning
	// (usage.completion_tokens_details.reasoning_tokens). Both are already
	// counted in InputTokens and OutputTokens.
	PromptCachedTokens int64 `json:"prompt_cached_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
	// CostMicros is the cost in integer micro-dollars from the registry
	// prices (ModelSpec.Cost). A cached answer keeps the cost it had.
	CostMicros int64 `json:"cost_micros"`
	// BilledMicros is the cost the provider itself reported in its usage
	// object (OpenRouter's usage.cost, in USD), when Billed is set. It is
	// what the provider charges, where CostMicros is the arena's estimate.
	BilledMicros int64 `json:"billed_micros,omitempty"`
	Billed       bool  `json:"billed,omitempty"`
	// Latency is the duration of the successful attempt; Elapsed covers all
	// attempts and backoff waits.
	Latency  time.Duration `json:"latency"`
	Elapsed  time.Duration `json:"elapsed"`
	Attempts int           `json:"attempts"`
	// Cached is set by the Cache when the answer came from storage: the
	// signal by which the meter and the traces count it apart, since it
	// costs nothing now.
	Cached bool `json:"cached,omitempty"`
}

// RetryPolicy bounds retries of retryable failures (429, 408, 5xx,
// timeouts, connection errors). Waits grow as BaseDelay·2^(n−1) capped at
// MaxDelay, with "equal jitter" (half fixed, half random). A Retry-After
// (or Retry-After-Ms) header replaces the computed wait; one longer than
// MaxRetryAfter ends the retries at once. No wait outlives the context.
type RetryPolicy struct {
	MaxAttempts   int // total attempts including the first; default 4
	BaseDelay     time.Duration
	MaxDelay      time.Duration
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy: 4 attempts, 1s base, 30s cap, honour Retry-After ≤ 2m.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts > 0 {
		d.MaxAttempts = p.MaxAttempts
	}
	if p.BaseDelay > 0 {
		d.BaseDelay = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		d.MaxDelay = p.MaxDelay
	}
	if p.MaxRetryAfter > 0 {
		d.MaxRetryAfter = p.MaxRetryAfter
	}
	return d
}

// Option configures a Client.
type Option func(*Client)

// WithRetryPolicy replaces the retry policy; zero fields keep defaults.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.policy = p.withDefaults() } }

// WithHTTPClient sets the HTTP client (e.g. with a custom transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithLogger sets the logger for retries.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// Client calls one registry model. It is safe for concurrent use.
type Client struct {
	spec   ModelSpec
	policy RetryPolicy
	http   *http.Client
	log    *slog.Logger
	oc     openai.Client

	// Seams for tests: waiting and randomness.
	sleep func(ctx context.Context, d time.Duration) error
	rnd   func(n int64) int64
	now   func() time.Time
}

// NewClient returns a client for spec with the given API key ("" for local
// servers without auth). The SDK's own retries are disabled: retries follow
// the Client's RetryPolicy and are counted in Response.Attempts.
func NewClient(spec ModelSpec, apiKey string, opts ...Option) (*Client, error) {
	c := &Client{
		spec:   spec,
		policy: DefaultRetryPolicy,
		http:   &http.Client{},
		log:    slog.Default(),
		sleep:  retry.Sleep,
		rnd:    rand.Int64N,
		now:    time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	if c.spec.Model == "" {
		return nil, fmt.Errorf("llm: agent %q: no model", spec.ID)
	}
	if c.spec.BaseURL == "" {
		return nil, fmt.Errorf("llm: agent %q: no base URL", spec.ID)
	}
	if c.spec.Timeout <= 0 {
		c.spec.Timeout = arena.Duration(DefaultTimeout)
	}
	ro := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(c.spec.BaseURL, "/") + "/"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(c.http),
		// The SDK adds these from OPENAI_ORG_ID / OPENAI_PROJECT_ID; they
		// must not leak to other providers.
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
	}
	if apiKey != "" {
		ro = append(ro, option.WithAPIKey(apiKey))
	} else {
		// No key: do not send the ambient OPENAI_API_KEY to a local server.
		ro = append(ro, option.WithAPIKey(""), option.WithHeaderDel("Authorization"))
	}
	c.oc = openai.NewClient(ro...)
	return c, nil
}

// Spec returns the model spec the client runs with (base URL overrides
// applied).
func (c *Client) Spec() ModelSpec { return c.spec }

// Complete runs the request under the retry policy. On failure the error
// is an *Error (or the context's error when ctx ended); its Attempts is 0
// when the request never reached the provider.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, &Error{Agent: c.spec.ID, Model: c.spec.Model, Message: err.Error(), Err: err, Attempts: 0}
	}
	start := c.now()
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, params)
		if err == nil {
			resp.Attempts = attempt
			resp.Elapsed = c.now().Sub(start)
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("llm %s: %w", c.spec.ID, ctx.Err())
		}
		var le *Error
		if !errors.As(err, &le) {
			return Response{}, err
		}
		le.Attempts = attempt
		if !le.Retryable || attempt >= c.policy.MaxAttempts {
			return Response{}, le
		}
		wait, ok := retry.Wait(le.RetryAfter, le.RetryAfter > 0, retry.Backoff(attempt, c.policy.BaseDelay, c.policy.MaxDelay, c.rnd), c.policy.MaxRetryAfter)
		if !ok {
			le.Message = strings.TrimSpace(le.Message + fmt.Sprintf(" (Retry-After %v exceeds the policy's %v)", le.RetryAfter, c.policy.MaxRetryAfter))
			return Response{}, le
		}
		if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
			// Waiting would outlive the caller; report the real failure.
			return Response{}, le
		}
		c.log.Warn("llm call failed; retrying", "agent", c.spec.ID, "model", c.spec.Model,
			"attempt", attempt, "status", le.Status, "timeout", le.Timeout, "wait", wait, "error", le.Message)
		if err := c.sleep(ctx, wait); err != nil {
			return Response{}, fmt.Errorf("llm %s: %w", c.spec.ID, err)
		}
	}
}

// attempt makes one HTTP call under the per-call timeout and classifies
// its failure.
func (c *Client) attempt(ctx context.Context, params openai.ChatCompletionNewParams) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, time.Duration(c.spec.Timeout))
	defer cancel()
	var httpResp *http.Response
	t0 := c.now()
	cc, err := c.oc.Chat.Completions.New(actx, params, option.WithResponseInto(&httpResp))
	latency := c.now().Sub(t0)
	if err != nil {
		return Response{}, c.classify(ctx, actx, httpResp, err)
	}
	if cc == nil {
		// The SDK decodes a JSON null body to no completion and no error.
		e := c.newError(http.StatusOK, "response body is null", nil)
		e.Class = ClassUnparseable
		return Response{}, e
	}
	if len(cc.Choices) == 0 || cc.JSON.ExtraFields["error"].Valid() || cc.Choices[0].FinishReason == "error" {
		// Some gateways answer 200 with an error object instead of (or
		// beside) choices: the generation failed after the status was sent.
		return Response{}, c.bodyError(cc.RawJSON())
	}
	ch := cc.Choices[0]
	msg := ch.Message
	out := Response{
		Content:            msg.Content,
		Reasoning:          reasoningOf(msg),
		Refusal:            msg.Refusal,
		FinishReason:       ch.FinishReason,
		ID:                 cc.ID,
		Model:              cc.Model,
		InputTokens:        cc.Usage.PromptTokens,
		OutputTokens:       cc.Usage.CompletionTokens,
		PromptCachedTokens: cc.Usage.PromptTokensDetails.CachedTokens,
		ReasoningTokens:    cc.Usage.CompletionTokensDetails.ReasoningTokens,
		Latency:            latency,
	}
	out.BilledMicros, out.Billed = billedCost(cc.Usage.JSON.ExtraFields["cost"].Raw())
	for i, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := tc.ID
		if id == "" {
			// Some providers (Gemini's OpenAI-compatible endpoint) send
			// calls without ids, but a tool result must name its call.
			id = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if strings.TrimSpace(out.Content) == "" && out.Reasoning != "" && len(out.ToolCalls) == 0 {
		out.Content = out.Reasoning
		out.FromReasoning = true
	}
	out.CostMicros = c.spec.Cost(out.InputTokens, out.OutputTokens)
	return out, nil
}

// billedCost reads a provider-reported cost in USD (a JSON number such as
// OpenRouter's usage.cost) as micro-dollars, rounded half away from zero.
// It reports false when there is none or it is not a non-negative number.
func billedCost(raw string) (int64, bool) {
	var n json.Number
	if raw == "" || json.Unmarshal([]byte(raw), &n) != nil {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || r.Sign() < 0 {
		return 0, false
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	// Round half up: add one half and take the floor of the fraction.
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// reasoningOf reads the non-standard reasoning field: "reasoning"
// (OpenRouter) or "reasoning_content" (DeepSeek, vLLM).
func reasoningOf(msg openai.ChatCompletionMessage) string {
	for _, k := range []string{"reasoning", "reasoning_content"} {
		f, ok := msg.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (c *Client) newError(status int, msg string, cause error) *Error {
	return &Error{Agent: c.spec.ID, Model: c.spec.Model, Status: status, Retryable: retryableStatus(status), Message: msg, Err: cause}
}

// bodyError describes a 200 response that carries no answer: an error
// object in place of (or beside) the choices, as gateways send when the
// generation failed after the status was written, or no choices at all
// (a JSON body that is not a chat completion).
// The error's code decides retryability.
func (c *Client) bodyError(raw string) *Error {
	var body struct {
		Error *struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error != nil {
		status := http.StatusBadGateway // unknown upstream failure: retry
		if f, ok := body.Error.Code.(float64); ok && f >= 400 && f < 600 {
			status = int(f)
		}
		e := c.newError(status, "error in 200 response: "+body.Error.Message, nil)
		e.Class = ClassInStream
		return e
	}
	e := c.newError(http.StatusOK, "response has no choices", nil)
	e.Class = ClassUnparseable
	e.Retryable = true
	return e
}

func (c *Client) classify(ctx, actx context.Context, httpResp *http.Response, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if actx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Agent: c.spec.ID, Model: c.spec.Model, Retryable: true, Timeout: true, Class: ClassTimeout,
			Message: fmt.Sprintf("no answer within %v", time.Duration(c.spec.Timeout)), Err: err}
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		e := c.newError(ae.StatusCode, providerMessage(ae), err)
		e.Class = classOf(ae.StatusCode, ae.Code, ae.Type, e.Message)
		if ae.Response != nil {
			e.RetryAfter, _ = retry.After(ae.Response.Header, c.now())
		}
		return e
	}
	if httpResp != nil && httpResp.StatusCode >= 400 {
		// Error body the SDK could not parse (HTML from a proxy, …).
		e := c.newError(httpResp.StatusCode, "unparseable error body", err)
		e.Class = classOf(httpResp.StatusCode, "", "", "")
		e.RetryAfter, _ = retry.After(httpResp.Header, c.now())
		return e
	}
	if httpResp != nil {
		// A success (or a status no provider sends, 1xx or 3xx) whose
		// body the SDK could not take.
		if bodyCut(err) {
			// The connection failed while the body was read (reset,
			// closed short of Content-Length): a connection error like
			// any other, worth another attempt.
			e := c.newError(0, "connection: response body cut off: "+err.Error(), err)
			e.Class = ClassConnection
			e.Retryable = true
			return e
		}
		// The body did not decode: a broken response, not worth repeating.
		e := c.newError(httpResp.StatusCode, "decode response: "+err.Error(), err)
		e.Class = ClassUnparseable
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, net.ErrClosed) || isConnError(err) {
		e := c.newError(0, "connection: "+err.Error(), err)
		e.Class = ClassConnection
		e.Retryable = true
		return e
	}
	// No response arrived and the cause is not recognised: treated as a
	// connection failure, but not retried.
	e := c.newError(0, err.Error(), err)
	e.Class = ClassConnection
	return e
}

// bodyCut reports an error from reading a response body that ended early
// (the connection closed or reset), as opposed to a complete body that
// does not decode.
func bodyCut(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &ne) || errors.Is(err, net.ErrClosed)
}

func isConnError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "EOF")
}

// providerMessage extracts the provider's error message, which the SDK's
// Error() deliberately omits.
func providerMessage(ae *openai.Error) string {
	if ae.Message != "" {
		return ae.Message
	}
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(ae.RawJSON()), &body) == nil && body.Message != "" {
		return body.Message
	}
	return ""
}

// params converts a Request to the SDK's wire parameters.
func (c *Client) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.spec.Model)}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	if req.User != "" {
		p.Messages = append(p.Messages, openai.UserMessage(req.User))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			if m.ToolCallID == "" {
				return p, fmt.Errorf("messages[%d]: tool message without tool_call_id", i)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			return p, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if len(p.Messages) == 0 {
		return p, errors.New("empty request: no messages")
	}
	temp := c.spec.Temperature
	if req.Temperature != nil {
		temp = *req.Temperature
	}
	// Always sent: "omitzero" would drop 0, and 0 is the arena's default
	// while providers default to 1.
	p.Temperature = openai.Float(temp)
	if mt := req.MaxTokens; mt > 0 {
		p.MaxTokens = openai.Int(int64(mt))
	} else if c.spec.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(c.spec.MaxTokens))
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
			}
			fd.Parameters = shared.FunctionParameters(schema)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case FormatJSONObject:
			p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
		case FormatJSONSchema:
			var schema map[string]any
			if err := json.Unmarshal(rf.Schema, &schema); err != nil {
				return p, fmt.Errorf("response format %q: schema: %w", rf.Name, err)
			}
			js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: rf.Name, Schema: schema}
			if rf.Strict {
				js.Strict = openai.Bool(true)
			}
			p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
		default:
			return p, fmt.Errorf("unknown response format type %q", rf.Type)
		}
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
	default:
		p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice})
	}
	return p, nil
}
