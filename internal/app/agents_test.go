package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/config"
)

// The trading track is built complete: the registry's agents whose keys
// are set make the lineup (the others are listed as skipped), and the
// deciders of a cohort warn of an LLM agent whose key went missing but
// refuse a simulated agent without a decider, which can only be a bug.
func TestNewBuildsTheTradingTrack(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "agents.json")
	writeFile(t, reg, `{"agents":[{"id":"k","name":"Keyed","provider":"local","model":"k-1","base_url":"http://127.0.0.1:1/v1","api_key_env":"K_KEY","input_usd_per_mtok":0,"output_usd_per_mtok":0},
		{"id":"u","name":"Unkeyed","provider":"local","model":"u-1","base_url":"http://127.0.0.1:1/v1","api_key_env":"U_KEY","timeout":"300s","input_usd_per_mtok":0,"output_usd_per_mtok":0}]}`)
	o := config.Defaults()
	o.DB, o.AgentsFile, o.NoSync = "sqlite:"+filepath.Join(dir, "a.db"), reg, true
	ctx := context.Background()
	track := func() *TradingTrack {
		t.Helper()
		a, err := New(ctx, o, Deps{Environ: []string{"K_KEY=secret"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		tr, err := a.Trading(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := track()
	if len(tr.Engine.Lineup) != 1 || tr.Engine.Lineup[0].AgentID != "k" || len(tr.Skipped) != 1 || tr.Skipped[0].ID != "u" {
		t.Fatalf("lineup %+v, skipped %+v", tr.Engine.Lineup, tr.Skipped)
	}
	// A cohort frozen when U's key was set: U is warned of, K decided.
	u, err := json.Marshal(map[string]any{"id": "u", "name": "Unkeyed", "provider": "local", "model": "u-1", "base_url": "http://127.0.0.1:1/v1", "api_key_env": "U_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	c := &arena.Cohort{ID: 1, Lineup: append([]arena.LineupEntry{{AgentID: "u", Name: "Unkeyed", Kind: agent.KindLLM, Spec: u}}, tr.Engine.Lineup...)}
	ds, err := tr.Deciders(ctx, c)
	if err != nil || ds["k"] == nil || ds["u"] != nil {
		t.Fatalf("deciders %v, %v: want K's alone", ds, err)
	}
	// A decision is bounded by the slowest model of the lineup and of the
	// active cohorts' lineups (U's, 300 s by the registry).
	if tr.Engine.ModelTimeout >= 300*time.Second {
		t.Fatalf("timeout %s before U's cohort", tr.Engine.ModelTimeout)
	}
	if _, err := tr.Engine.Store.CreateCohort(ctx, &arena.Cohort{WeekStart: arena.WeekStart(time.Now()), Status: arena.CohortActive, InitialCash: 1, Lineup: c.Lineup}); err != nil {
		t.Fatal(err)
	}
	if b := track(); b.Engine.ModelTimeout != 300*time.Second {
		t.Fatalf("timeout %s with U's cohort active, want 300s", b.Engine.ModelTimeout)
	}
	c.Lineup = append(c.Lineup, arena.LineupEntry{AgentID: "s", Name: "Sim", Kind: agent.KindSim, Spec: json.RawMessage(`{}`)})
	if _, err := tr.Deciders(ctx, c); err == nil || !strings.Contains(err.Error(), "simulated agent s") {
		t.Fatalf("a simulated agent without a decider: %v", err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A resolver panel whose key is missing fails only what runs the oracle:
// New gives every other command its services, with the reason in
// OracleErr, and serve's jobs refuse to start on it; a program that runs
// the panel itself fails in New, before the log key is made.
func TestNewWithoutTheOraclesKey(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "oracle.json")
	writeFile(t, reg, `{"agents":[{"id":"r1","name":"R1","provider":"local","model":"r","base_url":"http://127.0.0.1:1/v1","api_key_env":"R1_KEY","input_usd_per_mtok":0,"output_usd_per_mtok":0}]}`)
	o := config.Defaults()
	o.DB, o.OracleAgents, o.NoSync = "sqlite:"+filepath.Join(dir, "a.db"), reg, true
	o.LogKey = filepath.Join(dir, "log.key")
	ctx := context.Background()
	if _, err := New(ctx, o, Deps{Log: LogWrite, RunsOracle: true}); err == nil || !strings.Contains(err.Error(), "R1_KEY") {
		t.Fatalf("New to run the panel without the oracle's key: %v", err)
	}
	if _, err := os.Stat(o.LogKey); !os.IsNotExist(err) {
		t.Fatalf("log key made by a refused start: %v", err)
	}
	a, err := New(ctx, o, Deps{Log: LogWrite})
	if err != nil {
		t.Fatalf("New without the oracle's key: %v", err)
	}
	defer a.Close()
	if a.OracleErr == nil || !strings.Contains(a.OracleErr.Error(), "R1_KEY") || a.Oracle.Panel != nil {
		t.Fatalf("OracleErr %v, panel %v", a.OracleErr, a.Oracle.Panel)
	}
	if _, err := a.Jobs(ctx, "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "R1_KEY") {
		t.Fatalf("serve's jobs without the oracle's key: %v", err)
	}
}
