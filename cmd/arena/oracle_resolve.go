package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/retrieve"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
)

func init() {
	oracleSubs["resolve"] = oracleResolve
	oracleSubs["queue"] = oracleQueue
	oracleSubs["decide"] = oracleDecide
	oracleSubs["flag"] = oracleFlag
	oracleSubs["dispute"] = oracleDispute
}

// wireOracle connects the oracle to both tracks: a change of a market's
// resolution re-scores the forecast rounds and re-settles the trading
// positions it touches, in the transaction that records it, and every
// resolution the oracle applies goes to the forecast track's
// tamper-evident log (when fsvc has one).
func wireOracle(svc *oracle.Service, fsvc *forecast.Service) *oracle.Service {
	svc.Tracks = []arena.ResolutionHook{forecast.Rescore, trading.Resettle}
	if fsvc != nil {
		svc.Applied = fsvc.OracleDecided
	}
	return svc
}

// loggedTrack is the forecast track as far as the oracle commands need
// it: its tamper-evident log (key as for serve, or --log-key).
func loggedTrack(ctx context.Context, o config.Options, logKey string, db *store.DB, logger *slog.Logger) (*forecast.Service, error) {
	lg, err := openLog(ctx, o, logKey, db, logger)
	if err != nil {
		return nil, err
	}
	return &forecast.Service{Store: db, Log: lg, Logger: logger}, nil
}

// oracleService builds the oracle over db from a registry file and the
// configured policy. Calls and evidence are cached under cacheDir when set.
func oracleService(o config.Options, db *store.DB, fsvc *forecast.Service, environ []string, agentsFile, evidence, cacheDir string, logger *slog.Logger, m llm.Metrics) (*oracle.Service, error) {
	reg, err := llm.LoadRegistry(agentsFile)
	if err != nil {
		return nil, err
	}
	pc := oracle.PanelConfig{Registry: reg, Getenv: llm.EnvLookup(environ), CacheDir: cacheDir, LLMOptions: []llm.Option{llm.WithLogger(logger)}, Metrics: m}
	resolvers, _, err := pc.Resolvers()
	if err != nil {
		return nil, err
	}
	exaKey, _ := llm.EnvLookup(environ)("EXA_API_KEY")
	ret, provider, err := retrieve.New(evidence, retrieve.Options{ExaKey: exaKey})
	if err != nil {
		return nil, err
	}
	if cacheDir != "" {
		ret = &retrieve.Cache{Next: ret, Provider: provider, Store: llm.DirStore{Dir: filepath.Join(cacheDir, "evidence")}, Logger: logger}
	}
	pol := arena.OraclePolicy{Architecture: o.OracleArch, AutoMinScore: o.OracleAutoMinScore, RequireUnanimous: o.OracleRequireUnanimous}
	svc := wireOracle(&oracle.Service{Store: db, Panel: &oracle.Panel{Resolvers: resolvers, Retriever: ret, Workers: len(resolvers)}, Policy: pol, Logger: logger}, fsvc)
	if _, err := oracle.ParseArch(pol.Architecture, svc.Panel.Agents()); err != nil {
		return nil, fmt.Errorf("ARENA_ORACLE_ARCH: %w", err)
	}
	return svc, nil
}

// oracleJob runs the oracle hourly over the markets waiting for it.
// m counts the oracle's runs and model calls (may be nil).
func oracleJob(o config.Options, db *store.DB, fsvc *forecast.Service, environ []string, logger *slog.Logger, m *metrics.Metrics) (jobs.Job, error) {
	cache := ""
	if dir, err := dataDir(o); err == nil {
		cache = filepath.Join(dir, "oracle-cache")
	}
	svc, err := oracleService(o, db, fsvc, environ, o.OracleAgents, "question", cache, logger, m)
	if err != nil {
		return jobs.Job{}, err
	}
	svc.Metrics = m
	return jobs.Job{Name: "oracle", Schedule: jobs.Every(time.Hour), Run: func(ctx context.Context, _ time.Time) error {
		n, err := svc.RunPending(ctx)
		if n > 0 {
			logger.Info("oracle run", "markets", n)
		}
		return err
	}}, nil
}

func oracleResolve(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle resolve", "--market ID [--agents FILE] [--evidence question|dir:PATH|exa] [--cache-dir DIR] [--log-key FILE] [--db URL]")
	cf := addConfigFlags(fs, false)
	market := fs.Int64("market", 0, "market id")
	agents := fs.String("agents", "", "resolver panel registry (default ARENA_ORACLE_AGENTS)")
	evidence := fs.String("evidence", "question", "evidence provider: question, dir:PATH or exa")
	cacheDir := fs.String("cache-dir", "", "cache model calls and evidence here")
	logKey := fs.String("log-key", "", "ed25519 key file of the tamper-evident log (default as for serve)")
	o, db, err := marketCommand(ctx, env, fs, cf, args, market)
	if err != nil {
		return err
	}
	defer db.Close()
	file := cmp.Or(*agents, o.OracleAgents)
	if file == "" {
		return arena.Errorf(arena.EINVALID, "no resolver panel: give --agents FILE or set ARENA_ORACLE_AGENTS")
	}
	logger := newLogger(env, o.LogLevel)
	fsvc, err := loggedTrack(ctx, o, *logKey, db, logger)
	if err != nil {
		return err
	}
	svc, err := oracleService(o, db, fsvc, env.Environ, file, *evidence, *cacheDir, logger, nil)
	if err != nil {
		return err
	}
	res, err := svc.Resolve(ctx, *market)
	if err != nil {
		return err
	}
	return writeJSON(env.Stdout, res)
}

