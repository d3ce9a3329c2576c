package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/trading"
)

// DefaultRetries is how many corrections a model is asked for after an
// unusable answer.
const DefaultRetries = 1

// ExcerptChars is how much of an unusable answer is sent back with the
// error (the first 500 characters).
const ExcerptChars = 500

// SystemDefaultPrefix starts the reasoning of a HOLD the system chose
// because the model never produced a usable action.
const SystemDefaultPrefix = "[system default] "

// Trader is the trading-track LLM agent: it shows a model the decision prompt
// and turns its answer into a valid action. It holds no state between
// calls and is safe for concurrent use.
type Trader struct {
	AgentID string
	LLM     llm.Completer
	// Retries is the number of corrections after the first answer;
	// NewTrader sets DefaultRetries. Negative means none.
	Retries int
}

// NewTrader returns a Trader with the default retry count.
func NewTrader(agentID string, c llm.Completer) *Trader {
	return &Trader{AgentID: agentID, LLM: c, Retries: DefaultRetries}
}

// Attempt is one model answer and what became of it.
type Attempt struct {
	Raw           string         `json:"raw"`
	Reasoning     string         `json:"reasoning,omitempty"`
	FromReasoning bool           `json:"from_reasoning,omitempty"`
	Model         string         `json:"model,omitempty"`
	Error         string         `json:"error,omitempty"` // why it was rejected; "" when used
	Code          string         `json:"code,omitempty"`
	CallFailed    bool           `json:"call_failed,omitempty"` // the model call itself failed
	InputTokens   int64          `json:"input_tokens"`
	OutputTokens  int64          `json:"output_tokens"`
	Cost          trading.Micros `json:"cost_micros"`
	Latency       time.Duration  `json:"latency"`
	CallAttempts  int            `json:"call_attempts"` // HTTP attempts inside the call (llm retries)
	Cached        bool           `json:"cached,omitempty"`
}

// Decision is the LLM trader's full record of one weekly decision: prompts,
// every attempt, the action taken and the totals. The decider adapter turns
// it into a trading.Decision (what the engine executes and audits), which
// the engine stores as an arena.Decision row.
type Decision struct {
	AgentID       string         `json:"agent_id"`
	Prompt        Prompt         `json:"prompt"`
	Action        trading.Action `json:"action"`
	Attempts      []Attempt      `json:"attempts"`
	Retries       int            `json:"retries"` // corrections requested
	SystemDefault bool           `json:"system_default"`
	InputTokens   int64          `json:"input_tokens"`
	OutputTokens  int64          `json:"output_tokens"`
	Cost          trading.Micros `json:"cost_micros"`
	Latency       time.Duration  `json:"latency"`
}

// Decide asks the model for this week's action. An answer that does not
// parse or breaks the rules (ParseAction, Validate) is sent back as an
// assistant turn holding its first 500 characters followed by a user turn
// with the error, up to Retries times; only the latest bad answer is sent,
// so the context stays bounded. When no answer is usable the action is a
// HOLD whose reasoning starts with SystemDefaultPrefix, and SystemDefault
// is set.
//
// A failed model call (after the llm package's own retries) ends the
// decision with an error and the record so far: an outage is a retryable
// failure, not a decision.
func (t *Trader) Decide(ctx context.Context, s *trading.Snapshot) (*Decision, error) {
	p := BuildPrompt(s)
	d := &Decision{AgentID: t.AgentID, Prompt: p}
	req := llm.Request{System: p.System, User: p.User}
	retries := max(t.Retries, 0)
	var lastErr error
	for i := 0; i <= retries; i++ {
		resp, err := t.LLM.Complete(ctx, req)
		if err != nil {
			d.Attempts = append(d.Attempts, Attempt{Error: err.Error(), CallFailed: true})
			return d, fmt.Errorf("agent %s: model call %d: %w", t.AgentID, i+1, err)
		}
		at := Attempt{Raw: resp.Content, Reasoning: resp.Reasoning, FromReasoning: resp.FromReasoning, Model: resp.Model,
			InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, Cost: trading.Micros(resp.CostMicros),
			Latency: resp.Latency, CallAttempts: resp.Attempts, Cached: resp.Cached}
		d.InputTokens += resp.InputTokens
		d.OutputTokens += resp.OutputTokens
		d.Cost += at.Cost
		d.Latency += resp.Elapsed
		var a trading.Action
		err = Unusable(resp)
		if err == nil {
			a, err = ParseAction(resp.Content)
		}
		if err == nil {
			a, err = Validate(a, s)
		}
		if err == nil {
			d.Attempts = append(d.Attempts, at)
			d.Action = a
			return d, nil
		}
		lastErr = err
		at.Error, at.Code = arena.ErrorMessage(err), arena.ErrorCode(err)
		d.Attempts = append(d.Attempts, at)
		if i < retries {
			d.Retries++
			req.Messages = []llm.Message{
				{Role: llm.RoleAssistant, Content: Excerpt(resp.Content)},
				{Role: llm.RoleUser, Content: CorrectionPrompt(err)},
			}
		}
	}
	d.SystemDefault = true
	d.Action = trading.Hold(fmt.Sprintf("%sHOLD because no usable action came from the model after %d attempt(s); last error: %s",
		SystemDefaultPrefix, len(d.Attempts), arena.ErrorMessage(lastErr)))
	return d, nil
}

// Unusable rejects an answer the provider completed but that is no answer:
// a refusal or one cut off by max_tokens (llm.Response.Check), with the
// failure class as its code, so it is sent back and recorded like any
// other unusable answer rather than parsed.
func Unusable(resp llm.Response) error {
	err := resp.Check()
	if err == nil {
		return nil
	}
	return arena.Rejectf(arena.EINVALID, string(llm.ClassOf(err)), "%s", err.Error())
}

// Excerpt is the first ExcerptChars characters of an answer, as sent back
// with its error; an empty answer is shown as such.
func Excerpt(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "(empty response)"
	}
	r := []rune(raw)
	if len(r) <= ExcerptChars {
		return raw
	}
	return string(r[:ExcerptChars])
}

// CorrectionPrompt is the user turn that reports why an answer was
// rejected.
func CorrectionPrompt(err error) string {
	return "Your previous answer (its first 500 characters are above) could not be used.\nError: " +
		arena.ErrorMessage(err) +
		"\n\nReply again with exactly one JSON object — BET, SELL or HOLD — in the format of the instructions, using only IDs from the lists."
}
