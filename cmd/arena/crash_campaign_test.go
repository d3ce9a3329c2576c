package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/participant"
)

// TestCrashCampaign is the crash campaign: a real `arena serve` over the
// simulated world, reference participants committing and revealing with
// real signatures, and trading runs (`arena cohort run` and `cohort
// settle`, themselves killed at random), while serve is killed with
// SIGKILL ARENA_CRASH_KILLS times at seeded random moments and restarted.
// Then, from the database: every acknowledged commit and reveal is stored
// exactly once, as acknowledged; every agent's nonce counts exactly its
// stored submissions; no decision or trade is duplicated; every ledger
// reconciles to the micro-dollar from its trades; every job period ran at
// most once and no round-creation period made two rounds. On PostgreSQL two
// replicas serve and one of them is the one killed.
//
// ARENA_CRASH_SEED fixes the seed (it is logged either way).
func TestCrashCampaign(t *testing.T) {
	kills, _ := strconv.Atoi(os.Getenv("ARENA_CRASH_KILLS"))
	if kills <= 0 {
		t.Skip("set ARENA_CRASH_KILLS=N to run the crash campaign")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ARENA_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ARENA_CRASH_SEED: %v", err)
		}
	}
	// Every agent here shares one loopback address: the per-address limit
	// would throttle them as one client. The per-agent limit stays on.
	t.Setenv("ARENA_RATE_IP_PER_MIN", "0")
	t.Logf("crash campaign: %d kills per engine, seed %d (ARENA_CRASH_SEED=%d reproduces the schedule)", kills, seed, seed)
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			replicas := 1
			if engine == "postgres" {
				replicas = 2
			}
			runCampaign(t, storetest.URL(t, engine), kills, replicas, seed)
		})
	}
}

// ackLog records the commits and reveals the server acknowledged (2xx), as
// the clients sent them: it sits at the network edge of every agent.
type ackLog struct {
	mu      sync.Mutex
	commits map[subKey]string   // commit hash
	reveals map[subKey][]uint16 // predictions
	next    http.RoundTripper
}

type subKey struct {
	round uint64
	agent string
}

var submitPath = regexp.MustCompile(`/api/v1/rounds/(\d+)/(commits|reveals)$`)

