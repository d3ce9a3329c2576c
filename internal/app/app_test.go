package app

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// The configuration's defaults are the tracks' own: a config that says
// nothing runs serve as the tracks' packages define it.
func TestDefaultsAreTheTracks(t *testing.T) {
	o, def := config.Defaults(), rounds.DefaultJobsConfig()
	if o.RoundEvery != def.RoundEvery || o.RoundCommitIn != def.CommitIn || o.RoundRevealDelay != def.RevealDelay ||
		o.RoundRevealWin != def.RevealWindow || o.RoundRetryEvery != def.RetryEvery || o.RoundK != rounds.DefaultK {
		t.Errorf("round settings %+v, the forecast track's %+v (k %d)", o, def, rounds.DefaultK)
	}
	if ScoringMethod(o) != scoring.DefaultMethod() {
		t.Errorf("scoring method %+v, the default %+v", ScoringMethod(o), scoring.DefaultMethod())
	}
	if oraclePolicy(o) != arena.DefaultOraclePolicy {
		t.Errorf("oracle policy %+v, the default %+v", oraclePolicy(o), arena.DefaultOraclePolicy)
	}
}

// New builds every service on one store and one clock, from the
// configuration, complete: the round settings reach the forecast track,
// the oracle is wired to both tracks, the log is opened on the app's
// clock and its checkpoints and exports are served by the handler built
// right after New, and the trading track is served only with a lineup.
// On every engine.
func TestNewWiresOneArena(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			o := config.Defaults()
			o.DB, o.LogKey = storetest.URL(t, engine), filepath.Join(t.TempDir(), "log.key")
			o.RoundK, o.RoundGrace, o.LeaderboardMinForecasts = 3, 2*time.Hour, 9
			a, err := New(ctx, o, Deps{Now: now, Log: LogWrite})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			h, err := a.Handler()
			if err != nil {
				t.Fatal(err)
			}
			f := a.Rounds
			if f.Store != a.DB || f.K != 3 || f.Grace != 2*time.Hour || f.Method.MinForecasts != 9 || f.Admission.MaxAgentsPerRound != o.MaxAgentsPerRound ||
				f.Domain.Contract.Hex() == o.Contract || !f.Clock().Equal(at) {
				t.Errorf("forecast service %+v", f)
			}
			tr, err := a.Trading(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Engine.Store != a.DB || a.Oracle.Store != a.DB || len(a.Oracle.Tracks) != 3 || len(a.Oracle.DisputeHooks) != 1 || a.Oracle.Policy != arena.DefaultOraclePolicy {
				t.Errorf("trading %+v, oracle %+v", tr.Engine, a.Oracle)
			}
			lg := a.TLog
			if err := lg.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
				t.Fatal(err)
			}
			if es, err := lg.Entries(ctx, 0, 1); err != nil || len(es) != 1 || !es[0].CreatedAt.Equal(at) {
				t.Errorf("entries %+v %v: not on the app's clock", es, err)
			}
			if _, err := a.Handler(); err != nil { // built once: the metrics are registered once
				t.Fatal(err)
			}
			if err := a.PublishExport(ctx); err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string]int{"/api/v1/log/entries": 200, "/log/vkey": 200, "/log/checkpoint": 200, "/exports/latest/" + export.IndexFile: 200, "/api/v1/cohorts": 404, "/healthz": 200} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != want {
					t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
				}
			}
		})
	}
}

// Serve's jobs follow the configuration: a sync of each venue of
// ARENA_SYNC_VENUES, none (nor CLOB benchmarks) offline, no round
// creation with ARENA_NO_ROUNDS.
func TestJobsFollowTheConfig(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		noSync, noRounds bool
		venues           string
		want             string
	}{
		{false, false, "", "rate-bucket-prune polymarket-sync forecast-create-round forecast-benchmarks forecast-trigger export-prune"},
		{false, false, "kalshi,manifold,polymarket", "rate-bucket-prune kalshi-sync manifold-sync polymarket-sync forecast-create-round forecast-benchmarks forecast-trigger export-prune"},
		{true, false, "kalshi", "rate-bucket-prune forecast-create-round forecast-benchmarks forecast-trigger export-prune"},
		{true, true, "", "rate-bucket-prune forecast-benchmarks forecast-trigger export-prune"},
	} {
		o := config.Defaults()
		dir := t.TempDir()
		o.DB, o.NoSync, o.NoRounds, o.LogKey = "sqlite:"+filepath.Join(dir, "a.db"), c.noSync, c.noRounds, filepath.Join(dir, "log.key")
		if c.venues != "" {
			o.SyncVenues = c.venues
		}
		a, err := New(ctx, o, Deps{Log: LogWrite})
		if err != nil {
			t.Fatal(err)
		}
		js, err := a.Jobs(ctx, "http://127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range js {
			names = append(names, j.Name)
		}
		if got := strings.Join(names, " "); got != c.want || (a.Rounds.Lookup != nil) == c.noSync {
			t.Errorf("no sync %v, no rounds %v: jobs %s (CLOB benchmarks %v), want %s", c.noSync, c.noRounds, got, a.Rounds.Lookup != nil, c.want)
		}
		a.Close()
	}
}
