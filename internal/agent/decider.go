package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/trading"
)

// Lineup kinds of the trading track's built-in agents.
const (
	KindLLM = "llm"
	KindSim = "sim"
)

// SimAgentPrefix starts the agent id of a simulated trader, so that its id
// never collides with an LLM agent's.
const SimAgentPrefix = "sim-"

// SimName is the display name of the simulated agent name (a sim agent
// such as "informed-0.10"), in both tracks.
func SimName(name string) string { return "Sim " + name }

// LLMDecider runs a Trader for the cohort engine (it implements
// trading.Decider): the engine's frozen snapshot goes in, the action and
// the full audit record (prompts, every raw answer, tokens, cost, latency,
// retries, system default) come out.
type LLMDecider struct {
	Trader *Trader
}

// Decide implements trading.Decider. A failed model call returns the
// record so far with the error, which the engine stores as a retryable
// failure.
func (d LLMDecider) Decide(ctx context.Context, s trading.Snapshot) (trading.Decision, error) {
	rec, err := d.Trader.Decide(ctx, &s)
	if rec == nil {
		return trading.Decision{}, err
	}
	return rec.Trading(), err
}

// Trading converts the decision into the engine's record. Answers of failed
// calls (no answer at all) are not raw responses; the errors of rejected
// attempts become the note stored with the decision.
func (d *Decision) Trading() trading.Decision {
	out := trading.Decision{Action: d.Action, SystemPrompt: d.Prompt.System, UserPrompt: d.Prompt.User,
		Retries: d.Retries, SystemDefault: d.SystemDefault, TokensIn: d.InputTokens, TokensOut: d.OutputTokens,
		Cost: d.Cost, Latency: d.Latency}
	var notes []string
	for i, a := range d.Attempts {
		if !a.CallFailed {
			out.RawResponses = append(out.RawResponses, a.Raw)
		}
		if a.Error != "" && !a.CallFailed {
			notes = append(notes, fmt.Sprintf("answer %d rejected: %s", i+1, a.Error))
		}
	}
	out.Note = strings.Join(notes, "; ")
	return out
}

// LLMLineup freezes the registry's agents as a cohort lineup.
// Agents whose API key is missing from getenv are left out and listed in
// skipped with the reason, so a cohort never holds an agent that cannot
// trade.
func LLMLineup(reg *llm.Registry, getenv func(string) (string, bool)) (entries []arena.LineupEntry, skipped []llm.Skipped, err error) {
	for _, spec := range reg.Agents {
		if spec.IsEnsemble() {
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: "ensembles forecast only; they do not trade"})
			continue
		}
		if reason := missingKey(spec, getenv); reason != "" {
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: reason})
			continue
		}
		e, err := spec.Lineup()
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	return entries, skipped, nil
}

func missingKey(spec llm.ModelSpec, getenv func(string) (string, bool)) string {
	if spec.APIKeyEnv == "" {
		return ""
	}
	if v, ok := getenv(spec.APIKeyEnv); !ok || strings.TrimSpace(v) == "" {
		return fmt.Sprintf("environment variable %s is not set", spec.APIKeyEnv)
	}
	return ""
}

// SimSpec is the world a simulated trader trades in, frozen in its lineup
// entry. It must match the world the markets were synced from (`arena sync
// --source sim`): the same seed, number of markets and start.
type SimSpec struct {
	Agent   string    `json:"agent"` // sim agent name, e.g. "informed-0.05"
	Seed    int64     `json:"seed"`
	Markets int       `json:"markets,omitempty"` // 0: sim.DefaultMarkets
	Start   time.Time `json:"start,omitzero"`    // zero: sim.DefaultStart
	// MinEdge and MaxBets tune the trader (0: the SimTrader defaults).
	MinEdge float64 `json:"min_edge,omitempty"`
	MaxBets int     `json:"max_bets,omitempty"`
}

func (s SimSpec) config() sim.Config {
	return sim.Config{Seed: s.Seed, Markets: s.Markets, Start: s.Start}
}

// SimLineup is a lineup of simulated traders (sim.Agents() when agents is
// empty) in the world of seed, markets and start; their ids are
// SimAgentPrefix + the sim agent name.
func SimLineup(world SimSpec, agents []string) ([]arena.LineupEntry, error) {
	if len(agents) == 0 {
		agents = sim.Agents()
	}
	if err := world.config().Validate(); err != nil {
		return nil, err
	}
	var out []arena.LineupEntry
	for _, name := range agents {
		if _, err := sim.ParseAgent(name); err != nil {
			return nil, err
		}
		s := world
		s.Agent = name
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("agent: freeze sim agent %s: %w", name, err)
		}
		out = append(out, arena.LineupEntry{AgentID: SimAgentPrefix + name, Name: SimName(name), Kind: KindSim,
			Provider: KindSim, Model: name, Spec: b})
	}
	return out, nil
}

