package rounds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/retry"

	"github.com/forecast-arena/arena"
)

// JobsConfig is the forecast track's schedule in `arena serve`:
// a round by rule every RoundEvery, benchmark capture and triggering on
// short intervals. Zero fields take DefaultJobsConfig's values.
type JobsConfig struct {
	// RoundEvery is the round creation interval; periods are aligned to the
	// Unix epoch, so the default creates one round a day at 00:00 UTC (and
	// one at start-up when today's has not been created).
	RoundEvery time.Duration
	// CommitIn is the commit phase: the commit deadline is this long after
	// creation.
	CommitIn time.Duration
	// RevealDelay separates the commit deadline from the reveal start,
	// RevealWindow is the reveal phase's length: with the defaults agents
	// reveal between 1 h and 2 h after the commit deadline.
	RevealDelay  time.Duration
	RevealWindow time.Duration
	// BenchmarkEvery and TriggerEvery are how often benchmark capture and
	// the outcome trigger look for due rounds.
	BenchmarkEvery time.Duration
	TriggerEvery   time.Duration
	// RetryFor: when round creation finds too few eligible markets (e.g. at
	// start-up, before the first market sync), it retries every RetryEvery
	// for this long before giving up on the period (negative: no retries).
	RetryFor   time.Duration
	RetryEvery time.Duration
	// NoRounds disables round creation (rounds come from the admin API).
	NoRounds bool
}

// DefaultJobsConfig suits Polymarket: a round a day, commits for an hour,
// reveals from 1 h to 2 h after the commit deadline.
func DefaultJobsConfig() JobsConfig {
	return JobsConfig{
		RoundEvery:     24 * time.Hour,
		CommitIn:       time.Hour,
		RevealDelay:    time.Hour,
		RevealWindow:   time.Hour,
		BenchmarkEvery: time.Minute,
		TriggerEvery:   5 * time.Minute,
		RetryFor:       15 * time.Minute,
		RetryEvery:     30 * time.Second,
	}
}

func (c JobsConfig) withDefaults() JobsConfig {
	d := DefaultJobsConfig()
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&c.RoundEvery, d.RoundEvery)
	set(&c.CommitIn, d.CommitIn)
	set(&c.RevealDelay, d.RevealDelay)
	set(&c.RevealWindow, d.RevealWindow)
	set(&c.BenchmarkEvery, d.BenchmarkEvery)
	set(&c.TriggerEvery, d.TriggerEvery)
	set(&c.RetryEvery, d.RetryEvery)
	set(&c.RetryFor, d.RetryFor)
	return c
}

// Validate checks the configuration after defaults.
func (c JobsConfig) Validate() error {
	c = c.withDefaults()
	for name, v := range map[string]time.Duration{"round interval": c.RoundEvery, "commit phase": c.CommitIn,
		"reveal delay": c.RevealDelay, "reveal window": c.RevealWindow, "benchmark interval": c.BenchmarkEvery,
		"trigger interval": c.TriggerEvery, "retry interval": c.RetryEvery} {
		if v < 0 {
			return arena.Errorf(arena.EINVALID, "forecast jobs: %s %s is negative", name, v)
		}
	}
	if c.CommitIn < time.Second || c.RevealDelay < time.Second {
		return arena.Errorf(arena.EINVALID, "forecast jobs: commit phase %s and reveal delay %s must be at least 1s", c.CommitIn, c.RevealDelay)
	}
	return nil
}

// ScheduleAt is the schedule of a round created at now: deadlines on whole
// seconds (signature deadlines are Unix seconds).
func (c JobsConfig) ScheduleAt(now time.Time) forecast.Schedule {
	c = c.withDefaults()
	cd := now.Add(c.CommitIn).UTC().Truncate(time.Second)
	rs := cd.Add(c.RevealDelay)
	return forecast.Schedule{CommitDeadline: cd, RevealStart: rs, RevealDeadline: rs.Add(c.RevealWindow)}
}

// Job names, as recorded in job_runs.
const (
	JobCreateRound = "forecast-create-round"
	JobBenchmarks  = "forecast-benchmarks"
	JobTrigger     = "forecast-trigger"
)

