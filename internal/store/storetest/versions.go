package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// The store's methods by what they do to the data views are computed
// from. Every exported method of store.DB is in exactly one list, or in
// a step of testVersions: a method added without saying which it is
// fails the suite.
var (
	// readMethods only read.
	readMethods = []string{"Agent", "AgentKnown", "AgentSubmissions", "Agents", "AllOracleResolutions", "BacktestForecasts",
		"ChainRoundsOpen", "ChainRoundsToStart", "ChainTxs", "Close", "Cohort", "CohortByWeek", "CohortTrades", "Cohorts", "Collector",
		"Decision", "DecisionCosts", "Decisions", "Engine", "ExportManifest", "ExportPart", "HumanForecasts",
		"HumanSets", "JobHealth", "JobRuns", "LatestCheckpoint", "LogEntries", "LogSize", "LogTiles", "Market", "MarketBySource", "MarketFacets",
		"MarketList", "Markets", "MarketsByID", "NewAgentsSince", "Nonce", "OpenPositionMarkets", "OpenPositionsIn", "OracleDispute",
		"OracleDisputes", "OracleFlags", "OracleQueue", "OracleResolutions", "Ping", "Portfolio", "Portfolios", "PositionsOf",
		"PriceHistory", "RecentOracleResolutions", "Round", "RoundAgents", "RoundScores", "RoundTraces", "Rounds", "Schema",
		"ScoredForecasts", "Setting", "Settlements", "Snapshot", "Snapshots", "Submissions", "Trace", "TraceCosts", "Trades", "Versions",
		"ExportManifests", "ExportPartsBefore"}
	// operationalMethods write what no view is computed from: job
	// claims, settings, rate limits, the log (whose version is its size),
	// its checkpoints and the exports published of them.
	operationalMethods = []string{"AppendLog", "ClaimJob", "ClaimJobRun", "ClaimServer", "FinishJob", "InitSetting", "PutSetting",
		"PruneRateBuckets", "SaveCheckpoint", "SaveExportManifest", "SaveExportPart", "SaveLogTiles", "SettleTokens", "DeleteExportManifests",
		"DeleteExportParts"}
)

// views digests what every domain's views read, through the store's
// read methods.
func views(t *testing.T, db *store.DB) map[arena.Domain]string {
	t.Helper()
	ctx := context.Background()
	out := map[arena.Domain]string{}
	// add folds a read's result into d's digest; nothing found adds
	// nothing, so a new record of another domain (a round, whose scores
	// and traces are none yet) leaves d's digest as it was.
	add := func(d arena.Domain, v any, err error) {
		t.Helper()
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			return
		}
		if err != nil {
			t.Fatalf("read the %s view: %v", d, err)
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Len() == 0 {
			return
		}
		b, merr := json.Marshal(v)
		if merr != nil {
			t.Fatal(merr)
		}
		out[d] = fmt.Sprintf("%x", sha256.Sum256(append([]byte(out[d]), b...)))
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{})
	add(arena.DomainMarkets, ms, err)
	facets, err := db.MarketFacets(ctx)
	add(arena.DomainMarkets, facets, err)
	for _, m := range ms {
		ps, err := db.PriceHistory(ctx, m.ID, arena.Yes, time.Time{}, t0.AddDate(10, 0, 0))
		add(arena.DomainMarkets, ps, err)
		rs, err := db.OracleResolutions(ctx, m.ID)
		add(arena.DomainOracle, rs, err)
	}
	all, err := db.AllOracleResolutions(ctx)
	add(arena.DomainOracle, all, err)
	flags, err := db.OracleFlags(ctx)
	add(arena.DomainOracle, flags, err)
	disputes, err := db.OracleDisputes(ctx)
	add(arena.DomainOracle, disputes, err)

	rounds, err := db.Rounds(ctx, arena.RoundFilter{})
	add(arena.DomainRounds, rounds, err)
	agents, err := db.Agents(ctx)
	var nonces []string // the submissions' (commits and reveals move them)
	for i, a := range agents {
		if a.Nonce > 0 {
			nonces = append(nonces, fmt.Sprint(a.Address, a.Nonce))
		}
		agents[i].Nonce = 0
	}
	add(arena.DomainAgents, agents, err)
	add(arena.DomainSubmissions, nonces, err)
	sf, err := db.ScoredForecasts(ctx)
	add(arena.DomainScores, sf, err)
	for _, r := range rounds {
		subs, err := db.Submissions(ctx, r.ID)
		add(arena.DomainSubmissions, subs, err)
		sc, err := db.RoundScores(ctx, r.ID)
		add(arena.DomainScores, sc, err)
		tr, err := db.RoundTraces(ctx, r.ID)
		add(arena.DomainTraces, tr, err)
	}

	cohorts, err := db.Cohorts(ctx, "")
	add(arena.DomainTrading, cohorts, err)
	for _, c := range cohorts {
		ps, err := db.Portfolios(ctx, c.ID)
		add(arena.DomainTrading, ps, err)
		ds, err := db.Decisions(ctx, c.ID)
		add(arena.DomainTrading, ds, err)
		for _, p := range ps {
			pos, err := db.PositionsOf(ctx, p.ID)
			add(arena.DomainTrading, pos, err)
			trades, err := db.Trades(ctx, p.ID)
			add(arena.DomainTrading, trades, err)
			snaps, err := db.Snapshots(ctx, p.ID)
			add(arena.DomainTrading, snaps, err)
		}
	}
	st, err := db.Settlements(ctx)
	add(arena.DomainTrading, st, err)

	bt, err := db.BacktestForecasts(ctx)
	add(arena.DomainBacktest, bt, err)
	sets, err := db.HumanSets(ctx)
	add(arena.DomainHumans, sets, err)
	for _, s := range sets {
		hs, err := db.HumanForecasts(ctx, s.Due)
		add(arena.DomainHumans, hs, err)
	}
	txs, err := db.ChainTxs(ctx, 0, "")
	add(arena.DomainChain, txs, err)
	return out
}

