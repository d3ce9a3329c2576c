package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
)

func init() {
	oracleSubs["resolve"] = oracleResolve
	oracleSubs["queue"] = oracleQueue
	oracleSubs["decide"] = oracleDecide
	oracleSubs["flag"] = oracleFlag
	oracleSubs["dispute"] = oracleDispute
}

func oracleResolve(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle resolve", "--market ID [--agents FILE] [--evidence question|dir:PATH|exa] [--cache-dir DIR] [--log-key FILE] [--db URL] [--format table|json]")
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	market := fs.Int64("market", 0, "market id")
	agents := fs.String("agents", "", "resolver panel registry (default ARENA_ORACLE_AGENTS)")
	evidence := fs.String("evidence", "question", "evidence provider: question, dir:PATH or exa")
	cacheDir := fs.String("cache-dir", "", "cache model calls and evidence here")
	format := fs.String("format", "table", "output format: table (a summary: decision, composite, votes) or json (the full record: evidence, prompts, raw answers)")
	o, err := marketCommand(env, fs, cf, args, market)
	if err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	file := cmp.Or(*agents, o.OracleAgents)
	if file == "" {
		return arena.Errorf(arena.EINVALID, "no resolver panel: give --agents FILE or set ARENA_ORACLE_AGENTS")
	}
	o.OracleAgents = file
	// The panel is built before the log key is read or made.
	a, err := newApp(ctx, env, o, app.Deps{Evidence: &app.Evidence{Spec: *evidence, CacheDir: *cacheDir}, Log: app.LogWrite, RunsOracle: true})
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Oracle.Resolve(ctx, *market)
	if err != nil {
		return err
	}
	if *format == "json" {
		return writeJSON(env.Stdout, res)
	}
	return printResolution(env.Stdout, res)
}

// printResolution is a resolution as a person reads it, on one screen:
// the decision and why, then one line per vote. The prompts, raw answers
// and evidence are in the JSON record.
func printResolution(w io.Writer, res *arena.OracleResolution) error {
	v, p := res.Verdict, res.Policy
	unanimous := "split"
	if v.Unanimous {
		unanimous = "unanimous"
	}
	fmt.Fprintf(w, "market %d: ", res.MarketID)
	if res.Status == arena.OracleEscalated {
		fmt.Fprintf(w, "escalated to a human arbiter (%s)\n", strings.Join(v.Reasons, ", "))
	} else {
		fmt.Fprintf(w, "%s, resolved by the panel\n", res.Final)
	}
	needs := fmt.Sprintf("%.2f", p.AutoMinScore)
	if p.RequireUnanimous {
		needs += " and unanimity"
	}
	fmt.Fprintf(w, "panel (%s): %s by rule %s, %s, composite %.2f (resolving alone needs %s)\n",
		v.Architecture, orDash(string(v.Decision)), v.Rule, unanimous, v.Composite, needs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nROUND\tRESOLVER\tDECISION\tCONFIDENCE\tREASONING")
	var cost int64
	calls := 0
	for _, x := range append(slices.Clip(v.Round1), v.Round2...) {
		decision, conf, why := string(x.Decision), fmt.Sprintf("%.0f%%", 100*x.Confidence), x.Reasoning
		if x.Failure != "" {
			decision, conf, why = "failed", "–", x.Failure
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", x.Round, x.Agent, orDash(decision), conf, printable(truncate(oneLineText(why), 70)))
		if !x.Cached {
			cost += x.CostMicros
		}
		calls += x.Calls
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nevidence: %s; %d model calls, new spend %s\n", arena.Plural(len(res.Evidence.Sources), "source"), calls, arena.Micros(cost))
	for _, rs := range res.Rescored {
		fmt.Fprintf(w, "re-scored round %d: outcome %d -> %d\n", rs.RoundID, rs.PrevOutcome, rs.Outcome)
	}
	if res.Status == arena.OracleEscalated {
		fmt.Fprintf(w, "decide it: arena oracle decide --market %d --decision YES|NO|VOID --arbiter NAME --reason TEXT\n", res.MarketID)
	}
	fmt.Fprintln(w, "the full record (evidence, prompts, raw answers): --format json")
	return nil
}

// oneLineText is free text on one line: runs of white space, newlines
// included, become one space.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

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
			strconv.FormatFloat(r.Verdict.Composite, 'f', 2, 64), strings.Join(r.Verdict.Reasons, ","))
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
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	market := fs.Int64("market", 0, "market id")
	decision := fs.String("decision", "", "YES, NO or VOID")
	arbiter := fs.String("arbiter", "", "who decides")
	reason := fs.String("reason", "", "why (required to re-resolve)")
	reResolve := fs.Bool("re-resolve", false, "change the decision on a market the oracle already resolved (re-scores the forecast rounds and re-settles the trading positions it changes)")
	revises := fs.Int("revises", 0, "with --re-resolve: the resolution (its number) being corrected; refused if another was recorded since (default: the latest)")
	o, err := marketCommand(env, fs, cf, args, market)
	if err != nil {
		return err
	}
	in := arena.OracleDecisionInput{MarketID: *market, Decision: arena.OracleDecision(strings.ToUpper(strings.TrimSpace(*decision))),
		Arbiter: *arbiter, Reason: *reason, ReResolve: *reResolve, Revises: *revises}
	if err := in.Validate(); err != nil { // before the log key is read or made
		return err
	}
	a, err := newApp(ctx, env, o, app.Deps{Log: app.LogWrite})
	if err != nil {
		return err
	}
	defer a.Close()
	res, changed, err := a.Oracle.Decide(ctx, in)
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "market %d: %s is already in force (resolution %d by %s); nothing recorded\n", res.MarketID, res.Final, res.Seq, cmp.Or(res.Arbiter, "the panel"))
		return nil
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
	a, err := marketApp(ctx, env, fs, cf, args, market)
	if err != nil {
		return err
	}
	defer a.Close()
	f, err := a.Oracle.Flag(ctx, *market, *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "market %d flagged for the oracle: %s\n", f.MarketID, f.Reason)
	return nil
}