// Factory builds the deciders of a cohort from its frozen lineup:
// LLM agents from the spec they started with (model, provider,
// prices, temperature), simulated traders from their world. It is safe for
// concurrent use and caches the simulated worlds it builds.
type Factory struct {
	// Getenv looks up API keys (default os.LookupEnv).
	Getenv func(string) (string, bool)
	// Registry, when set, supplies operational settings for agents it
	// holds under the same id: base URL, key variable, timeout and max
	// tokens (an endpoint or key may move during a long cohort). What the
	// agent is — model, provider, prices, temperature — stays frozen.
	Registry *llm.Registry
	// LLMOptions are passed to every client (retry policy, HTTP client, logger).
	LLMOptions []llm.Option
	// Metrics, when set, counts each agent's model calls (llm.ChainConfig).
	Metrics llm.Metrics
	// Retries is the number of corrections after an unusable answer:
	// 0 means DefaultRetries, negative means none.
	Retries int
	Logger  *slog.Logger

	mu     sync.Mutex
	worlds map[string]*sim.World
}

func (f *Factory) log() *slog.Logger {
	return arena.Logger(f.Logger)
}

// Deciders returns a decider per lineup entry that can run now. Entries
// that cannot (a missing key, an unknown kind, a broken spec) are listed
// in skipped with the reason and get no decider: the engine records them
// as having none, and a later run with the key set decides them.
func (f *Factory) Deciders(lineup []arena.LineupEntry) (map[string]trading.Decider, []llm.Skipped) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	retries := f.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	out := map[string]trading.Decider{}
	var skipped []llm.Skipped
	skip := func(e arena.LineupEntry, format string, args ...any) {
		skipped = append(skipped, llm.Skipped{ID: e.AgentID, Name: e.Name, Reason: fmt.Sprintf(format, args...)})
	}
	for _, e := range lineup {
		switch e.Kind {
		case KindLLM:
			spec, err := f.spec(e)
			if err != nil {
				skip(e, "%v", err)
				continue
			}
			if reason := missingKey(spec, getenv); reason != "" {
				skip(e, "%s", reason)
				continue
			}
			key := ""
			if spec.APIKeyEnv != "" {
				v, _ := getenv(spec.APIKeyEnv)
				key = strings.TrimSpace(v)
			}
			c, err := llm.NewClient(spec, key, f.LLMOptions...)
			if err != nil {
				skip(e, "%v", err)
				continue
			}
			t := NewTrader(e.AgentID, llm.NewChain(c, llm.ChainConfig{Metrics: f.Metrics}))
			t.Retries = retries
			out[e.AgentID] = LLMDecider{Trader: t}
		case KindSim:
			var s SimSpec
			if err := json.Unmarshal(e.Spec, &s); err != nil || s.Agent == "" {
				skip(e, "frozen sim spec unreadable: %v", err)
				continue
			}
			w, err := f.world(s)
			if err != nil {
				skip(e, "%v", err)
				continue
			}
			out[e.AgentID] = &trading.SimTrader{Agent: s.Agent, World: w, MinEdge: s.MinEdge, MaxBets: s.MaxBets}
		default:
			skip(e, "agent kind %q has no built-in decider", e.Kind)
		}
	}
	return out, skipped
}

// world builds (once) the simulated world of s.
func (f *Factory) world(s SimSpec) (*sim.World, error) {
	key := fmt.Sprintf("%d/%d/%d", s.Seed, s.Markets, s.Start.UnixNano())
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.worlds[key]; w != nil {
		return w, nil
	}
	w, err := sim.New(s.config())
	if err != nil {
		return nil, err
	}
	if f.worlds == nil {
		f.worlds = map[string]*sim.World{}
	}
	f.worlds[key] = w
	return w, nil
}

// spec is the effective spec of a frozen LLM entry: frozen identity,
// operational settings from the registry when it holds the agent.
func (f *Factory) spec(e arena.LineupEntry) (llm.ModelSpec, error) {
	var spec llm.ModelSpec
	if err := json.Unmarshal(e.Spec, &spec); err != nil || spec.ID == "" {
		return spec, fmt.Errorf("frozen spec unreadable: %v", err)
	}
	if f.Registry != nil {
		if cur, ok := f.Registry.Agent(spec.ID); ok {
			if cur.Model != spec.Model || cur.Provider != spec.Provider {
				f.log().Warn("agents file differs from the cohort's frozen lineup; running the frozen model",
					"agent", spec.ID, "frozen", spec.Provider+"/"+spec.Model, "file", cur.Provider+"/"+cur.Model)
			}
			spec.BaseURL, spec.APIKeyEnv, spec.Timeout, spec.MaxTokens = cur.BaseURL, cur.APIKeyEnv, cur.Timeout, cur.MaxTokens
		}
	}
	if spec.Timeout <= 0 {
		spec.Timeout = arena.Duration(llm.DefaultTimeout)
	}
	return spec, nil
}

// ModelTimeout is the longest per-call timeout of the lineup's LLM agents
// (0 when there are none). The engine bounds a decision by twice it and
// takes over claims older than that.
func (f *Factory) ModelTimeout(lineup []arena.LineupEntry) time.Duration {
	var d time.Duration
	for _, e := range lineup {
		if e.Kind != KindLLM {
			continue
		}
		if spec, err := f.spec(e); err == nil {
			d = max(d, time.Duration(spec.Timeout))
		}
	}
	return d
}
