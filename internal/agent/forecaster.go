package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/forecast-arena/arena/internal/llm/jsonout"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/llm"
)

// DefaultMaxSteps bounds the model calls of one round forecast.
const DefaultMaxSteps = 8

// HistoryDays and HistoryPoints bound what getPriceHistory returns: the
// last 7 days of stored prices, sampled to at most 30 points.
const (
	HistoryDays   = 7
	HistoryPoints = 30
)

// Tool names of the round forecaster.
const (
	ToolDetails = "getMarketDetails"
	ToolHistory = "getPriceHistory"
	ToolSearch  = "searchWeb"
	ToolSubmit  = "submitPredictions"
)

// TaskMarket is one market of a round as listed to the model: by index,
// never by an id.
type TaskMarket struct {
	Index     int       `json:"index"`
	Question  string    `json:"question"`
	Category  string    `json:"category,omitempty"`
	CloseTime time.Time `json:"close_time,omitzero"`
}

// MarketDetails is getMarketDetails' answer.
type MarketDetails struct {
	Index      int       `json:"index"`
	Question   string    `json:"question"`
	Criteria   string    `json:"resolution_criteria,omitempty"`
	Background string    `json:"background,omitempty"`
	Category   string    `json:"category,omitempty"`
	CloseTime  time.Time `json:"close_time,omitzero"`
	Outcomes   []string  `json:"outcomes,omitempty"`
	// Price is the current YES price and PriceTime when it held; nil when
	// none is known.
	Price     *float64  `json:"price"`
	PriceTime time.Time `json:"price_time,omitzero"`
}

// HistoryPoint is one YES price of getPriceHistory's answer.
type HistoryPoint struct {
	T time.Time `json:"t"`
	P float64   `json:"p"`
}

// MarketData answers the tools about a round's markets as of the round's
// time: live, from the arena's API or store; in a backtest, as of each
// question's freeze time (nothing dated later may be returned).
type MarketData interface {
	Details(ctx context.Context, index int) (MarketDetails, error)
	History(ctx context.Context, index int) ([]HistoryPoint, error)
}

// Searcher answers searchWeb; the tool is offered only when one is set.
type Searcher interface {
	Search(ctx context.Context, query string) (any, error)
}

// RoundTask is one round to forecast.
type RoundTask struct {
	Round   string // round id, for accounting and traces
	Markets []TaskMarket
	Data    MarketData
	Search  Searcher // nil: searchWeb is not offered
}

// Forecaster is the forecast track's LLM agent: it gives a model the
// round's questions and tools, and takes its submitPredictions call (or,
// for a model without tools, a JSON answer) as the forecast. It holds no
// state between rounds and is safe for concurrent use.
type Forecaster struct {
	AgentID string
	LLM     llm.Completer
	// JSONOnly asks for a JSON answer instead of tool calls (a model
	// without tool support); every market's details are then in the prompt.
	JSONOnly bool
	// MaxSteps bounds the model calls (0: DefaultMaxSteps).
	MaxSteps int
}

// ToolCallTrace is one tool call and what it returned.
type ToolCallTrace struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
	Error     bool   `json:"error,omitempty"`
}

// StepTrace is one model call.
type StepTrace struct {
	Raw          string          `json:"raw"`
	Reasoning    string          `json:"reasoning,omitempty"`
	ToolCalls    []ToolCallTrace `json:"tool_calls,omitempty"`
	Note         string          `json:"note,omitempty"` // what was sent back instead of tool results
	Error        string          `json:"error,omitempty"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	CostMicros   int64           `json:"cost_micros"`
	BilledMicros int64           `json:"billed_micros,omitempty"` // the provider's reported cost, when it sends one
	LatencyMS    int64           `json:"latency_ms"`
	Cached       bool            `json:"cached,omitempty"`
}

// Trace is everything one agent was shown and answered in one round.
type Trace struct {
	Agent  string      `json:"agent"`
	Round  string      `json:"round"`
	Mode   string      `json:"mode"` // "tools" or "json"
	System string      `json:"system"`
	User   string      `json:"user"`
	Tools  []string    `json:"tools,omitempty"`
	Steps  []StepTrace `json:"steps"`
	// PriceShown says, per market index, whether a market price reached
	// the model (in the prompt or a tool's answer).
	PriceShown []bool `json:"price_shown"`
	// Members are an ensemble's member forecasts (empty for a model).
	Members     []MemberForecast `json:"members,omitempty"`
	Predictions []uint16         `json:"predictions,omitempty"`
	Reasoning   []string         `json:"reasoning,omitempty"`
	// Failure says why nothing was submitted ("" when it was).
	Failure      string `json:"failure,omitempty"`
	Calls        int64  `json:"calls"`
	CachedCalls  int64  `json:"cached_calls"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	CostMicros   int64  `json:"cost_micros"`
	// BilledMicros is what providers reported charging over BilledCalls
	// of the Calls (see llm.Usage).
	BilledMicros int64 `json:"billed_micros"`
	BilledCalls  int64 `json:"billed_calls"`
	LatencyMS    int64 `json:"latency_ms"`
}