func oracleDispute(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle dispute", "--market ID --admin NAME --reason TEXT [--log-key FILE] [--db URL]")
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	market := fs.Int64("market", 0, "market id")
	admin := fs.String("admin", "", "who disputes the resolution (required)")
	reason := fs.String("reason", "", "why the source's resolution is wrong (required)")
	o, err := marketCommand(env, fs, cf, args, market)
	if err != nil {
		return err
	}
	check := arena.OracleDispute{MarketID: *market, Admin: *admin, Reason: *reason}
	if err := check.Validate(); err != nil { // before the log key is read or made
		return err
	}
	// The dispute is a log entry: who, why, when.
	a, err := newApp(ctx, env, o, app.Deps{Log: app.LogWrite})
	if err != nil {
		return err
	}
	defer a.Close()
	d, recorded, err := a.Oracle.Dispute(ctx, *market, *admin, *reason)
	if err != nil {
		return err
	}
	if !recorded {
		fmt.Fprintf(env.Stdout, "market %d: this dispute by %s is recorded already (%s); nothing recorded\n", d.MarketID, d.Admin, d.CreatedAt.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(env.Stdout, "market %d: resolution %s disputed by %s: %s\n", d.MarketID, d.Resolution, d.Admin, d.Reason)
	fmt.Fprintln(env.Stdout, "the oracle (arena oracle resolve, or the serve job) or an arbiter (arena oracle decide) now decides it")
	return nil
}

// marketCommand parses the flags of a one-market oracle command, checks
// the market id and resolves the configuration.
func marketCommand(env *Env, fs *flag.FlagSet, cf *configFlags, args []string, market *int64) (config.Options, error) {
	if err := parseAll(fs, args); err != nil {
		return config.Options{}, err
	}
	if *market <= 0 {
		return config.Options{}, arena.Errorf(arena.EINVALID, "--market ID is required")
	}
	return cf.options(env)
}

// marketApp is marketCommand's, then the arena's services.
func marketApp(ctx context.Context, env *Env, fs *flag.FlagSet, cf *configFlags, args []string, market *int64) (*app.App, error) {
	o, err := marketCommand(env, fs, cf, args, market)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, env, o, app.Deps{})
}
