package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/forecast-arena/arena/internal/llm"
)

// TraceSink keeps the trace of each (agent, round), so that a forecast
// already made is reused (never asked again) and ensembles read their
// members' forecasts.
type TraceSink interface {
	LoadTrace(ctx context.Context, agentID, round string) (*Trace, bool, error)
	SaveTrace(ctx context.Context, agentID, round string, tr *Trace) error
}

// MemberForecast is one member's part in an ensemble forecast.
type MemberForecast struct {
	Agent       string   `json:"agent"`
	Weight      float64  `json:"weight"`
	Predictions []uint16 `json:"predictions,omitempty"`
	Failure     string   `json:"failure,omitempty"`
}

// Forecasters runs the forecast agents of a model registry: models through
// their llm.Chain (cache, accounting, budget caps), one per agent for the
// whole run, and ensembles from their members' forecasts of the same
// round. It is safe for concurrent use; one (agent, round) is forecast at
// most once at a time.
type Forecasters struct {
	Registry *llm.Registry
	// Getenv looks up API keys (default os.LookupEnv).
	Getenv func(string) (string, bool)
	// Cache, CacheOnly and Metrics configure each agent's chain (see
	// llm.ChainConfig); the chain is built at the agent's first forecast,
	// so set them before.
	Cache     llm.CacheStore
	CacheOnly bool
	Metrics   llm.Metrics
	// Meter accounts every call; NewForecasters sets the caps.
	Meter      *llm.Meter
	LLMOptions []llm.Option
	MaxSteps   int
	Sink       TraceSink // may be nil

	mu      sync.Mutex
	clients map[string]*llm.Client
	chains  map[string]*llm.Chain
	skipped map[string]string
	busy    map[string]*sync.Mutex
}

// NewForecasters prepares the registry's agents. Agents that cannot run
// (a missing key, an ensemble whose members cannot) are returned with the
// reason; runCapMicros (0: the registry's max_usd) caps the run.
func NewForecasters(reg *llm.Registry, getenv func(string) (string, bool), runCapMicros int64, opts ...llm.Option) (*Forecasters, []llm.Skipped) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if runCapMicros == 0 {
		runCapMicros = int64(reg.MaxUSD)
	}
	f := &Forecasters{Registry: reg, Getenv: getenv, Meter: llm.NewMeter(runCapMicros), LLMOptions: opts,
		clients: map[string]*llm.Client{}, chains: map[string]*llm.Chain{}, skipped: map[string]string{}, busy: map[string]*sync.Mutex{}}
	var skipped []llm.Skipped
	for _, spec := range reg.Agents {
		if spec.MaxUSD > 0 {
			f.Meter.SetAgentCap(spec.ID, int64(spec.MaxUSD))
		}
		if spec.IsEnsemble() {
			continue
		}
		if reason := missingKey(spec, getenv); reason != "" {
			f.skipped[spec.ID] = reason
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: reason})
			continue
		}
		key := ""
		if spec.APIKeyEnv != "" {
			v, _ := getenv(spec.APIKeyEnv)
			key = strings.TrimSpace(v)
		}
		c, err := llm.NewClient(spec, key, opts...)
		if err != nil {
			f.skipped[spec.ID] = err.Error()
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: err.Error()})
			continue
		}
		f.clients[spec.ID] = c
	}
	for _, spec := range reg.Agents {
		if !spec.IsEnsemble() {
			continue
		}
		ok := 0
		for _, m := range spec.Members {
			if f.clients[m] != nil {
				ok++
			}
		}
		if ok == 0 {
			f.skipped[spec.ID] = "no member can run"
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: "no member can run"})
		}
	}
	return f, skipped
}

// Runnable lists the agents that can forecast, in registry order.
func (f *Forecasters) Runnable() []llm.ModelSpec {
	var out []llm.ModelSpec
	for _, s := range f.Registry.Agents {
		if _, bad := f.skipped[s.ID]; !bad {
			out = append(out, s)
		}
	}
	return out
}

