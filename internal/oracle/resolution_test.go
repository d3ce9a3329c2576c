package oracle_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

var (
	quiet = slog.New(slog.DiscardHandler)
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// panel is three resolvers on srv that all answer every question with
// decision at confidence 0.95: the policy resolves on its own.
func panel(t *testing.T, srv *llmtest.Server, decision arena.OracleDecision) *oracle.Panel {
	t.Helper()
	var rs []*oracle.Resolver
	for _, model := range []string{"alpha", "beta", "gamma"} {
		srv.Handle(model, func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.OK(fmt.Sprintf(`{"decision":%q,"confidence":0.95,"reasoning":"the record"}`, decision), 10, 5)
		})
		cl, err := llm.NewClient(llm.ModelSpec{ID: model, Provider: "local", Model: model, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second)}, "", llm.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, &oracle.Resolver{ID: model, Completer: cl})
	}
	return &oracle.Panel{Resolvers: rs, Workers: 3}
}

// service is the oracle as the composition root wires it: both tracks'
// hooks, and applied resolutions counted where the forecast track logs
// them (after the re-scores).
func service(db *store.DB, p *oracle.Panel, applied *[]*arena.OracleResolution) *oracle.Service {
	return &oracle.Service{Store: db, Panel: p, Policy: arena.DefaultOraclePolicy, Logger: quiet, Now: func() time.Time { return t0.Add(72 * time.Hour) },
		Tracks: []arena.ResolutionHook{rounds.Rescore, trading.Resettle, rounds.LogResolution,
			func(_ context.Context, _ arena.ResolutionTx, c *arena.ResolutionChange) error {
				*applied = append(*applied, c.Resolution)
				return nil
			}}}
}

// The oracle resolves only closed markets that are ambiguous, flagged or
// disputed. An open market, flagged or not, a market its source resolved
// (undisputed) and a closed unambiguous one are refused with the reason,
// by Resolve (the command) and by the serve job alike, before any model is
// asked: no vote is stored, nothing is logged, the market is unchanged.
// A closed flagged market, the control, is resolved.
func TestResolveEligibility(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		mk := func(id string, closes time.Time, st arena.MarketStatus) *arena.Market {
			m := storetest.Binary(id, 100)
			m.CloseTime, m.Status = closes, st
			return m
		}
		open := mk("open", t0.Add(7*24*time.Hour), arena.StatusOpen)
		flaggedOpen := mk("flagged-open", t0.Add(21*24*time.Hour), arena.StatusOpen)
		upstream := mk("upstream", t0, arena.StatusOpen)
		closed := mk("closed", t0, arena.StatusClosed)
		control := mk("control", t0.Add(time.Hour), arena.StatusOpen)
		if _, err := db.SaveMarkets(ctx, []*arena.Market{open, flaggedOpen, upstream, closed, control}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ResolveMarket(ctx, upstream.ID, arena.Yes, t0); err != nil {
			t.Fatal(err)
		}
		srv := llmtest.New(t)
		var applied []*arena.OracleResolution
		svc := service(db, panel(t, srv, arena.OracleNo), &applied)
		for _, id := range []int64{flaggedOpen.ID, control.ID} {
			if _, err := svc.Flag(ctx, id, "the source is disputed"); err != nil {
				t.Fatal(err)
			}
		}
		before := map[int64]*arena.Market{}
		for _, m := range []*arena.Market{open, flaggedOpen, upstream, closed} {
			before[m.ID], _ = db.Market(ctx, m.ID)
		}
		for _, c := range []struct {
			name string
			id   int64
			want string
		}{
			{"open, unflagged, closes in a week", open.ID, "still open"},
			{"flagged, three weeks before close", flaggedOpen.ID, "still open"},
			{"resolved by its source, undisputed", upstream.ID, "dispute it"},
			{"closed, unambiguous", closed.ID, "not ambiguous, flagged or disputed"},
		} {
			_, err := svc.Resolve(ctx, c.id)
			if arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want a conflict saying %q", c.name, err, c.want)
			}
		}
		// The serve job: nothing to run but the control.
		if pending, err := svc.Pending(ctx); err != nil || len(pending) != 0 {
			t.Fatalf("pending before the control closes: %d %v", len(pending), err)
		}
		if n, err := svc.RunPending(ctx); err != nil || n != 0 {
			t.Fatalf("serve job: %d %v", n, err)
		}
		for id, m := range before {
			if _, err := db.OracleResolutions(ctx, id); arena.ErrorKind(err) != arena.ENOTFOUND {
				t.Errorf("market %d: votes stored (%v)", id, err)
			}
			if got, _ := db.Market(ctx, id); got.Resolution != m.Resolution || got.Status != m.Status || got.Ambiguous != m.Ambiguous {
				t.Errorf("market %d changed: %+v -> %+v", id, m, got)
			}
		}
		if n := len(srv.Requests("")); n != 0 || len(applied) != 0 {
			t.Fatalf("refusals asked the panel %d times and applied %d resolutions", n, len(applied))
		}

		// The control closes: the serve job resolves it.
		control.Status, control.Prices, control.History = arena.StatusClosed, nil, nil
		if _, err := db.SaveMarkets(ctx, []*arena.Market{control}); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.RunPending(ctx); err != nil || n != 1 || len(applied) != 1 {
			t.Fatalf("serve job on the closed flagged market: %d %v, %d applied", n, err, len(applied))
		}
		if m, _ := db.Market(ctx, control.ID); m.Resolution != arena.No {
			t.Fatalf("control %+v", m)
		}
	})
}