// Submitted reports whether the model submitted a valid forecast.
func (t *Trace) Submitted() bool { return t.Predictions != nil }

func (t *Trace) count(r llm.Response) StepTrace {
	st := StepTrace{Raw: r.Content, Reasoning: r.Reasoning, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		LatencyMS: r.Latency.Milliseconds(), Cached: r.Cached}
	if r.Cached {
		t.CachedCalls++
	} else {
		t.Calls++
		st.CostMicros = r.CostMicros
		t.CostMicros += r.CostMicros
		if r.Billed {
			st.BilledMicros = r.BilledMicros
			t.BilledMicros += r.BilledMicros
			t.BilledCalls++
		}
		t.InputTokens += r.InputTokens
		t.OutputTokens += r.OutputTokens
		t.LatencyMS += r.Elapsed.Milliseconds()
	}
	return st
}

// Forecast runs one round. A model that never submits a valid forecast
// within MaxSteps, or whose budget runs out, yields a trace with Failure
// set and no predictions (nothing must be committed). A failed model call
// (after the llm package's retries) returns the trace so far and the
// error. The calls are accounted under task.Round (llm.WithRound).
func (f *Forecaster) Forecast(ctx context.Context, task RoundTask) (*Trace, error) {
	k := len(task.Markets)
	if k == 0 {
		return nil, fmt.Errorf("agent %s: round %s has no markets", f.AgentID, task.Round)
	}
	steps := f.MaxSteps
	if steps <= 0 {
		steps = DefaultMaxSteps
	}
	ctx = llm.WithRound(ctx, task.Round)
	tr := &Trace{Agent: f.AgentID, Round: task.Round, PriceShown: make([]bool, k)}
	var req llm.Request
	if f.JSONOnly {
		tr.Mode = "json"
		user, err := f.jsonPrompt(ctx, task, tr)
		if err != nil {
			return tr, err
		}
		req = llm.Request{System: jsonSystemPrompt(k), User: user}
	} else {
		tr.Mode = "tools"
		req = llm.Request{System: toolSystemPrompt(k, task.Search != nil), User: listPrompt(task.Markets), ToolChoice: "auto"}
		req.Tools = forecastTools(k, task.Search != nil)
		for _, t := range req.Tools {
			tr.Tools = append(tr.Tools, t.Name)
		}
	}
	tr.System, tr.User = req.System, req.User
	for step := 1; step <= steps; step++ {
		resp, err := f.LLM.Complete(ctx, req)
		if err != nil {
			tr.Steps = append(tr.Steps, StepTrace{Error: err.Error()})
			if errors.Is(err, llm.ErrBudget) {
				tr.Failure = "stopped by budget: " + err.Error()
				return tr, nil
			}
			return tr, fmt.Errorf("agent %s: round %s: model call %d: %w", f.AgentID, task.Round, step, err)
		}
		st := tr.count(resp)
		unusable := Unusable(resp)
		if unusable == nil && len(resp.ToolCalls) > 0 && !f.JSONOnly {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
			done := false
			for _, call := range resp.ToolCalls {
				res, isErr, sub := f.runTool(ctx, task, tr, call)
				st.ToolCalls = append(st.ToolCalls, ToolCallTrace{ID: call.ID, Name: call.Name, Arguments: call.Arguments, Result: res, Error: isErr})
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: res})
				if sub != nil && !done {
					tr.Predictions, tr.Reasoning = sub.preds, sub.reasons
					done = true
				}
			}
			tr.Steps = append(tr.Steps, st)
			if done {
				return tr, nil
			}
			continue
		}
		// A text answer: the JSON form is accepted from any model.
		perr := unusable
		var preds []uint16
		var reasons []string
		if perr == nil {
			preds, reasons, perr = ParsePredictions(resp.Content, k)
		}
		if perr == nil {
			tr.Steps = append(tr.Steps, st)
			tr.Predictions, tr.Reasoning = preds, reasons
			return tr, nil
		}
		st.Note = arena.ErrorMessage(perr)
		tr.Steps = append(tr.Steps, st)
		var again string
		if f.JSONOnly {
			again = fmt.Sprintf("Your answer could not be used: %s\nReply with one JSON object {\"predictions\":[%d integers 0-10000],\"reasoning\":[%d strings]}.", arena.ErrorMessage(perr), k, k)
		} else {
			again = fmt.Sprintf("No forecast was submitted. Call %s with exactly %d integers from 0 to 10000, one per market in index order.", ToolSubmit, k)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: Excerpt(resp.Content)}, llm.Message{Role: llm.RoleUser, Content: again})
	}
	tr.Failure = fmt.Sprintf("no valid forecast submitted within %d model calls", steps)
	return tr, nil
}