func (l *ackLog) RoundTrip(req *http.Request) (*http.Response, error) {
	m := submitPath.FindStringSubmatch(req.URL.Path)
	if req.Method != http.MethodPost || m == nil {
		return l.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := l.next.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	round, _ := strconv.ParseUint(m[1], 10, 64)
	var sent struct {
		Agent       string   `json:"agent"`
		CommitHash  string   `json:"commit_hash"`
		Predictions []uint16 `json:"predictions"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		return nil, fmt.Errorf("ack log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := subKey{round, sent.Agent}
	if m[2] == "commits" {
		l.commits[k] = sent.CommitHash
	} else {
		l.reveals[k] = sent.Predictions
	}
	return resp, nil
}

// lastSunday is the latest Sunday 00:00 UTC at or before t.
func lastSunday(t time.Time) time.Time {
	d := t.UTC().Truncate(24 * time.Hour)
	return d.AddDate(0, 0, -int(d.Weekday()))
}

func runCampaign(t *testing.T, dbURL string, kills, replicas int, seed uint64) {
	began := time.Now()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 1))
	// The simulated world starts on the Sunday a week before the last one,
	// so two trading weeks lie in its past and its markets are open now.
	week0 := lastSunday(time.Now()).AddDate(0, 0, -7)
	simArgs := []string{"--sim-seed", "7", "--sim-start", week0.Format(time.RFC3339), "--db", dbURL}
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--seed", "7", "--start", week0.Format(time.RFC3339), "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	const token = "crash-campaign-token-0123456789abc"
	serveArgs := []string{"serve", "--addr", "127.0.0.1:0", "--no-sync", "--db", dbURL, "--admin-token", token,
		"--log-key", filepath.Join(dir, "log.key"), "--round-every", "2s", "--commit-in", "2s", "--reveal-delay", "1s",
		"--reveal-window", "2s", "--grace", "1s", "--round-k", "3", "--round-retry-every", "200ms"}
	procs := make([]*serveProc, replicas)
	bases := make([]string, replicas)
	for i := range procs {
		procs[i] = startServeArgs(t, serveArgs...)
		bases[i] = "http://" + procs[i].addr
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	acks := &ackLog{commits: map[subKey]string{}, reveals: map[subKey][]uint16{}, next: http.DefaultTransport}
	const nAgents = 8
	var agents sync.WaitGroup
	for i := range nAgents {
		k := fcKey(fmt.Sprintf("crash campaign %d", i))
		strat, err := participant.NewStrategy("random", k.Address())
		if err != nil {
			t.Fatal(err)
		}
		agents.Add(1)
		go func() {
			defer agents.Done()
			// An agent keeps one server; on PostgreSQL, half of them use
			// the killed replica, which comes back on the same address.
			c := &participant.Client{Server: bases[i%replicas], HTTP: &http.Client{Transport: acks, Timeout: 5 * time.Second}, Key: k,
				StateDir: filepath.Join(dir, fmt.Sprintf("agent-%d", i)), Strategy: strat, SigTTL: time.Hour,
				Logger: slog.New(slog.DiscardHandler)}
			for ctx.Err() == nil {
				c.RunOnce(ctx) // a down server is retried on the next pass
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}

	// Trading runs alongside: each week's run and a settlement, each
	// killed at a random moment half of the time, then run again until it
	// reports nothing left to do.
	var tradingKills atomic.Int32
	tradingDone := make(chan error, 1)
	trng := rand.New(rand.NewPCG(seed, 2))
	go func() {
		tradingDone <- func() error {
			child := func(args []string, until *regexp.Regexp) error {
				for try := 0; try < 30; try++ {
					cmd := exec.Command(os.Args[0], args...)
					cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					if err := cmd.Start(); err != nil {
						return err
					}
					kill := trng.IntN(2) == 0
					var timer *time.Timer
					if kill {
						timer = time.AfterFunc(time.Duration(trng.IntN(400))*time.Millisecond, func() { cmd.Process.Kill() })
					}
					err := cmd.Wait()
					if timer != nil {
						timer.Stop()
					}
					if err != nil && strings.Contains(err.Error(), "killed") {
						tradingKills.Add(1)
						continue
					}
					if until.MatchString(out.String()) {
						return nil
					}
					time.Sleep(100 * time.Millisecond) // retryable: run again
				}
				return fmt.Errorf("%v never reported %q", args, until.String())
			}
			// Done: every decision is finished, or the rest are claimed by a
			// killed run (a later run takes them over once stale).
			decided := regexp.MustCompile(`nothing to decide|done 0, skipped \d+, retryable 0`)
			for w := range 2 {
				at := week0.AddDate(0, 0, 7*w).Add(5 * time.Minute).Format(time.RFC3339)
				if err := child(append([]string{"cohort", "run", "--now", at}, simArgs...), decided); err != nil {
					return err
				}
			}
			return child([]string{"cohort", "settle", "--db", dbURL}, regexp.MustCompile(`^0 markets settled`))
		}()
	}()

	var restarts []time.Duration
	for k := range kills {
		time.Sleep(time.Duration(50+rng.IntN(1000)) * time.Millisecond)
		p := procs[0]
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("kill %d: serve exit %v\n%s", k+1, err, p.logs)
		}
		t0 := time.Now()
		procs[0] = startServeArgs(t, append(serveArgs, "--addr", p.addr)...)
		restarts = append(restarts, time.Since(t0))
	}
	if err := <-tradingDone; err != nil {
		t.Fatal(err)
	}
	// Let the last rounds reach their reveals, then stop everything cleanly.
	time.Sleep(5 * time.Second)
	stop()
	agents.Wait()
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("serve did not stop cleanly: %v\n%s", err, p.logs)
		}
	}

	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw := rawDB(t, dbURL)
	f := checkCampaign(t, db, raw, acks)
	sort.Slice(restarts, func(i, j int) bool { return restarts[i] < restarts[j] })
	t.Logf("%d kills of serve survived (%d replica(s); restart to serving p50 %s, max %s) and %d trading-run kills; "+
		"%d acknowledged commits and %d acknowledged reveals checked against %d stored submissions in %d rounds (%d agents' nonces); "+
		"%d decisions and %d trades, no duplicate; %d ledgers reconciled to the micro-dollar; %d job periods, none run twice; in %s",
		kills, replicas, restarts[len(restarts)/2].Round(time.Millisecond), restarts[len(restarts)-1].Round(time.Millisecond),
		tradingKills.Load(), f.commits, f.reveals, f.stored, f.rounds, f.agents, f.decisions, f.trades, f.ledgers, f.jobPeriods,
		time.Since(began).Round(time.Second))
}

// rawDB opens the database behind the store, for checks that must not
// trust the store's own reads (duplicate rows).
func rawDB(t *testing.T, dbURL string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", dbURL
	if p, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		driver, dsn = "sqlite", "file:"+p+"?mode=ro"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// noRows fails the test when query returns any row: each is a duplicate.
func noRows(t *testing.T, raw *sql.DB, what, query string) {
	t.Helper()
	rows, err := raw.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		rows.Scan(p...)
		t.Errorf("%s: duplicate %v", what, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

type campaignFigures struct {
	commits, reveals, stored, rounds, agents, decisions, trades, ledgers, jobPeriods int
}

func checkCampaign(t *testing.T, db *store.DB, raw *sql.DB, acks *ackLog) campaignFigures {
	t.Helper()
	ctx := context.Background()
	var f campaignFigures

	// Forecast track: acknowledged submissions, stored once, as sent.
	noRows(t, raw, "submissions", `SELECT round_id, agent FROM submissions GROUP BY round_id, agent HAVING COUNT(*) > 1`)
	all, err := db.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[subKey]*arena.Submission{}
	perAgent := map[string]uint64{}
	for _, r := range all {
		subs, err := db.Submissions(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			k := subKey{r.ID, s.Agent}
			if stored[k] != nil {
				t.Errorf("round %d agent %s: stored twice", r.ID, s.Agent)
			}
			stored[k] = s
			perAgent[s.Agent]++
			if s.RevealedAt.IsZero() != (s.Predictions == nil) {
				t.Errorf("round %d agent %s: half-written reveal %+v", r.ID, s.Agent, s)
			}
			if !s.RevealedAt.IsZero() {
				perAgent[s.Agent]++
			}
		}
	}
	f.rounds, f.stored = len(all), len(stored)
	acks.mu.Lock()
	defer acks.mu.Unlock()
	for k, hash := range acks.commits {
		s := stored[k]
		if s == nil || !strings.EqualFold(s.CommitHash, hash) {
			t.Errorf("acknowledged commit lost: round %d agent %s hash %s, stored %+v", k.round, k.agent, hash, s)
		}
	}
	for k, preds := range acks.reveals {
		s := stored[k]
		if s == nil || !slices.Equal(s.Predictions, preds) {
			t.Errorf("acknowledged reveal lost: round %d agent %s %v, stored %+v", k.round, k.agent, preds, s)
		}
	}
	f.commits, f.reveals = len(acks.commits), len(acks.reveals)
	if f.commits == 0 || f.reveals == 0 {
		t.Errorf("the campaign acknowledged %d commits and %d reveals: it tested nothing", f.commits, f.reveals)
	}
	// Each accepted commit and reveal uses one nonce: a submission applied
	// twice, or lost after its nonce was spent, shows here.
	for agent, n := range perAgent {
		got, err := db.Nonce(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("agent %s: nonce %d, but %d stored commits and reveals", agent, got, n)
		}
	}
	f.agents = len(perAgent)

	// Trading track: one decision per agent and week, trades only from
	// finished decisions, each trade once, ledgers that add up.
	noRows(t, raw, "decisions", `SELECT cohort_id, agent_id, week FROM decisions GROUP BY cohort_id, agent_id, week HAVING COUNT(*) > 1`)
	noRows(t, raw, "trades of unfinished decisions", `SELECT t.id, d.status FROM trades t JOIN decisions d ON d.id = t.decision_id WHERE d.status <> 'done'`)
	noRows(t, raw, "settlement trades", `SELECT position_id, kind FROM trades WHERE kind IN ('SETTLE', 'CANCEL') GROUP BY position_id, kind HAVING COUNT(*) > 1`)
	noRows(t, raw, "bets", `SELECT decision_id, market_id, side FROM trades WHERE kind = 'BET' GROUP BY decision_id, market_id, side HAVING COUNT(*) > 1`)
	cohorts, err := db.Cohorts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cohorts {
		ds, err := db.Decisions(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.decisions += len(ds)
		ports, err := db.Portfolios(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			n, err := reconcile(ctx, db, c, p)
			if err != nil {
				t.Errorf("cohort %d %s: %v", c.ID, p.AgentID, err)
			}
			f.trades += n
			f.ledgers++
		}
	}
	if f.decisions == 0 || f.trades == 0 {
		t.Errorf("%d decisions and %d trades: the trading runs did nothing", f.decisions, f.trades)
	}

	// Jobs: each (job, period) claimed once; round creation made at most
	// one round per claimed period.
	noRows(t, raw, "job runs", `SELECT job, period FROM job_runs GROUP BY job, period HAVING COUNT(*) > 1`)
	if err := raw.QueryRow(`SELECT COUNT(*) FROM job_runs`).Scan(&f.jobPeriods); err != nil {
		t.Fatal(err)
	}
	creates, err := db.JobRuns(ctx, rounds.JobCreateRound)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) > len(creates) {
		t.Errorf("%d rounds from %d round-creation periods: a period made two rounds", len(all), len(creates))
	}
	return f
}

// reconcile recomputes a portfolio from its trade log and compares it with
// the stored books, to the micro-dollar: cash, realized P/L, and every
// position's shares and cost basis; then the ledger identity cash + open
// cost basis = initial cash + realized.
func reconcile(ctx context.Context, db *store.DB, c *arena.Cohort, p *arena.Portfolio) (int, error) {
	trades, err := db.Trades(ctx, p.ID)
	if err != nil {
		return 0, err
	}
	positions, err := db.PositionsOf(ctx, p.ID)
	if err != nil {
		return 0, err
	}
	cash, realized := c.InitialCash, arena.Micros(0)
	basis := map[int64]arena.Micros{}
	shares := map[int64]arena.Shares{}
	ids := map[int64]bool{}
	for _, tr := range trades {
		if ids[tr.ID] {
			return 0, fmt.Errorf("trade %d listed twice", tr.ID)
		}
		ids[tr.ID] = true
		if tr.Kind == arena.TradeBet {
			if tr.CashBefore != cash {
				return 0, fmt.Errorf("bet %d: cash before %s, but the log says %s", tr.ID, tr.CashBefore, cash)
			}
			cash -= tr.Amount
			basis[tr.PositionID] += tr.CostBasis
			shares[tr.PositionID] += tr.Shares
			continue
		}
		cash += tr.Amount
		realized += tr.Amount - tr.CostBasis
		basis[tr.PositionID] -= tr.CostBasis
		shares[tr.PositionID] -= tr.Shares
	}
	if cash != p.Cash || realized != p.Realized {
		return 0, fmt.Errorf("stored cash %s realized %s, from %d trades cash %s realized %s", p.Cash, p.Realized, len(trades), cash, realized)
	}
	var open arena.Micros
	for _, pos := range positions {
		b, s := basis[pos.ID], shares[pos.ID]
		if pos.Status != arena.PositionOpen {
			if s != 0 {
				return 0, fmt.Errorf("closed position %d keeps %d micro-shares by its trades", pos.ID, s)
			}
			continue
		}
		if b != pos.CostBasis || s != pos.Shares {
			return 0, fmt.Errorf("position %d: stored %d micro-shares cost %s, from trades %d cost %s", pos.ID, pos.Shares, pos.CostBasis, s, b)
		}
		open += b
	}
	if cash+open != c.InitialCash+realized {
		return 0, fmt.Errorf("cash %s + open cost %s != initial %s + realized %s", cash, open, c.InitialCash, realized)
	}
	return len(trades), nil
}