// testVersions: every write that changes what a view of some domain reads
// moves that domain's version, in the transaction that writes (a reader
// of the version then never caches a value of older data), and a write
// that changes nothing moves nothing. It plays an arena's life through
// every write method of the store, and checks each step.
func testVersions(t *testing.T, db *store.DB) {
	ctx := context.Background()
	var covered []string
	step := func(name string, methods []string, unchanged bool, write func() error) {
		t.Helper()
		covered = append(covered, methods...)
		before, vb := views(t, db), versions(t, db)
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		after, va := views(t, db), versions(t, db)
		for _, d := range arena.Domains {
			switch changed, moved := before[d] != after[d], vb[d] != va[d]; {
			case changed && !moved:
				t.Errorf("%s changed the %s view without moving its version (%d)", name, d, vb[d])
			case unchanged && (changed || moved):
				t.Errorf("%s, which changes nothing, changed the %s view (%v) or moved its version (%d to %d)", name, d, changed, vb[d], va[d])
			case moved && va[d] != vb[d]+1:
				t.Errorf("%s moved the %s version from %d to %d: one transaction moves it by one", name, d, vb[d], va[d])
			}
		}
	}
	noCheck := func(arena.SubmissionState) error { return nil }

	// Markets, and a sync that repeats them.
	m1, m2, m3 := Binary("v1", 10), Binary("v2", 20), Binary("v3", 30)
	step("SaveMarkets", []string{"SaveMarkets"}, false, func() error {
		_, err := db.SaveMarkets(ctx, []*arena.Market{m1, m2, m3})
		return err
	})
	step("SaveMarkets of the same markets", nil, true, func() error {
		_, err := db.SaveMarkets(ctx, []*arena.Market{Binary("v1", 10), Binary("v2", 20), Binary("v3", 30)})
		return err
	})

	// Agents.
	alice, bob := "0x00000000000000000000000000000000000A11CE", "0x0000000000000000000000000000000000000B0B"
	step("SetAgent", []string{"SetAgent"}, false, func() error {
		return db.SetAgent(ctx, arena.AgentInfo{Address: alice, Kind: "sim", Name: "Alice"})
	})
	step("SetProfile", []string{"SetProfile"}, false, func() error {
		a := arena.AgentInfo{Address: bob, Name: "Bob", ProfileVersion: 1}
		return db.SetProfile(ctx, a, leaf("profile"), nextVersion(a))
	})

	// A round: created, committed to, revealed, benchmarked, resolved and
	// scored.
	r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour),
		CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: m1.ID}, {MarketID: m2.ID}}}
	step("CreateRound", []string{"CreateRound"}, false, func() error { return db.CreateRound(ctx, r) })
	step("Submit (commit)", []string{"Submit"}, false, func() error {
		return db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r.ID, Agent: alice, CommitHash: "0xc0", ReasoningHash: "0x0e",
			CommitNonce: 0, CommitSig: "0x5e", Log: leaf("commit")}, t0, noCheck)
	})
	step("Submit (reveal)", nil, false, func() error {
		return db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r.ID, Agent: alice, Predictions: []uint16{7000, 2000}, Salt: "0x5a",
			RevealNonce: 1, RevealSig: "0x5f", Log: leaf("reveal")}, t0.Add(2*time.Hour), noCheck)
	})
	step("Submit (reasoning)", nil, false, func() error {
		return db.Submit(ctx, arena.SubmitReasoning, &arena.Submission{RoundID: r.ID, Agent: alice, Reasoning: `["a","b"]`}, t0.Add(3*time.Hour), noCheck)
	})
	bench := 0.4
	step("SetBenchmarks", []string{"SetBenchmarks"}, false, func() error {
		return db.SetBenchmarks(ctx, r.ID, []arena.RoundMarket{{Benchmark: &bench, BenchmarkBps: 4000, BenchmarkTime: t0.Add(time.Hour), BenchmarkSource: arena.PriceSim},
			{}}, t0.Add(time.Hour), leaf("benchmark"))
	})
	step("SaveTrace", []string{"SaveTrace"}, false, func() error {
		return db.SaveTrace(ctx, &arena.ForecastTrace{RoundID: r.ID, Agent: alice, AgentID: "alice", Submitted: true, Calls: 1, Trace: json.RawMessage(`{}`), CreatedAt: t0})
	})
	step("ResolveMarket", []string{"ResolveMarket"}, false, func() error {
		_, err := db.ResolveMarket(ctx, m1.ID, arena.Yes, t0.Add(4*time.Hour), leaf("resolution"))
		return err
	})
	step("ResolveMarket to the resolution in force", nil, true, func() error {
		_, err := db.ResolveMarket(ctx, m1.ID, "yes", t0.Add(5*time.Hour), leaf("resolution"))
		return err
	})
	resolved := Binary("v2", 20)
	resolved.Status, resolved.Resolution, resolved.ResolvedAt = arena.StatusResolved, arena.No, t0.Add(4*time.Hour)
	step("SaveMarkets that resolves a market", nil, false, func() error {
		_, err := db.SaveMarkets(ctx, []*arena.Market{resolved})
		return err
	})
	scores := []arena.RoundScore{{RoundID: r.ID, Agent: alice, Brier: 0.065, BrierBps2: 6_500_000, Scored: 2, Benchmarked: 1}}
	rows := []arena.ScoredForecast{{RoundID: r.ID, Agent: alice, MarketID: m1.ID, Forecast: 0.7, Benchmark: &bench, Outcome: 1},
		{RoundID: r.ID, Agent: alice, MarketID: m2.ID, Forecast: 0.2, Outcome: 0}}
	step("SaveRoundResult", []string{"SaveRoundResult"}, false, func() error {
		return db.SaveRoundResult(ctx, r.ID, []int8{1, 0}, scores, rows, t0.Add(5*time.Hour), leaf("outcome"), leaf("score"))
	})

	// The oracle: a flag, a panel's escalation decided, a dispute decided
	// with a re-score, a re-resolution with a re-settlement.
	step("FlagOracle", []string{"FlagOracle"}, false, func() error {
		return db.FlagOracle(ctx, arena.OracleFlag{MarketID: m3.ID, Reason: "ambiguous"})
	})
	step("SaveOracleResolution (escalated)", []string{"SaveOracleResolution"}, false, func() error {
		return db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: m3.ID, Verdict: oracleVerdict(true, arena.OracleYes), Policy: arena.DefaultOraclePolicy})
	})
	step("DecideOracle (escalated)", []string{"DecideOracle"}, false, func() error {
		_, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m3.ID, Decision: arena.OracleYes, Arbiter: "ann"})
		return err
	})
	step("DecideOracle as decided", nil, true, func() error {
		_, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m3.ID, Decision: arena.OracleYes, Arbiter: "bea"})
		return err
	})
	dispute := arena.OracleDispute{MarketID: m1.ID, Admin: "ann", Reason: "the source misread it"}
	logged := func(ctx context.Context, tx arena.LogTx, _ *arena.OracleDispute) error {
		return tx.AppendLeaves(ctx, leaf("dispute"))
	}
	step("DisputeOracle", []string{"DisputeOracle"}, false, func() error {
		d := dispute
		_, err := db.DisputeOracle(ctx, &d, logged)
		return err
	})
	step("DisputeOracle sent again", nil, true, func() error {
		d := dispute
		_, err := db.DisputeOracle(ctx, &d, logged)
		return err
	})
	rescore := func(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
		if c.Market.Resolution == "" {
			return nil
		}
		again := []arena.RoundScore{{RoundID: r.ID, Agent: alice, Brier: 0.265, BrierBps2: 26_500_000, Scored: 2, Benchmarked: 1}}
		return tx.SaveRescore(ctx, &arena.RoundRescore{RoundID: r.ID, MarketID: m1.ID, ResolutionID: c.Resolution.ID, Index: 0, PrevOutcome: 1,
			Outcome: 0, Outcomes: []int8{0, 0}, Previous: scores, Scores: again, At: c.At},
			[]arena.ScoredForecast{{RoundID: r.ID, Agent: alice, MarketID: m1.ID, Forecast: 0.7, Benchmark: &bench, Outcome: 0}, rows[1]})
	}
	step("DecideOracle (dispute), re-scoring", nil, false, func() error {
		_, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m1.ID, Decision: arena.OracleNo, Arbiter: "ann", Reason: "rules"}, rescore)
		return err
	})

	// The trading track: a cohort's decisions, bets, valuations and
	// settlements, and its completion.
	c := &arena.Cohort{WeekStart: week, Lineup: lineup("a", "b"), InitialCash: 10_000 * arena.Dollar}
	step("CreateCohort", []string{"CreateCohort"}, false, func() error {
		_, err := db.CreateCohort(ctx, c)
		return err
	})
	step("SaveFrame", []string{"SaveFrame"}, false, func() error {
		_, err := db.SaveFrame(ctx, c.ID, week, []byte(`{"markets":[]}`))
		return err
	})
	var dec *arena.Decision
	step("ClaimDecision", []string{"ClaimDecision"}, false, func() (err error) {
		dec, _, err = claim(db, c, "a", "me", t0)
		return err
	})
	ps, err := db.Portfolios(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	step("FinishDecision (a bet)", []string{"FinishDecision"}, false, func() error {
		return db.FinishDecision(ctx, dec, Bet(ps[0], m2.ID))
	})
	step("ClaimDecision (another)", nil, false, func() (err error) {
		dec, _, err = claim(db, c, "b", "me", t0)
		return err
	})
	step("FailDecision", []string{"FailDecision"}, false, func() error { return db.FailDecision(ctx, dec) })
	step("ApplyChange (a bet)", []string{"ApplyChange"}, false, func() error { return db.ApplyChange(ctx, Bet(ps[1], m1.ID)) })
	step("SaveSnapshots", []string{"SaveSnapshots"}, false, func() error {
		_, err := db.SaveSnapshots(ctx, []arena.ValuationSnapshot{{PortfolioID: ps[0].ID, At: t0, Cash: 9000 * arena.Dollar, Total: 10_000 * arena.Dollar}}, nil)
		return err
	})
	step("SaveSnapshots again", nil, true, func() error {
		_, err := db.SaveSnapshots(ctx, []arena.ValuationSnapshot{{PortfolioID: ps[0].ID, At: t0, Cash: 9000 * arena.Dollar, Total: 10_000 * arena.Dollar}}, nil)
		return err
	})
	settle := func(p *arena.Portfolio, market int64, res string) error {
		p, err := db.Portfolio(ctx, p.ID)
		if err != nil {
			return err
		}
		pos := *p.Positions[0]
		pos.Shares, pos.CostBasis, pos.Status, pos.ClosedAt = 0, 0, arena.PositionSettled, t0
		ch := &arena.PortfolioChange{PortfolioID: p.ID, ExpectVersion: p.Version, Cash: p.Cash, Realized: p.Realized - 1000*arena.Dollar,
			Positions: []*arena.Position{&pos}, Trades: []*arena.Trade{{PositionID: pos.ID, MarketID: market, Side: "YES", Kind: arena.TradeSettle,
				Shares: 2000 * arena.OneShare, CostBasis: 1000 * arena.Dollar, CashBefore: p.Cash, CreatedAt: t0}}}
		return db.SettleMarket(ctx, arena.Settlement{MarketID: market, Resolution: res, Positions: 1, SettledAt: t0}, []*arena.PortfolioChange{ch})
	}
	step("SettleMarket", []string{"SettleMarket"}, false, func() error { return settle(ps[0], m2.ID, arena.No) })
	step("SettleMarket (another)", nil, false, func() error { return settle(ps[1], m1.ID, arena.No) })
	resettle := func(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
		p, err := tx.LockPortfolio(ctx, ps[1].ID)
		if err != nil {
			return err
		}
		trades, err := tx.MarketTrades(ctx, m1.ID)
		if err != nil {
			return err
		}
		ch := &arena.PortfolioChange{PortfolioID: p.ID, ExpectVersion: p.Version, Cash: p.Cash + 2000*arena.Dollar, Realized: p.Realized + 2000*arena.Dollar,
			Trades: []*arena.Trade{{PositionID: trades[0].PositionID, MarketID: m1.ID, Side: "YES", Kind: arena.TradeResettle, Amount: 2000 * arena.Dollar,
				CashBefore: p.Cash, CreatedAt: c.At}}}
		if err := tx.ApplyChange(ctx, ch); err != nil {
			return err
		}
		return tx.Resettled(ctx, m1.ID, c.Outcome)
	}
	step("DecideOracle (re-resolution), re-settling", nil, false, func() error {
		_, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m1.ID, Decision: arena.OracleYes, Arbiter: "bob", Reason: "corrected", ReResolve: true}, resettle)
		return err
	})
	step("CompleteCohorts", []string{"CompleteCohorts"}, false, func() error {
		_, err := db.CompleteCohorts(ctx, week.AddDate(0, 0, 7), t0.AddDate(0, 0, 7))
		return err
	})

	// Backtests, human forecasts and the relayer.
	step("SaveBacktest", []string{"SaveBacktest"}, false, func() error {
		return db.SaveBacktest(ctx, []arena.BacktestForecast{{Agent: "m", Round: "2025-10-26#1", MarketID: m3.ID, SourceID: "v3", Forecast: 6000, Outcome: 1, CreatedAt: t0}})
	})
	step("ReplaceHumanForecasts", []string{"ReplaceHumanForecasts"}, false, func() error {
		return db.ReplaceHumanForecasts(ctx, week, arena.HumanSuper, []arena.HumanForecast{{Due: week, Group: arena.HumanSuper, Source: "acled", QuestionID: "q1",
			UserID: "u1", Forecast: 0.3}})
	})
	chain := &arena.ChainTx{Kind: "round", RoundID: r.ID, Status: arena.ChainTxSent, TxHash: "0x01"}
	step("InsertChainTx", []string{"InsertChainTx"}, false, func() error {
		_, err := db.InsertChainTx(ctx, chain)
		return err
	})
	step("UpdateChainTx", []string{"UpdateChainTx"}, false, func() error {
		chain.Status = arena.ChainTxConfirmed
		return db.UpdateChainTx(ctx, chain)
	})

	// Every method is a read, an operational write or a step's.
	known := slices.Concat(readMethods, operationalMethods, covered)
	typ := reflect.TypeOf(db)
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; !slices.Contains(known, name) {
			t.Errorf("store.DB.%s is neither a read, an operational write nor a step of this test: say which (and add a step for a write)", name)
		}
	}
}

// versions reads every domain's version.
func versions(t *testing.T, db *store.DB) arena.Versions {
	t.Helper()
	vs, err := db.Versions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return vs
}
