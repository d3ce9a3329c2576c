package app

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/retrieve"
)

// Evidence names an evidence provider: the oracle's evidence, or the
// searchWeb tool of LLM agents.
type Evidence struct {
	// Spec is question (the question's own text), dir:PATH (prepared
	// packets) or exa (web search, with the configured Exa key).
	Spec   string
	ExaURL string // the Exa API's base URL ("": Exa's own)
	// CacheDir keeps every packet retrieved, so reruns see the same
	// evidence ("": none kept); with CacheOnly nothing is retrieved.
	CacheDir  string
	CacheOnly bool
	Now       func() time.Time
	Logger    *slog.Logger
}

// Retriever builds the evidence provider e names, behind its cache when
// e.CacheDir is set (returned too, for its counts). The Exa key is the
// configured one (ARENA_EXA_API_KEY or EXA_API_KEY).
func Retriever(o config.Options, e Evidence) (arena.Retriever, *retrieve.Cache, error) {
	r, provider, err := retrieve.New(e.Spec, retrieve.Options{ExaBaseURL: e.ExaURL, ExaKey: o.ExaAPIKey, Now: e.Now})
	if err != nil {
		return nil, nil, err
	}
	if e.CacheDir == "" {
		return r, nil, nil
	}
	c := &retrieve.Cache{Next: r, Provider: provider, Store: llm.DirStore{Dir: e.CacheDir}, CacheOnly: e.CacheOnly, Logger: e.Logger}
	return c, c, nil
}

// Search is the searchWeb provider of --search (exa or dir:PATH), behind
// the durable evidence cache in cacheDir/search; "" means no search.
func Search(o config.Options, spec, cacheDir string, cacheOnly bool, logger *slog.Logger) (arena.Retriever, error) {
	if spec == "" {
		return nil, nil
	}
	if spec == "question" {
		return nil, fmt.Errorf("--search %q: want exa or dir:PATH", spec)
	}
	r, _, err := Retriever(o, Evidence{Spec: spec, CacheDir: filepath.Join(cacheDir, "search"), CacheOnly: cacheOnly, Logger: logger})
	return r, err
}

// buildPanel gives the oracle its resolver panel: the program's, else
// that of the configured registry (ARENA_ORACLE_AGENTS) gathering
// evidence as the program says or else from the question's own text, its
// calls and evidence cached in the data directory's oracle-cache.
func (a *App) buildPanel() error {
	o, d := a.Config, a.deps
	if d.Panel != nil {
		return a.setPanel(d.Panel)
	}
	if o.OracleAgents == "" {
		return nil
	}
	e := Evidence{Spec: "question"}
	if dir, ok := o.DataDirectory(); ok {
		e.CacheDir = filepath.Join(dir, "oracle-cache")
	}
	if d.Evidence != nil {
		e = *d.Evidence
	}
	e.Logger, e.Now = a.Logger, d.Now
	reg, err := llm.LoadRegistry(o.OracleAgents)
	if err != nil {
		return err
	}
	p, _, err := Panel(o, reg, PanelOptions{Environ: d.Environ, Evidence: e, LLMOptions: []llm.Option{llm.WithLogger(a.Logger)}, Metrics: a.Metrics})
	if err != nil {
		return err
	}
	return a.setPanel(p)
}

// setPanel gives the oracle its panel, which the configured architecture
// must fit.
func (a *App) setPanel(p *oracle.Panel) error {
	if _, err := oracle.ParseArch(a.Config.OracleArch, p.Agents()); err != nil {
		return fmt.Errorf("ARENA_ORACLE_ARCH: %w", err)
	}
	a.Oracle.Panel = p
	return nil
}
