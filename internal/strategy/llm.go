package strategy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/participant"
	"github.com/forecast-arena/arena/safefile"
)

// LLMStrategy forecasts as one agent of a model registry (a model or an
// ensemble) through agent.Forecasters. The model sees the round's markets
// by index; its tools read GET /api/v1/rounds/{id}/markets/{index}. A
// round the agent failed (never submitted, budget exhausted) is recorded
// in the trace sink and not asked again.
type LLMStrategy struct {
	Agents  *agent.Forecasters
	AgentID string
	Client  *participant.Client
	// Search, when set, offers searchWeb (sources up to now).
	Search arena.Retriever
}

func (s *LLMStrategy) Name() string { return "llm:" + s.AgentID }

// Forecast implements Strategy.
func (s *LLMStrategy) Forecast(ctx context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	task := agent.RoundTask{Round: strconv.FormatUint(r.ID, 10), Data: &httpData{c: s.Client, round: r.ID}}
	if s.Search != nil {
		task.Search = agent.RetrieverSearch{Retriever: s.Search, AsOf: s.Client.Time(), Live: true}
	}
	for _, m := range r.Markets {
		task.Markets = append(task.Markets, agent.TaskMarket{Index: m.Index, Question: m.Question, Category: m.Category, CloseTime: m.CloseTime})
	}
	tr, err := s.Agents.Forecast(ctx, s.AgentID, task)
	if err != nil {
		return nil, nil, err
	}
	if !tr.Submitted() {
		return nil, nil, fmt.Errorf("agent %s: round %d: %s; nothing committed", s.AgentID, r.ID, tr.Failure)
	}
	return tr.Predictions, tr.Reasoning, nil
}

// httpData answers the round tools from the server, one request per market.
type httpData struct {
	c     *participant.Client
	round uint64
	mu    sync.Mutex
	got   map[int]*marketContext
}

type marketContext struct {
	Details agent.MarketDetails  `json:"details"`
	History []agent.HistoryPoint `json:"history"`
}

func (d *httpData) load(ctx context.Context, i int) (*marketContext, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if mc := d.got[i]; mc != nil {
		return mc, nil
	}
	var mc marketContext
	if err := d.c.Get(ctx, fmt.Sprintf("/api/v1/rounds/%d/markets/%d", d.round, i), &mc); err != nil {
		return nil, err
	}
	if d.got == nil {
		d.got = map[int]*marketContext{}
	}
	d.got[i] = &mc
	return &mc, nil
}

func (d *httpData) Details(ctx context.Context, i int) (agent.MarketDetails, error) {
	mc, err := d.load(ctx, i)
	if err != nil {
		return agent.MarketDetails{}, err
	}
	return mc.Details, nil
}

func (d *httpData) History(ctx context.Context, i int) ([]agent.HistoryPoint, error) {
	mc, err := d.load(ctx, i)
	if err != nil {
		return nil, err
	}
	return mc.History, nil
}

// DirTraces keeps traces as files Dir/<agent>/round-<round>.json (mode
// 0600, written atomically): the local record of an agent run outside the
// server.
type DirTraces struct{ Dir string }

func (d DirTraces) path(agentID, round string) string {
	return filepath.Join(d.Dir, agentID, "round-"+round+".json")
}

func (d DirTraces) LoadTrace(_ context.Context, agentID, round string) (*agent.Trace, bool, error) {
	b, err := os.ReadFile(d.path(agentID, round))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("strategy: read trace: %w", err)
	}
	var tr agent.Trace
	if err := json.Unmarshal(b, &tr); err != nil {
		return nil, false, fmt.Errorf("strategy: trace %s: %w", d.path(agentID, round), err)
	}
	return &tr, true, nil
}

func (d DirTraces) SaveTrace(_ context.Context, agentID, round string, tr *agent.Trace) error {
	b, err := json.Marshal(tr)
	if err != nil {
		return fmt.Errorf("strategy: encode trace: %w", err)
	}
	p := d.path(agentID, round)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("strategy: trace dir: %w", err)
	}
	return safefile.WriteFile(p, b, 0o600) // replaced whole (see package safefile)
}

// StoreTraces keeps the traces of server-hosted agents in the arena's
// store, under the address each agent signs with, where the API publishes
// them after the round is triggered.
type StoreTraces struct {
	Store     arena.TraceStore
	Addresses map[string]string // registry id → checksummed address
	Now       func() time.Time
}

func (s *StoreTraces) roundID(agentID, round string) (uint64, string, error) {
	id, err := strconv.ParseUint(round, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("strategy: round %q: %w", round, err)
	}
	addr, ok := s.Addresses[agentID]
	if !ok {
		return 0, "", fmt.Errorf("strategy: agent %s has no address", agentID)
	}
	return id, addr, nil
}

func (s *StoreTraces) LoadTrace(ctx context.Context, agentID, round string) (*agent.Trace, bool, error) {
	id, addr, err := s.roundID(agentID, round)
	if err != nil {
		return nil, false, err
	}
	t, err := s.Store.Trace(ctx, id, addr)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var tr agent.Trace
	if err := json.Unmarshal(t.Trace, &tr); err != nil {
		return nil, false, fmt.Errorf("strategy: stored trace of %s in round %d: %w", agentID, id, err)
	}
	return &tr, true, nil
}

func (s *StoreTraces) SaveTrace(ctx context.Context, agentID, round string, tr *agent.Trace) error {
	id, addr, err := s.roundID(agentID, round)
	if err != nil {
		return err
	}
	b, err := json.Marshal(tr)
	if err != nil {
		return fmt.Errorf("strategy: encode trace: %w", err)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	return s.Store.SaveTrace(ctx, &arena.ForecastTrace{RoundID: id, Agent: addr, AgentID: agentID, Submitted: tr.Submitted(),
		Failure: tr.Failure, Calls: tr.Calls, CachedCalls: tr.CachedCalls, InputTokens: tr.InputTokens, OutputTokens: tr.OutputTokens,
		Cost: arena.Micros(tr.CostMicros), Billed: arena.Micros(tr.BilledMicros), BilledCalls: tr.BilledCalls, LatencyMS: tr.LatencyMS, Trace: b, CreatedAt: now})
}
