package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/store"
)

// ARENA_FORECAST_AGENTS: keys in the data directory (the SQLite file's by
// default), a job per minute, each agent registered under its registry
// name and model (one that another agent's name is taken is skipped); a
// database without a directory needs ARENA_DATA_DIR.
func TestHostedForecastJob(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "agents.json")
	os.WriteFile(reg, []byte(`{"agents":[{"id":"m","name":"Model M","provider":"local","model":"m-1","base_url":"http://127.0.0.1:1/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0},
		{"id":"n","name":"Taken","provider":"local","model":"n","base_url":"http://127.0.0.1:1/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0}]}`), 0o600)
	o := config.Defaults()
	o.DB, o.ForecastAgents, o.LogKey = "sqlite:"+filepath.Join(dir, "a.db"), reg, filepath.Join(dir, "log.key")
	db, err := store.Open(context.Background(), o.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.SetAgent(ctx, arena.AgentInfo{Address: "0x00000000000000000000000000000000000000AA", Kind: "external", Name: "TAKEN"}); err != nil {
		t.Fatal(err)
	}
	o.NoSync = true
	hosted := func(o config.Options) (jobs.Job, error) {
		a, err := New(ctx, o, Deps{DB: db, Log: LogWrite})
		if err != nil {
			return jobs.Job{}, err
		}
		js, err := a.Jobs(ctx, "http://127.0.0.1:1")
		for _, j := range js {
			if j.Name == "forecast-agents" {
				return j, err
			}
		}
		return jobs.Job{}, err
	}
	for range 2 { // a restart registers the same record again
		j, err := hosted(o)
		if err != nil || j.Name != "forecast-agents" {
			t.Fatalf("job %+v %v", j, err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "forecast-keys", "m.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key %v %v", st, err)
	}
	agents, err := db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := forecast.LoadKey(filepath.Join(dir, "forecast-keys", "m.key"))
	if len(agents) != 2 || agents[1].Address != m.Address().Hex() || agents[1].Name != "Model M" || agents[1].Model != "m-1" || agents[1].Kind != "llm" {
		t.Fatalf("registered %+v", agents)
	}
	o.DB = "postgres://x@127.0.0.1:1/db"
	if _, err := hosted(o); err == nil || !strings.Contains(err.Error(), "ARENA_DATA_DIR") {
		t.Errorf("postgres without a data dir: %v", err)
	}
}