// fixture is a market its source resolved YES after both tracks used it:
// a forecast round froze it YES and scored alice's 80%, and a trading
// portfolio's $1000 YES bet at 0.50 (2000 shares) settled for $2000.
type fixture struct {
	market, portfolio int64
	round             uint64
}

const alice = "0x00000000000000000000000000000000000A11CE"

func newFixture(t *testing.T, db *store.DB) fixture {
	t.Helper()
	ctx := context.Background()
	m := storetest.SaveMarket(t, db, "contested")
	r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour), CreatedAt: t0,
		Markets: []arena.RoundMarket{{MarketID: m}}}
	if err := db.CreateRound(ctx, r); err != nil {
		t.Fatal(err)
	}
	ok := func(arena.SubmissionState) error { return nil }
	n, _ := db.Nonce(ctx, alice)
	if err := db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r.ID, Agent: alice, CommitHash: "0x01", CommitNonce: n, CommitSig: "0x02"}, t0, ok); err != nil {
		t.Fatal(err)
	}
	n, _ = db.Nonce(ctx, alice)
	if err := db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r.ID, Agent: alice, Predictions: []uint16{8000}, Salt: "0x03", RevealNonce: n, RevealSig: "0x04"},
		t0.Add(2*time.Hour), ok); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, m, arena.Yes, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	rd, _ := db.Round(ctx, r.ID)
	mk, _ := db.Market(ctx, m)
	subs, _ := db.Submissions(ctx, r.ID)
	frozen := []int8{scoring.OutcomeYes}
	scores, rows, err := scoring.ScoreFrozen(rd, frozen, []*arena.Market{mk}, subs)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveRoundResult(ctx, r.ID, frozen, scores, rows, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	c := storetest.NewCohort(t, db, "a")
	ps, _ := db.Portfolios(ctx, c.ID)
	if err := db.ApplyChange(ctx, storetest.Bet(ps[0], m)); err != nil {
		t.Fatal(err)
	}
	eng := &trading.Engine{Store: db, Logger: quiet}
	if rep, err := eng.Settle(ctx, t0.Add(5*time.Hour), trading.PolicyOracle); err != nil || rep.Settled != 1 {
		t.Fatalf("settle %+v %v", rep, err)
	}
	return fixture{market: m, portfolio: ps[0].ID, round: r.ID}
}

// state is what both tracks hold of the fixture.
type state struct {
	resolution  string
	cash        arena.Micros
	realized    arena.Micros
	trades      int
	aliceBrier  int64
	outcome     int8
	resolutions int
}

func (f fixture) state(t *testing.T, db *store.DB) state {
	t.Helper()
	ctx := context.Background()
	m, _ := db.Market(ctx, f.market)
	p, err := db.Portfolio(ctx, f.portfolio)
	if err != nil {
		t.Fatal(err)
	}
	// The ledger identity, to the micro-dollar: no position is open, so
	// cash = initial cash + realized P/L.
	if len(p.Positions) != 0 || p.Cash != 10_000*arena.Dollar+p.Realized {
		t.Fatalf("ledger identity broken: %+v", p)
	}
	trades, _ := db.Trades(ctx, f.portfolio)
	s := state{resolution: m.Resolution, cash: p.Cash, realized: p.Realized, trades: len(trades)}
	scores, _ := db.RoundScores(ctx, f.round)
	for _, sc := range scores {
		if sc.Agent == alice {
			s.aliceBrier = sc.BrierBps2
		}
	}
	rd, _ := db.Round(ctx, f.round)
	s.outcome = *rd.Markets[0].Outcome
	hist, _ := db.OracleResolutions(ctx, f.market)
	s.resolutions = len(hist)
	return s
}

