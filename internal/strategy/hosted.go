package strategy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/participant"
)

// Keystore keeps one secp256k1 key per agent id in Dir/<id>.key (mode
// 0600, directory 0700), created on first use. Keys are never logged; only
// their addresses are.
type Keystore struct{ Dir string }

// Key loads the agent's key, creating it the first time.
func (ks Keystore) Key(agentID string) (*forecast.Key, error) {
	if err := os.MkdirAll(ks.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("strategy: keystore: %w", err)
	}
	p := filepath.Join(ks.Dir, agentID+".key")
	k, err := forecast.LoadKey(p)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if k, err = forecast.GenerateKey(); err != nil {
		return nil, err
	}
	if err := k.Save(p); err != nil {
		if errors.Is(err, os.ErrExist) { // created meanwhile by another process
			return forecast.LoadKey(p)
		}
		return nil, err
	}
	return k, nil
}

// Hosted runs the registry's agents inside the server: each is an ordinary
// participant of the server's own HTTP API (the same verification,
// storage and scoring as any external agent), signing with its keystore
// key, and its traces go to the arena's store.
type Hosted struct {
	Clients []*participant.Client
	IDs     []string
	Logger  *slog.Logger
}

// HostedConfig says how to host the agents of a registry.
type HostedConfig struct {
	Registry *llm.Registry
	Getenv   func(string) (string, bool)
	Server   string // the server's own base URL
	DataDir  string // keystore, state, cache
	LeadTime time.Duration
	Store    interface {
		arena.TraceStore
		rounds.ProfileStore
	}
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics, when set, counts the agents' model calls and cache lookups.
	Metrics llm.Metrics
}

// NewHosted prepares every agent that can run, registered under the
// registry's display name (as in the trading track) and model; the
// others are returned with the reason, among them an agent whose name
// the profile rules refuse or another agent holds.
func NewHosted(ctx context.Context, cfg HostedConfig) (*Hosted, []llm.Skipped, error) {
	fc, skipped := agent.NewForecasters(cfg.Registry, cfg.Getenv, 0, llm.WithLogger(cfg.Logger))
	fc.Cache, fc.Metrics = llm.DirStore{Dir: filepath.Join(cfg.DataDir, "llm-cache")}, cfg.Metrics
	sink := &StoreTraces{Store: cfg.Store, Addresses: map[string]string{}, Now: cfg.Now}
	fc.Sink = sink
	ks := Keystore{Dir: filepath.Join(cfg.DataDir, "forecast-keys")}
	h := &Hosted{Logger: cfg.Logger}
	runnable := fc.Runnable()
	// Ensembles read their members' traces by address, so every member
	// needs one even if it is not runnable on its own.
	for _, spec := range cfg.Registry.Agents {
		k, err := ks.Key(spec.ID)
		if err != nil {
			return nil, nil, err
		}
		sink.Addresses[spec.ID] = k.Address().Hex()
	}
	for _, spec := range runnable {
		k, err := ks.Key(spec.ID)
		if err != nil {
			return nil, nil, err
		}
		p := arena.AgentInfo{Address: k.Address().Hex(), Kind: agent.KindLLM, Name: spec.Name, Model: spec.Model}
		if spec.IsEnsemble() {
			p.Kind, p.Description = llm.KindEnsemble, ensembleDescription(spec)
		}
		if err := rounds.RegisterAgent(ctx, cfg.Store, p); err != nil {
			if kind := arena.ErrorKind(err); kind != arena.EINVALID && kind != arena.ECONFLICT {
				return nil, nil, fmt.Errorf("strategy: register agent %s: %w", spec.ID, err)
			}
			skipped = append(skipped, llm.Skipped{ID: spec.ID, Name: spec.Name, Reason: "its profile is refused (rename it in the registry): " + arena.ErrorMessage(err)})
			continue
		}
		c := &participant.Client{Server: cfg.Server, Key: k, StateDir: filepath.Join(cfg.DataDir, "forecast-agents", spec.ID),
			LeadTime: cfg.LeadTime, HTTP: &http.Client{Timeout: 30 * time.Second}, Now: cfg.Now, Logger: cfg.Logger.With("agent", spec.ID)}
		c.Strategy = &LLMStrategy{Agents: fc, AgentID: spec.ID, Client: c}
		h.Clients = append(h.Clients, c)
		h.IDs = append(h.IDs, spec.ID)
		cfg.Logger.Info("hosted forecast agent", "agent", spec.ID, "address", k.Address().Hex())
	}
	return h, skipped, nil
}

// RunOnce runs every hosted agent once, concurrently; their errors are
// joined (one agent's failure does not stop the others).
func (h *Hosted) RunOnce(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(h.Clients))
	for i, c := range h.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.RunOnce(ctx); err != nil {
				errs[i] = fmt.Errorf("agent %s: %w", h.IDs[i], err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ensembleDescription says what an ensemble combines, within a profile's
// description.
func ensembleDescription(spec llm.ModelSpec) string {
	d := []rune(fmt.Sprintf("Ensemble: the %s of %s.", spec.Combine, strings.Join(spec.Members, ", ")))
	if len(d) > forecast.MaxProfileDescription {
		d = append(d[:forecast.MaxProfileDescription-1], '…')
	}
	return string(d)
}