func oracleQueue(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle queue", "[--format table|json] [--db URL]")
	cf := addConfigFlags(fs, false)
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	_, db, err := cf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer db.Close()
	q, err := db.OracleQueue(ctx)
	if err != nil {
		return err
	}
	if *format == "json" {
		return writeJSON(env.Stdout, q)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "market\tsince\tpanel\trule\tcomposite\twhy")
	for _, r := range q {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.MarketID, r.CreatedAt.Format(time.RFC3339), orDash(string(r.Verdict.Decision)), r.Verdict.Rule,
			strconv.FormatFloat(r.Verdict.Composite, 'f', 3, 64), strings.Join(r.Verdict.Reasons, ","))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func oracleDecide(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle decide", "--market ID --decision YES|NO|VOID --arbiter NAME --reason TEXT [--re-resolve [--revises SEQ]] [--log-key FILE] [--db URL]")
	cf := addConfigFlags(fs, false)
	market := fs.Int64("market", 0, "market id")
	decision := fs.String("decision", "", "YES, NO or VOID")
	arbiter := fs.String("arbiter", "", "who decides")
	reason := fs.String("reason", "", "why (required to re-resolve)")
	reResolve := fs.Bool("re-resolve", false, "change the decision on a market the oracle already resolved (re-scores the forecast rounds and re-settles the trading positions it changes)")
	revises := fs.Int("revises", 0, "with --re-resolve: the resolution (its number) being corrected; refused if another was recorded since (default: the latest)")
	logKey := fs.String("log-key", "", "ed25519 key file of the tamper-evident log (default as for serve)")
	o, db, err := marketCommand(ctx, env, fs, cf, args, market)
	if err != nil {
		return err
	}
	defer db.Close()
	in := arena.OracleDecisionInput{MarketID: *market, Decision: arena.OracleDecision(strings.ToUpper(strings.TrimSpace(*decision))),
		Arbiter: *arbiter, Reason: *reason, ReResolve: *reResolve, Revises: *revises}
	if err := in.Validate(); err != nil { // before the log key is read or made
		return err
	}
	logger := newLogger(env, o.LogLevel)
	fsvc, err := loggedTrack(ctx, o, *logKey, db, logger)
	if err != nil {
		return err
	}
	svc := wireOracle(&oracle.Service{Store: db, Logger: logger}, fsvc)
	res, err := svc.Decide(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "market %d: %s by %s (resolution %d)\n", res.MarketID, res.Final, res.Arbiter, res.Seq)
	for _, rs := range res.Rescored {
		fmt.Fprintf(env.Stdout, "re-scored round %d: outcome %d -> %d\n", rs.RoundID, rs.PrevOutcome, rs.Outcome)
	}
	return nil
}

func oracleFlag(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle flag", "--market ID --reason TEXT [--db URL]")
	cf := addConfigFlags(fs, false)
	market := fs.Int64("market", 0, "market id")
	reason := fs.String("reason", "", "why the market is ambiguous or disputed (required)")
	o, db, err := marketCommand(ctx, env, fs, cf, args, market)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := &oracle.Service{Store: db, Logger: newLogger(env, o.LogLevel)}
	f, err := svc.Flag(ctx, *market, *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "market %d flagged for the oracle: %s\n", f.MarketID, f.Reason)
	return nil
}

func oracleDispute(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle dispute", "--market ID --admin NAME --reason TEXT [--db URL]")
	cf := addConfigFlags(fs, false)
	market := fs.Int64("market", 0, "market id")
	admin := fs.String("admin", "", "who disputes the resolution (required)")
	reason := fs.String("reason", "", "why the source's resolution is wrong (required)")
	o, db, err := marketCommand(ctx, env, fs, cf, args, market)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := &oracle.Service{Store: db, Logger: newLogger(env, o.LogLevel)}
	d, err := svc.Dispute(ctx, *market, *admin, *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "market %d: resolution %s disputed by %s: %s\n", d.MarketID, d.Resolution, d.Admin, d.Reason)
	fmt.Fprintln(env.Stdout, "the oracle (arena oracle resolve, or the serve job) or an arbiter (arena oracle decide) now decides it")
	return nil
}

// marketCommand parses the flags of a one-market oracle command, checks
// the market id and opens the store.
func marketCommand(ctx context.Context, env *Env, fs *flag.FlagSet, cf *configFlags, args []string, market *int64) (config.Options, *store.DB, error) {
	if err := parseAll(fs, args); err != nil {
		return config.Options{}, nil, err
	}
	if *market <= 0 {
		return config.Options{}, nil, arena.Errorf(arena.EINVALID, "--market ID is required")
	}
	return cf.openExisting(ctx, env)
}