type submission struct {
	preds   []uint16
	reasons []string
}

// runTool executes one call; the result text goes back to the model.
func (f *Forecaster) runTool(ctx context.Context, task RoundTask, tr *Trace, call llm.ToolCall) (string, bool, *submission) {
	k := len(task.Markets)
	fail := func(format string, args ...any) (string, bool, *submission) {
		b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
		return string(b), true, nil
	}
	ok := func(v any) (string, bool, *submission) {
		b, err := json.Marshal(v)
		if err != nil {
			return fail("internal error: %v", err)
		}
		return string(b), false, nil
	}
	index := func() (int, error) {
		var a struct {
			Index *json.Number `json:"index"`
		}
		if err := json.Unmarshal([]byte(call.Arguments), &a); err != nil || a.Index == nil {
			return 0, fmt.Errorf(`arguments must be {"index": N} with N from 0 to %d`, k-1)
		}
		i, err := a.Index.Int64()
		if err != nil || i < 0 || int(i) >= k {
			return 0, fmt.Errorf("index %s out of range: markets are 0 to %d", a.Index.String(), k-1)
		}
		return int(i), nil
	}
	switch call.Name {
	case ToolDetails:
		i, err := index()
		if err != nil {
			return fail("%v", err)
		}
		d, err := task.Data.Details(ctx, i)
		if err != nil {
			return fail("details of market %d unavailable: %v", i, err)
		}
		d.Index = i
		if d.Price != nil {
			tr.PriceShown[i] = true
		}
		return ok(d)
	case ToolHistory:
		i, err := index()
		if err != nil {
			return fail("%v", err)
		}
		h, err := task.Data.History(ctx, i)
		if err != nil {
			return fail("price history of market %d unavailable: %v", i, err)
		}
		if len(h) > 0 {
			tr.PriceShown[i] = true
		}
		return ok(map[string]any{"index": i, "days": HistoryDays, "points": h})
	case ToolSearch:
		if task.Search == nil {
			return fail("searchWeb is not available")
		}
		var a struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(call.Arguments), &a); err != nil || strings.TrimSpace(a.Query) == "" {
			return fail(`arguments must be {"query": "..."}`)
		}
		res, err := task.Search.Search(ctx, a.Query)
		if err != nil {
			return fail("search failed: %v", err)
		}
		return ok(res)
	case ToolSubmit:
		preds, reasons, err := parseSubmitArgs(call.Arguments, k)
		if err != nil {
			return fail("%s", arena.ErrorMessage(err))
		}
		s, _, _ := ok(map[string]any{"accepted": true, "predictions": preds})
		return s, false, &submission{preds, reasons}
	}
	return fail("unknown tool %q; the tools are %s", call.Name, strings.Join(tr.Tools, ", "))
}