// Jobs returns the forecast track's scheduled jobs for svc: round creation
// by the service's rules, benchmark capture and triggering with scoring,
// each run once per period of its length (aligned to the Unix epoch) by
// the server's scheduler, once across replicas.
func Jobs(svc *Service, cfg JobsConfig) ([]jobs.Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	var out []jobs.Job
	if !cfg.NoRounds {
		out = append(out, jobs.Periodic(JobCreateRound, cfg.RoundEvery,
			func(ctx context.Context, _ time.Time) error { return createScheduledRound(ctx, svc, cfg) }))
	}
	out = append(out,
		jobs.Periodic(JobBenchmarks, cfg.BenchmarkEvery, func(ctx context.Context, _ time.Time) error {
			n, err := svc.CaptureBenchmarks(ctx)
			if n > 0 {
				svc.log().Info("benchmarks captured", "rounds", n)
			}
			return err
		}),
		jobs.Periodic(JobTrigger, cfg.TriggerEvery, func(ctx context.Context, _ time.Time) error {
			n, err := svc.TriggerDue(ctx) // logs each round it scores
			if n > 0 && err == nil {
				// Start the leaderboard's analysis now, in the background, so
				// that readers of this process do not wait for its bootstrap.
				if aerr := svc.Refresh(ctx); aerr != nil {
					svc.log().Warn("rounds: analysis after scoring", "err", aerr)
				}
			}
			return err
		}),
	)
	return out, nil
}

// createScheduledRound creates a round by rule, starting its schedule when
// it is created (not at the period start, which may lie hours back after a
// restart). Too few eligible markets is retried for cfg.RetryFor.
func createScheduledRound(ctx context.Context, svc *Service, cfg JobsConfig) error {
	start := time.Now() // the retry budget is wall-clock time, whatever svc's clock
	for tries := 0; ; tries++ {
		s := cfg.ScheduleAt(svc.now())
		_, err := svc.CreateRound(ctx, CreateRoundRequest{CommitDeadline: s.CommitDeadline, RevealStart: s.RevealStart, RevealDeadline: s.RevealDeadline})
		if err == nil {
			return nil // CreateRound logs the new round
		}
		if arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets || cfg.RetryFor < 0 || time.Since(start)+cfg.RetryEvery > cfg.RetryFor {
			return fmt.Errorf("rounds: scheduled round: %w", err)
		}
		// Warn once per scheduled round; the retries say the same thing.
		level := slog.LevelWarn
		if tries > 0 {
			level = slog.LevelDebug
		}
		svc.log().Log(ctx, level, "scheduled round: too few eligible markets; retrying", "err", err, "retry_in", cfg.RetryEvery, "until", start.Add(cfg.RetryFor).UTC().Format(time.RFC3339))
		if serr := retry.Sleep(ctx, cfg.RetryEvery); serr != nil {
			return errors.Join(fmt.Errorf("rounds: scheduled round: %w", err), serr)
		}
	}
}

// TokenLookup adapts a per-token benchmark source, such as Polymarket's
// polymarket.Client.BenchmarkAt, to a PriceLookup: it asks for the market's
// Yes token, whose CLOB history the price comes from. A market without a
// Yes token id has no benchmark from it.
func TokenLookup(at func(ctx context.Context, tokenID string, t time.Time) (float64, time.Time, bool, error)) PriceLookup {
	return func(ctx context.Context, m *arena.Market, t time.Time) (arena.PricePoint, bool, error) {
		i := m.OutcomeIndex(arena.Yes)
		if i < 0 || i >= len(m.TokenIDs) || m.TokenIDs[i] == "" {
			return arena.PricePoint{}, false, nil
		}
		p, when, ok, err := at(ctx, m.TokenIDs[i], t)
		if err != nil {
			return arena.PricePoint{}, false, fmt.Errorf("rounds: benchmark of %s (token %s): %w", m, m.TokenIDs[i], err)
		}
		return arena.PricePoint{MarketID: m.ID, Outcome: arena.Yes, Time: when, Price: p, Source: arena.PriceCLOBHistory}, ok, nil
	}
}

// VenueLookup is the PriceLookup of each market's own source: bySource's
// entry for its Source (a simulated market named after a venue is the
// simulator's, not the venue's), none for a source without one.
func VenueLookup(bySource map[string]PriceLookup) PriceLookup {
	return func(ctx context.Context, m *arena.Market, t time.Time) (arena.PricePoint, bool, error) {
		look, ok := bySource[m.Source]
		if !ok {
			return arena.PricePoint{}, false, nil
		}
		return look(ctx, m, t)
	}
}