func (f *Forecasters) lock(agentID, round string) func() {
	f.mu.Lock()
	m := f.busy[agentID+"\x00"+round]
	if m == nil {
		m = &sync.Mutex{}
		f.busy[agentID+"\x00"+round] = m
	}
	f.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Forecast returns agentID's forecast of the round: the stored trace when
// the sink has one, else a new forecast, stored in the sink unless the
// model call failed (then the error says why, and a later run may retry).
func (f *Forecasters) Forecast(ctx context.Context, agentID string, task RoundTask) (*Trace, error) {
	spec, ok := f.Registry.Agent(agentID)
	if !ok {
		return nil, fmt.Errorf("agent: %q is not in the agents file", agentID)
	}
	if reason, bad := f.skipped[agentID]; bad {
		return nil, fmt.Errorf("agent %s skipped: %s", agentID, reason)
	}
	defer f.lock(agentID, task.Round)()
	if f.Sink != nil {
		tr, ok, err := f.Sink.LoadTrace(ctx, agentID, task.Round)
		if err != nil {
			return nil, err
		}
		if ok {
			return tr, nil
		}
	}
	var tr *Trace
	var err error
	if spec.IsEnsemble() {
		tr, err = f.ensemble(ctx, spec, task)
	} else {
		tr, err = f.model(ctx, spec, task)
	}
	if err != nil {
		return tr, err
	}
	if f.Sink != nil {
		if err := f.Sink.SaveTrace(ctx, agentID, task.Round, tr); err != nil {
			return tr, err
		}
	}
	return tr, nil
}

func (f *Forecasters) model(ctx context.Context, spec llm.ModelSpec, task RoundTask) (*Trace, error) {
	fc := &Forecaster{AgentID: spec.ID, LLM: f.chain(spec.ID), JSONOnly: spec.NoTools, MaxSteps: f.MaxSteps}
	return fc.Forecast(ctx, task)
}

// chain returns the model agent's chain, built on first use.
func (f *Forecasters) chain(agentID string) *llm.Chain {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.chains[agentID]
	if c == nil {
		c = llm.NewChain(f.clients[agentID], llm.ChainConfig{Cache: f.Cache, CacheOnly: f.CacheOnly, Meter: f.Meter, Metrics: f.Metrics})
		f.chains[agentID] = c
	}
	return c
}

// ensemble combines the members' forecasts of the same round; a member
// that fails is left out and named in the trace.
func (f *Forecasters) ensemble(ctx context.Context, spec llm.ModelSpec, task RoundTask) (*Trace, error) {
	k := len(task.Markets)
	tr := &Trace{Agent: spec.ID, Round: task.Round, Mode: "ensemble:" + spec.Combine, PriceShown: make([]bool, k)}
	var preds [][]uint16
	var weights []float64
	for j, id := range spec.Members {
		w := 1.0
		if len(spec.Weights) > 0 {
			w = spec.Weights[j]
		}
		mf := MemberForecast{Agent: id, Weight: w}
		mt, err := f.Forecast(ctx, id, task)
		switch {
		case err != nil:
			mf.Failure = err.Error()
		case !mt.Submitted():
			mf.Failure = mt.Failure
		default:
			mf.Predictions = mt.Predictions
			preds = append(preds, mt.Predictions)
			weights = append(weights, w)
			for i, s := range mt.PriceShown {
				tr.PriceShown[i] = tr.PriceShown[i] || s
			}
		}
		tr.Members = append(tr.Members, mf)
	}
	if len(preds) == 0 {
		tr.Failure = "no member submitted a forecast"
		return tr, nil
	}
	out, err := Combine(spec.Combine, preds, weights)
	if err != nil {
		tr.Failure = err.Error()
		return tr, nil
	}
	tr.Predictions = out
	tr.Reasoning = make([]string, k)
	for i := range out {
		var parts []string
		for _, mf := range tr.Members {
			if mf.Predictions != nil {
				parts = append(parts, fmt.Sprintf("%s=%d", mf.Agent, mf.Predictions[i]))
			}
		}
		tr.Reasoning[i] = fmt.Sprintf("%s of %d members: %s", spec.Combine, len(preds), strings.Join(parts, ", "))
	}
	return tr, nil
}

// MemSink is an in-memory TraceSink (one run: a backtest).
type MemSink struct {
	mu sync.Mutex
	m  map[string]*Trace
}

func (s *MemSink) LoadTrace(_ context.Context, agentID, round string) (*Trace, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[agentID+"\x00"+round]
	return t, ok, nil
}

func (s *MemSink) SaveTrace(_ context.Context, agentID, round string, tr *Trace) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Trace{}
	}
	s.m[agentID+"\x00"+round] = tr
	return nil
}