// The source resolved a market YES; an admin disputes it; the serve job's
// panel decides NO, which both tracks apply as a re-resolution in the
// transaction that records it: the forecast round is re-scored (alice's
// 80% now scores 6400·10⁴ bps², not 400·10⁴) and the trading payout of
// $2000 is taken back through the ledger (RESETTLE −$2000), the identity
// exact throughout. An arbiter's re-resolution back to YES restores both;
// the same again changes and logs nothing.
func TestDisputeReResolvesBothTracks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		yes := state{resolution: arena.Yes, cash: 11_000 * arena.Dollar, realized: 1000 * arena.Dollar, trades: 2, aliceBrier: 4_000_000, outcome: 1}
		if got := f.state(t, db); got != yes {
			t.Fatalf("fixture %+v, want %+v", got, yes)
		}
		srv := llmtest.New(t)
		var applied []*arena.OracleResolution
		svc := service(db, panel(t, srv, arena.OracleNo), &applied)
		d, _, err := svc.Dispute(ctx, f.market, "ann", "the source misread its own rules")
		if err != nil || d.Resolution != arena.Yes || d.Admin != "ann" {
			t.Fatalf("dispute %+v %v", d, err)
		}
		if got := f.state(t, db); got != yes {
			t.Fatalf("the dispute alone changed %+v", got)
		}
		if n, err := svc.RunPending(ctx); err != nil || n != 1 || len(applied) != 1 || len(applied[0].Rescored) != 1 {
			t.Fatalf("serve job on the disputed market: %d %v, applied %+v", n, err, applied)
		}
		no := state{resolution: arena.No, cash: 9000 * arena.Dollar, realized: -1000 * arena.Dollar, trades: 3, aliceBrier: 64_000_000, outcome: 0, resolutions: 1}
		if got := f.state(t, db); got != no {
			t.Fatalf("after the panel's NO: %+v, want %+v", got, no)
		}
		rr, _, err := svc.Decide(ctx, arena.OracleDecisionInput{MarketID: f.market, Decision: arena.OracleYes, Arbiter: "bob", Reason: "the panel was wrong", ReResolve: true, Revises: 1})
		if err != nil || rr.Seq != 2 || len(applied) != 2 {
			t.Fatalf("re-resolution: %+v %v", rr, err)
		}
		yes.trades, yes.resolutions = 4, 2
		if got := f.state(t, db); got != yes {
			t.Fatalf("after the re-resolution to YES: %+v, want %+v", got, yes)
		}
		same, changed, err := svc.Decide(ctx, arena.OracleDecisionInput{MarketID: f.market, Decision: arena.OracleYes, Arbiter: "carol", Reason: "confirming", ReResolve: true})
		if err != nil || changed || same.ID != rr.ID || len(applied) != 2 {
			t.Fatalf("same decision: %+v %v, %d applied", same, err, len(applied))
		}
		if got := f.state(t, db); got != yes {
			t.Fatalf("after the same decision: %+v", got)
		}
		if _, _, err := svc.Dispute(ctx, f.market, "ann", "again"); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Fatalf("dispute of an oracle resolution: %v", err)
		}
	})
}

// crashEnv carries the crash test's database and market to its child.
const crashEnv = "ARENA_TEST_RERESOLVE_CRASH"

// A process killed (SIGKILL) in the middle of a re-resolution, after the
// forecast track re-scored and the trading track re-settled but before
// the commit, leaves nothing behind: no resolution, scores, payout or
// trade of it. Run again, the re-resolution applies exactly once.
func TestReResolutionCrash(t *testing.T) {
	if v := os.Getenv(crashEnv); v != "" {
		crashChild(t, v)
		return
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			url := storetest.URL(t, engine)
			db, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			f := newFixture(t, db)
			if _, _, err := (&oracle.Service{Store: db, Logger: quiet}).Dispute(context.Background(), f.market, "ann", "wrong"); err != nil {
				t.Fatal(err)
			}
			before := f.state(t, db)
			cmd := exec.Command(os.Args[0], "-test.run=^TestReResolutionCrash$")
			cmd.Env = append(os.Environ(), crashEnv+"="+strconv.FormatInt(f.market, 10)+" "+url)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed: %v\n%s", err, out)
			}
			if got := f.state(t, db); got != before {
				t.Fatalf("the killed re-resolution left %+v, had %+v", got, before)
			}
			var applied []*arena.OracleResolution
			svc := service(db, nil, &applied)
			if _, _, err := svc.Decide(context.Background(), arena.OracleDecisionInput{MarketID: f.market, Decision: arena.OracleNo, Arbiter: "bob", Reason: "rules"}); err != nil {
				t.Fatal(err)
			}
			want := state{resolution: arena.No, cash: 9000 * arena.Dollar, realized: -1000 * arena.Dollar, trades: 3, aliceBrier: 64_000_000, outcome: 0, resolutions: 1}
			if got := f.state(t, db); got != want {
				t.Fatalf("re-run: %+v, want %+v", got, want)
			}
		})
	}
}

// crashChild decides the fixture's dispute NO and kills itself once both
// tracks have written their corrections, before the commit.
func crashChild(t *testing.T, v string) {
	id, url, _ := strings.Cut(v, " ")
	market, _ := strconv.ParseInt(id, 10, 64)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	kill := func(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
		if len(c.Resolution.Rescored) != 1 {
			t.Fatalf("forecast hook did not re-score: %+v", c.Resolution)
		}
		if err := trading.Resettle(ctx, tx, c); err != nil {
			t.Fatal(err)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	svc := &oracle.Service{Store: db, Logger: quiet, Tracks: []arena.ResolutionHook{rounds.Rescore, kill}}
	_, _, err = svc.Decide(context.Background(), arena.OracleDecisionInput{MarketID: market, Decision: arena.OracleNo, Arbiter: "bob", Reason: "rules"})
	t.Fatalf("survived the kill: %v", err)
}