func forecastTools(k int, search bool) []llm.Tool {
	idx := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"index":{"type":"integer","minimum":0,"maximum":%d,"description":"market index"}},"required":["index"]}`, k-1))
	tools := []llm.Tool{
		{Name: ToolDetails, Description: "Question, resolution criteria, background, category, close time, outcomes, and the current market price (probability of YES) with its time, of one market.", Parameters: idx},
		{Name: ToolHistory, Description: fmt.Sprintf("The market's YES price over the last %d days, at most %d points.", HistoryDays, HistoryPoints), Parameters: idx},
	}
	if search {
		tools = append(tools, llm.Tool{Name: ToolSearch, Description: "Search the web; returns sources with titles, URLs, dates and highlights.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)})
	}
	tools = append(tools, llm.Tool{Name: ToolSubmit,
		Description: fmt.Sprintf("Submit the final forecast: exactly %d integers from 0 to 10000 (probability of YES in basis points), in market index order, and one short reasoning per market. Call once, last.", k),
		Parameters:  json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"predictions":{"type":"array","items":{"type":"integer","minimum":0,"maximum":10000},"minItems":%d,"maxItems":%d},"reasoning":{"type":"array","items":{"type":"string"}}},"required":["predictions","reasoning"]}`, k, k))})
	return tools
}

func toolSystemPrompt(k int, search bool) string {
	s := fmt.Sprintf(`You are a forecaster in a forecasting tournament scored by the Brier score. You are given %d yes/no questions, referenced by index 0 to %d. For each, estimate the probability that it resolves YES.

Use the tools to study the questions: %s(index) gives the full question, resolution criteria and current market price; %s(index) gives recent prices.`, k, k-1, ToolDetails, ToolHistory)
	if search {
		s += fmt.Sprintf(" %s(query) searches the web.", ToolSearch)
	}
	s += fmt.Sprintf(`

Finish by calling %s once with exactly %d integers from 0 to 10000 (probability of YES in basis points, e.g. 7250 = 72.5%%) in index order, and a short reasoning for each market. An invalid submission is returned to you as an error; correct it and submit again.`, ToolSubmit, k)
	return s
}

func listPrompt(ms []TaskMarket) string {
	var b strings.Builder
	b.WriteString("Questions of this round:\n")
	for i, m := range ms {
		fmt.Fprintf(&b, "%d. %s", i, m.Question)
		if m.Category != "" {
			fmt.Fprintf(&b, " [%s]", m.Category)
		}
		if !m.CloseTime.IsZero() {
			fmt.Fprintf(&b, " (closes %s)", m.CloseTime.UTC().Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func jsonSystemPrompt(k int) string {
	return fmt.Sprintf(`You are a forecaster in a forecasting tournament scored by the Brier score. You are given %d yes/no questions, indexed 0 to %d, with their details and market prices. For each, estimate the probability that it resolves YES.

Answer with one JSON object and nothing after it:
{"predictions": [%d integers from 0 to 10000, the probability of YES in basis points, in index order], "reasoning": [%d short strings, one per question]}`, k, k-1, k, k)
}

// jsonPrompt lists every market with its details and recent prices (a
// model without tools cannot ask for them).
func (f *Forecaster) jsonPrompt(ctx context.Context, task RoundTask, tr *Trace) (string, error) {
	var b strings.Builder
	for i := range task.Markets {
		d, err := task.Data.Details(ctx, i)
		if err != nil {
			return "", fmt.Errorf("agent %s: round %s: details of market %d: %w", f.AgentID, task.Round, i, err)
		}
		h, err := task.Data.History(ctx, i)
		if err != nil {
			return "", fmt.Errorf("agent %s: round %s: history of market %d: %w", f.AgentID, task.Round, i, err)
		}
		d.Index = i
		if d.Price != nil || len(h) > 0 {
			tr.PriceShown[i] = true
		}
		db, _ := json.Marshal(d)
		hb, _ := json.Marshal(h)
		fmt.Fprintf(&b, "Question %d: %s\nPrice history (last %d days): %s\n\n", i, db, HistoryDays, hb)
	}
	return b.String(), nil
}

// parseSubmitArgs reads submitPredictions' arguments strictly: a JSON
// object whose "predictions" holds exactly k integers 0..10000.
func parseSubmitArgs(args string, k int) ([]uint16, []string, error) {
	obj, err := jsonout.Decode(args)
	if err != nil {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeBadPredictions, `arguments are not a JSON object: %s; want {"predictions":[...],"reasoning":[...]}`, jsonErr(err))
	}
	return predictionsFrom(obj, k)
}

// maxReasonBytes caps one market's reasoning so that a round's canonical
// reasoning stays under the server's cap.
func maxReasonBytes(k int) int { return (forecast.MaxReasoningBytes - 1024) / max(k, 1) / 2 }
