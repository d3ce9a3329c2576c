package oracle

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/forecast-arena/arena/internal/llm"
)

// PanelConfig says how to build resolvers from a registry file.
type PanelConfig struct {
	Registry *llm.Registry
	Getenv   func(string) (string, bool)
	// CacheDir, if set, keeps every successful call under CacheDir/llm,
	// one atomic file per call, so a rerun repeats none of them.
	CacheDir  string
	CacheOnly bool // answer from the cache only: a miss is a recorded failure
	// RetryBase is the first backoff wait of the 3-attempt retry policy
	// (default 1s).
	RetryBase  time.Duration
	LLMOptions []llm.Option
	// Metrics, when set, counts each resolver's model calls and cache
	// lookups (llm.ChainConfig).
	Metrics llm.Metrics
}

// Resolvers builds one resolver per registry agent, in registry order.
// Every agent must be able to run: an ensemble or a missing API key is an
// error (in cache-only mode no key is needed, since nothing is sent).
func (c PanelConfig) Resolvers() ([]*Resolver, []*llm.Cache, error) {
	if c.Registry == nil || len(c.Registry.Agents) == 0 {
		return nil, nil, fmt.Errorf("oracle: the agents file lists no resolver")
	}
	if c.CacheOnly && c.CacheDir == "" {
		return nil, nil, fmt.Errorf("oracle: cache-only mode needs a cache directory")
	}
	base := c.RetryBase
	if base <= 0 {
		base = time.Second
	}
	opts := append([]llm.Option{llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 3, BaseDelay: base, MaxDelay: 30 * base})}, c.LLMOptions...)
	var out []*Resolver
	var caches []*llm.Cache
	for _, spec := range c.Registry.Agents {
		if spec.IsEnsemble() {
			return nil, nil, fmt.Errorf("oracle: agent %q is an ensemble; a resolver must be a model", spec.ID)
		}
		key := ""
		if spec.APIKeyEnv != "" && !c.CacheOnly {
			v, ok := c.Getenv(spec.APIKeyEnv)
			if !ok || strings.TrimSpace(v) == "" {
				return nil, nil, fmt.Errorf("oracle: agent %q: environment variable %s is not set", spec.ID, spec.APIKeyEnv)
			}
			key = strings.TrimSpace(v)
		}
		cl, err := llm.NewClient(spec, key, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("oracle: %w", err)
		}
		cfg := llm.ChainConfig{Metrics: c.Metrics}
		if c.CacheDir != "" {
			cfg.Cache, cfg.CacheOnly = llm.DirStore{Dir: filepath.Join(c.CacheDir, "llm")}, c.CacheOnly
		}
		ch := llm.NewChain(cl, cfg)
		if ch.Cache() != nil {
			caches = append(caches, ch.Cache())
		}
		out = append(out, &Resolver{ID: spec.ID, Completer: ch})
	}
	return out, caches, nil
}
