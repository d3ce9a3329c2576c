package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Usage totals model calls. Calls and CostMicros count calls that reached
// the provider; CachedCalls are answers read from the cache, which cost
// nothing now (their original tokens are kept apart in CachedInputTokens
// and CachedOutputTokens).
//
// CostMicros is the estimate from the registry prices. BilledMicros sums
// what providers reported as charged (OpenRouter's usage.cost) over the
// BilledCalls that reported one; when BilledCalls equals Calls it is the
// provider's bill for the run, otherwise a part of it.
type Usage struct {
	Calls              int64 `json:"calls"`
	CachedCalls        int64 `json:"cached_calls"`
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	PromptCachedTokens int64 `json:"prompt_cached_tokens"`
	ReasoningTokens    int64 `json:"reasoning_tokens"`
	CachedInputTokens  int64 `json:"cached_input_tokens"`
	CachedOutputTokens int64 `json:"cached_output_tokens"`
	CostMicros         int64 `json:"cost_micros"`
	BilledCalls        int64 `json:"billed_calls"`
	BilledMicros       int64 `json:"billed_micros"`
}

// Add counts one answer.
func (u *Usage) Add(r Response) {
	if r.Cached {
		u.CachedCalls++
		u.CachedInputTokens += r.InputTokens
		u.CachedOutputTokens += r.OutputTokens
		return
	}
	u.Calls++
	u.InputTokens += r.InputTokens
	u.OutputTokens += r.OutputTokens
	u.PromptCachedTokens += r.PromptCachedTokens
	u.ReasoningTokens += r.ReasoningTokens
	u.CostMicros += r.CostMicros
	if r.Billed {
		u.BilledCalls++
		u.BilledMicros += r.BilledMicros
	}
}

// Plus returns the sum of two usages.
func (u Usage) Plus(v Usage) Usage {
	return Usage{Calls: u.Calls + v.Calls, CachedCalls: u.CachedCalls + v.CachedCalls,
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		PromptCachedTokens: u.PromptCachedTokens + v.PromptCachedTokens, ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens, CachedOutputTokens: u.CachedOutputTokens + v.CachedOutputTokens,
		CostMicros: u.CostMicros + v.CostMicros, BilledCalls: u.BilledCalls + v.BilledCalls, BilledMicros: u.BilledMicros + v.BilledMicros}
}

// ErrBudget is matched (errors.Is) by every *BudgetError.
var ErrBudget = errors.New("llm: budget exhausted")

// BudgetError records where and why spending stopped: the cap that would
// have been exceeded, what was spent under it and the bound of the call
// that was not made.
type BudgetError struct {
	Scope         string // "agent" or "run"
	Agent         string
	Round         string
	Call          int64 // the refused call's number within the agent's calls (1-based)
	SpentMicros   int64
	CapMicros     int64
	EstimateMicro int64 // upper-bound cost of the refused call
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("llm %s: %s budget of %s USD reached in round %s before call %d: spent %s USD, the call could cost up to %s USD",
		e.Agent, e.Scope, formatMicros(e.CapMicros), e.Round, e.Call, formatMicros(e.SpentMicros), formatMicros(e.EstimateMicro))
}

func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Meter accounts model calls per agent, per (agent, round) and per run,
// and enforces spending caps; a Chain reports to it. It is safe for
// concurrent use.
//
// A call is made only when, for the run cap and the agent's cap, the spent
// amount plus the call's upper bound stays within the cap, so spending
// stops before the call that could exceed it. The upper bound of a call is
// the registry price of its prompt (the request's JSON bytes counted as
// tokens, which over-counts: tokens are several bytes each) plus its
// max_tokens answer; a model without max_tokens is bounded by its prompt
// only, so for such models a cap can be overrun by one answer. Calls made
// at the same time by several workers reserve their bounds so they cannot
// jointly overrun a cap.
type Meter struct {
	// RunCapMicros caps the whole run (0: no cap).
	RunCapMicros int64

	mu       sync.Mutex
	caps     map[string]int64
	run      Usage
	agents   map[string]*Usage
	rounds   map[[2]string]*Usage
	reserved map[string]int64 // per agent, bounds of calls in flight
	resAll   int64
	stops    []BudgetError
}

// NewMeter returns a meter with a run cap (0: none).
func NewMeter(runCapMicros int64) *Meter {
	return &Meter{RunCapMicros: runCapMicros}
}

// SetAgentCap caps one agent's spending (0: no cap).
func (m *Meter) SetAgentCap(agent string, capMicros int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.caps == nil {
		m.caps = map[string]int64{}
	}
	m.caps[agent] = capMicros
}

func (m *Meter) agentUsage(agent string) *Usage {
	if m.agents == nil {
		m.agents = map[string]*Usage{}
	}
	u := m.agents[agent]
	if u == nil {
		u = &Usage{}
		m.agents[agent] = u
	}
	return u
}

// reserve admits a call whose cost is at most bound, or refuses it with a
// *BudgetError (also recorded in Stops).
func (m *Meter) reserve(agent, round string, bound int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agentUsage(agent)
	call := a.Calls + 1
	if c := m.caps[agent]; c > 0 && a.CostMicros+m.reserved[agent]+bound > c {
		e := BudgetError{Scope: "agent", Agent: agent, Round: round, Call: call, SpentMicros: a.CostMicros, CapMicros: c, EstimateMicro: bound}
		m.stops = append(m.stops, e)
		return &e
	}
	if c := m.RunCapMicros; c > 0 && m.run.CostMicros+m.resAll+bound > c {
		e := BudgetError{Scope: "run", Agent: agent, Round: round, Call: call, SpentMicros: m.run.CostMicros, CapMicros: c, EstimateMicro: bound}
		m.stops = append(m.stops, e)
		return &e
	}
	if m.reserved == nil {
		m.reserved = map[string]int64{}
	}
	m.reserved[agent] += bound
	m.resAll += bound
	return nil
}

func (m *Meter) release(agent string, bound int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserved[agent] -= bound
	m.resAll -= bound
}

// Record counts an answer for agent in round.
func (m *Meter) Record(agent, round string, r Response) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run.Add(r)
	m.agentUsage(agent).Add(r)
	if m.rounds == nil {
		m.rounds = map[[2]string]*Usage{}
	}
	k := [2]string{agent, round}
	u := m.rounds[k]
	if u == nil {
		u = &Usage{}
		m.rounds[k] = u
	}
	u.Add(r)
}

// Run returns the run's totals.
func (m *Meter) Run() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.run
}

// Agent returns one agent's totals.
func (m *Meter) Agent(agent string) Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.agents[agent]; u != nil {
		return *u
	}
	return Usage{}
}

// Round returns one agent's totals in one round.
func (m *Meter) Round(agent, round string) Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.rounds[[2]string{agent, round}]; u != nil {
		return *u
	}
	return Usage{}
}

// Stops lists the calls refused by a cap, in order.
func (m *Meter) Stops() []BudgetError {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]BudgetError(nil), m.stops...)
}

// Bound is the upper-bound cost of req for spec (see Meter).
func Bound(spec ModelSpec, req Request) int64 {
	b, err := json.Marshal(req)
	if err != nil {
		return 0
	}
	maxOut := int64(req.MaxTokens)
	if maxOut <= 0 {
		maxOut = int64(spec.MaxTokens)
	}
	return spec.Cost(int64(len(b)), maxOut)
}
