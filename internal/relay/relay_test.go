package relay_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain"
	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/chain/chaintest"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// The relayer on go-ethereum's simulated chain and a real store; the
// forecast service's clock follows the chain's block time.

var quiet = slog.New(slog.DiscardHandler)

type env struct {
	t      testing.TB
	sim    *simulated.Backend
	client simulated.Client
	key    *ecdsa.PrivateKey
	addrs  chain.Addresses
	db     *store.DB
	svc    *rounds.Service
	log    *tlog.Log
	now    time.Time // the service's and relayer's clock: the chain head's time
	deploy uint64    // the relayer account's transactions before relaying
}

func newEnv(t testing.TB, db *store.DB) *env {
	t.Helper()
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	sim := simulated.NewBackend(types.GenesisAlloc{from: {Balance: new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)}},
		simulated.WithBlockGasLimit(60_000_000))
	t.Cleanup(func() { sim.Close() })
	e := &env{t: t, sim: sim, client: sim.Client(), key: key, db: db}
	opts, err := bind.NewKeyedTransactorWithChainID(key, big.NewInt(1337))
	if err != nil {
		t.Fatal(err)
	}
	if e.addrs, err = chain.Deploy(opts, e.client, from, common.Address{}, func(*types.Transaction) error { sim.Commit(); return nil }); err != nil {
		t.Fatal(err)
	}
	e.deploy = 3
	e.syncClock()
	e.log = &tlog.Log{Store: db, Key: ed25519.NewKeyFromSeed(crypto.Keccak256([]byte("relay test log"))), Now: e.clock, Logger: quiet}
	e.svc = &rounds.Service{Store: db, Now: e.clock, Logger: quiet, Grace: time.Hour,
		Domain: forecast.Domain{ChainID: 1337, Contract: e.addrs.PredictionArena}}
	return e
}

func (e *env) clock() time.Time { return e.now }

// syncClock sets the service's clock to the chain head's time.
func (e *env) syncClock() {
	h, err := e.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.now = time.Unix(int64(h.Time), 0).UTC()
}

// advance mines what is pending, then moves chain and service time on by d.
func (e *env) advance(d time.Duration) {
	e.sim.Commit()
	if err := chaintest.AdjustTime(e.sim, d); err != nil {
		e.t.Fatal(err)
	}
	e.syncClock()
}

// relayer is a fresh relayer on the shared store: every pass a test makes
// with a new one is a restart.
func (e *env) relayer(c relay.Client) *relay.Relayer {
	if c == nil {
		c = e.client
	}
	r := &relay.Relayer{Store: e.db, Client: c, Key: e.key, Arena: e.addrs.PredictionArena, ReportOutcomes: true, Now: e.clock, Logger: quiet}
	if err := r.Init(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// passes runs n passes, each by a new relayer, mining after each.
func (e *env) passes(n int, c relay.Client) {
	e.t.Helper()
	for range n {
		if err := e.relayer(c).Pass(context.Background()); err != nil {
			e.t.Fatal(err)
		}
		e.sim.Commit()
		e.syncClock()
	}
}

func agentKey(name string) *forecast.Key {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("relay test"), []byte(name)))
	if err != nil {
		panic(err)
	}
	return forecast.NewKey(k)
}

func (e *env) commit(r *arena.Round, k *forecast.Key, preds []uint16) common.Hash {
	e.t.Helper()
	ctx := context.Background()
	salt := crypto.Keccak256Hash([]byte("salt"), k.Address().Bytes(), fmt.Append(nil, r.ID))
	n, err := e.db.Nonce(ctx, k.Address().Hex())
	if err != nil {
		e.t.Fatal(err)
	}
	c := forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, salt), Agent: k.Address(),
		Nonce: n, Deadline: uint64(e.now.Add(time.Hour).Unix())}
	sig, err := k.SignCommit(e.svc.Domain, c)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.Commit(ctx, r.ID, forecast.CommitRequest{Agent: c.Agent.Hex(), CommitHash: c.CommitHash.Hex(), Nonce: n,
		Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}); err != nil {
		e.t.Fatal(err)
	}
	return salt
}

func (e *env) reveal(r *arena.Round, k *forecast.Key, preds []uint16, salt common.Hash) {
	e.t.Helper()
	ctx := context.Background()
	n, err := e.db.Nonce(ctx, k.Address().Hex())
	if err != nil {
		e.t.Fatal(err)
	}
	m := forecast.Reveal{RoundID: r.ID, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: n, Deadline: uint64(e.now.Add(time.Hour).Unix())}
	sig, err := k.SignReveal(e.svc.Domain, m)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.Reveal(ctx, r.ID, forecast.RevealRequest{Agent: m.Agent.Hex(), Predictions: preds, Salt: salt.Hex(), Nonce: n,
		Deadline: m.Deadline, Signature: forecast.EncodeSignature(sig)}); err != nil {
		e.t.Fatal(err)
	}
}

// newRound saves n markets and creates a round on them: commits for an
// hour, reveals in the following hour.
func (e *env) newRound(prefix string, n int) (*arena.Round, []*arena.Market) {
	e.t.Helper()
	ctx := context.Background()
	now := e.now
	var ms []*arena.Market
	for i := range n {
		ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprintf("%s%d", prefix, i), Kind: arena.KindMarket, Question: "Q",
			Category: "c", EventID: fmt.Sprintf("%s-ev%d", prefix, i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
			Volume: 100_000, Liquidity: 5000, CloseTime: now.Add(5 * 24 * time.Hour), Status: arena.StatusOpen,
			Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5}})
	}
	if _, err := e.db.SaveMarkets(ctx, ms); err != nil {
		e.t.Fatal(err)
	}
	ids := make([]int64, n)
	for i, m := range ms {
		ids[i] = m.ID
	}
	r, err := e.svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids,
		CommitDeadline: now.Add(time.Hour), RevealStart: now.Add(time.Hour + time.Minute), RevealDeadline: now.Add(2 * time.Hour)})
	if err != nil {
		e.t.Fatal(err)
	}
	return r, ms
}

// scenario plays one round: three agents commit (bob never reveals),
// benchmarks are captured (none for the last market), markets resolve YES,
// NO and void, the round is triggered. relayPasses is called wherever the
// relayer should catch up.
func (e *env) scenario(relayPasses func()) (*arena.Round, []*forecast.Key) {
	ctx := context.Background()
	r, ms := e.newRound("m", 4)
	alice, bob, carol := agentKey("alice"), agentKey("bob"), agentKey("carol")
	preds := map[*forecast.Key][]uint16{alice: {8000, 3000, 5000, 1}, bob: {1, 2, 3, 4}, carol: {6500, 6500, 10000, 0}}
	salts := map[*forecast.Key]common.Hash{}
	for _, k := range []*forecast.Key{alice, bob, carol} {
		salts[k] = e.commit(r, k, preds[k])
	}
	relayPasses()
	for i, p := range []float64{0.6, 0.25, 0.5} {
		ms[i].History = []arena.PricePoint{{Time: r.CommitDeadline, Price: p, Source: arena.PriceCLOBMid, Outcome: arena.Yes}}
		if _, err := e.db.SaveMarkets(ctx, []*arena.Market{ms[i]}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.advance(r.CommitDeadline.Add(forecast.BenchmarkTolerance + time.Second).Sub(e.now))
	if n, err := e.svc.CaptureBenchmarks(ctx); err != nil || n != 1 {
		e.t.Fatalf("capture benchmarks: %d, %v", n, err)
	}
	relayPasses()
	if now := e.now; now.Before(r.RevealStart) {
		e.advance(r.RevealStart.Sub(now))
	}
	for _, k := range []*forecast.Key{alice, carol} {
		e.reveal(r, k, preds[k], salts[k])
	}
	relayPasses()
	for i, res := range []string{arena.Yes, arena.No, arena.Void, arena.Yes} {
		if _, err := e.db.ResolveMarket(ctx, ms[i].ID, res, e.now); err != nil {
			e.t.Fatal(err)
		}
	}
	e.advance(r.RevealDeadline.Add(time.Second).Sub(e.now))
	if n, err := e.svc.TriggerDue(ctx); err != nil || n != 1 {
		e.t.Fatalf("trigger: %d, %v", n, err)
	}
	relayPasses()
	return r, []*forecast.Key{alice, bob, carol}
}

// checkMirrored: every item confirmed once, the relayer sent exactly one
// transaction per recorded item, and the on-chain state equals the
// database's: commits, reveals, outcomes, scores in bps².
func (e *env) checkMirrored(r *arena.Round, agents []*forecast.Key) {
	e.t.Helper()
	ctx := context.Background()
	items, err := e.db.ChainTxs(ctx, r.ID, "")
	if err != nil {
		e.t.Fatal(err)
	}
	kinds := map[string]int{}
	sent := 0
	for _, it := range items {
		kinds[it.Kind]++
		if it.Status != arena.ChainTxConfirmed {
			e.t.Errorf("item %s/%s: %s (%s)", it.Kind, it.Item, it.Status, it.Error)
		}
		if it.TxHash != "" {
			sent++
		}
	}
	want := map[string]int{"round": 1, "commit": 3, "benchmarks": 1, "reveal": 2, "payout": 4, "trigger": 1, "score": 1, "done": 1}
	for k, n := range want {
		if kinds[k] != n {
			e.t.Errorf("%d %s items, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	nonce, err := e.client.NonceAt(ctx, crypto.PubkeyToAddress(e.key.PublicKey), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if got := nonce - e.deploy; got != uint64(sent) {
		e.t.Errorf("the relayer sent %d transactions for %d recorded items: duplicates or lost records", got, sent)
	}
	pa, err := bindings.NewPredictionArena(e.addrs.PredictionArena, e.client)
	if err != nil {
		e.t.Fatal(err)
	}
	opts := &bind.CallOpts{Context: ctx}
	id := new(big.Int).SetUint64(r.ID)
	it, err := pa.FilterCommitted(&bind.FilterOpts{Context: ctx}, []*big.Int{id}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	events := 0
	for it.Next() {
		events++
	}
	if events != 3 {
		e.t.Errorf("%d Committed events on chain, want 3", events)
	}
	subs, err := e.db.Submissions(ctx, r.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range subs {
		on, err := pa.SubmissionOf(opts, id, common.HexToAddress(s.Agent))
		if err != nil {
			e.t.Fatal(err)
		}
		if !on.Committed || common.Hash(on.CommitHash).Hex() != s.CommitHash || on.Revealed != s.Revealed() || fmt.Sprint(on.Predictions) != fmt.Sprint(s.Predictions) && s.Revealed() {
			e.t.Errorf("%s: on chain %+v, in the database %+v", s.Agent, on, s)
		}
	}
	scores, err := e.db.RoundScores(ctx, r.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	checked := 0
	for _, sc := range scores {
		if !common.IsHexAddress(sc.Agent) {
			continue // the baselines are not on chain
		}
		on, err := pa.ScoreOf(opts, id, common.HexToAddress(sc.Agent))
		if err != nil {
			e.t.Fatal(err)
		}
		if !on.Scored || on.BrierBps2 != sc.BrierBps2 || sc.AlphaBps2 == nil || on.AlphaBps2 != *sc.AlphaBps2 || on.Forfeit != sc.Forfeit {
			e.t.Errorf("%s: on chain %+v, in the database brier %d alpha %v forfeit %v", sc.Agent, on, sc.BrierBps2, sc.AlphaBps2, sc.Forfeit)
		}
		checked++
	}
	if checked != len(agents) {
		e.t.Errorf("compared %d agents' scores, want %d", checked, len(agents))
	}
	res, err := pa.ResultOf(opts, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if fmt.Sprint(res.Outcomes) != "[1 0 -1 1]" {
		e.t.Errorf("on-chain outcomes %v, want [1 0 -1 1]", res.Outcomes)
	}
}

// A round mirrored end to end, every pass by a new relayer (a restart
// before each pass): nothing is sent twice, nothing is missing, and the
// on-chain scores equal the database's.
func TestMirrorRoundAcrossRestarts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r, agents := e.scenario(func() { e.passes(4, nil) })
		e.passes(4, nil)
		e.checkMirrored(r, agents)
		open, err := db.ChainRoundsOpen(context.Background())
		if err != nil || len(open) != 0 {
			t.Fatalf("rounds still being mirrored: %v %v", open, err)
		}
	})
}

// dropClient loses the first transactions sent to it (the node drops them,
// or the relayer dies between recording and broadcasting): they never
// reach the pool.
type dropClient struct {
	simulated.Client
	mu   sync.Mutex
	pass int // sends let through before dropping
	drop int
}

func (d *dropClient) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pass > 0 {
		d.pass--
		return d.Client.SendTransaction(ctx, tx)
	}
	if d.drop > 0 {
		d.drop--
		return nil
	}
	return d.Client.SendTransaction(ctx, tx)
}

// Transactions that never reached the chain are broadcast again, as
// recorded, by a later pass (of a restarted relayer): the item lands once.
func TestDroppedTransactionsRebroadcast(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	drops := &dropClient{Client: e.client}
	r, agents := e.scenario(func() {
		drops.drop = 2 // the next two sends are lost
		e.passes(5, drops)
	})
	e.passes(4, nil)
	e.checkMirrored(r, agents)
	items, err := db.ChainTxs(context.Background(), r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	rebroadcast := 0
	for _, it := range items {
		if it.Attempts > 1 {
			rebroadcast++
		}
	}
	if rebroadcast == 0 {
		t.Fatal("no item needed a second broadcast: the drops were not exercised")
	}
}

// A mined commit reorged out of the chain is broadcast again and lands in
// the new chain.
func TestReorgedTransactionResubmitted(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	r, _ := e.newRound("g", 2)
	k := agentKey("dave")
	e.commit(r, k, []uint16{100, 200})
	e.passes(1, nil) // round created and mined
	before, err := e.client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.passes(1, nil) // the commit is sent and mined
	items, err := db.ChainTxs(ctx, r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var commitTx string
	for _, it := range items {
		if it.Kind == relay.KindCommit {
			commitTx = it.TxHash
		}
	}
	if commitTx == "" {
		t.Fatalf("commit not sent: %+v", items)
	}
	if _, err := e.client.TransactionReceipt(ctx, common.HexToHash(commitTx)); err != nil {
		t.Fatalf("commit not mined: %v", err)
	}
	// Reorg: the chain continues from the block before the commit's,
	// with empty blocks, longer than the old branch.
	if err := e.sim.Fork(before.Hash()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.sim.Rollback() // the fork's pool holds no stray transactions
		e.sim.Commit()
	}
	if _, err := e.client.TransactionReceipt(ctx, common.HexToHash(commitTx)); err == nil {
		t.Fatal("the commit's receipt survived the reorg; the test reorged nothing")
	}
	e.passes(3, nil)
	pa, err := bindings.NewPredictionArena(e.addrs.PredictionArena, e.client)
	if err != nil {
		t.Fatal(err)
	}
	on, err := pa.SubmissionOf(&bind.CallOpts{Context: ctx}, new(big.Int).SetUint64(r.ID), k.Address())
	if err != nil || !on.Committed {
		t.Fatalf("the commit is not on the new chain: %+v %v", on, err)
	}
	items, _ = db.ChainTxs(ctx, r.ID, "")
	for _, it := range items {
		if it.Kind == relay.KindCommit && (it.Status != arena.ChainTxConfirmed || it.TxHash != commitTx || it.Attempts < 2) {
			t.Fatalf("commit item after the reorg: %+v, want confirmed with the same transaction broadcast again", it)
		}
	}
}

// The chain check passes on a mirrored round and names every item an
// operator changed in the database afterwards.
func TestVerifyAgainstChain(t *testing.T) {
	ctx := context.Background()
	db, raw := fileDB(t)
	e := newEnv(t, db)
	r, agents := e.scenario(func() { e.passes(4, nil) })
	e.passes(4, nil)
	rep, err := relay.Verify(ctx, db, e.client, e.addrs.PredictionArena, relay.VerifyOptions{Relayed: db})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mismatches) != 0 || rep.Rounds != 1 || rep.Markets != 4 || rep.Benchmarks != 4 || rep.Commits != 3 || rep.Reveals != 2 || rep.Outcomes != 1 || rep.Scores != 3 {
		t.Fatalf("untouched: %+v", rep)
	}
	alice, carol := agents[0].Address().Hex(), agents[2].Address().Hex()
	for _, q := range []string{
		`UPDATE round_scores SET brier_bps2 = brier_bps2 + 1 WHERE agent = '` + alice + `'`,
		`UPDATE submissions SET predictions = '[6500,6500,9999,0]' WHERE agent = '` + carol + `'`,
		`UPDATE round_markets SET benchmark_bps = benchmark_bps + 1 WHERE idx = 1`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = relay.Verify(ctx, db, e.client, e.addrs.PredictionArena, relay.VerifyOptions{Rounds: []uint64{r.ID}, Relayed: db})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Mismatches, "\n")
	for _, want := range []string{"score of " + alice, "reveal of " + carol, "market 1: benchmark"} {
		if !strings.Contains(all, want) {
			t.Errorf("mismatches do not name %q:\n%s", want, all)
		}
	}
	if len(rep.Mismatches) != 3 {
		t.Errorf("%d mismatches, want 3:\n%s", len(rep.Mismatches), all)
	}
}

// At most MaxInFlight transactions are unmined at a time: the commits of a
// crowded round go out over several passes, each once earlier ones are
// mined, and all of them land.
func TestInFlightBound(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	r, _ := e.newRound("f", 2)
	const agents = relay.DefaultMaxInFlight + 5
	for i := range agents {
		e.commit(r, agentKey(fmt.Sprint("crowd ", i)), []uint16{100, 200})
	}
	e.passes(1, nil) // the round
	commits := func() int {
		items, err := db.ChainTxs(ctx, r.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, it := range items {
			if it.Kind == relay.KindCommit {
				n++
			}
		}
		return n
	}
	// A pass without mining: the bound holds however often it runs.
	for range 2 {
		if err := e.relayer(nil).Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := commits(); n != relay.DefaultMaxInFlight {
		t.Fatalf("%d commits sent before any was mined, want %d", n, relay.DefaultMaxInFlight)
	}
	e.passes(2, nil)
	if n := commits(); n != agents {
		t.Fatalf("%d commits sent after mining, want %d", n, agents)
	}
	pa, err := bindings.NewPredictionArena(e.addrs.PredictionArena, e.client)
	if err != nil {
		t.Fatal(err)
	}
	n, err := pa.ParticipantCount(&bind.CallOpts{Context: ctx}, new(big.Int).SetUint64(r.ID))
	if err != nil || n.Int64() != agents {
		t.Fatalf("%v commits on chain, want %d (%v)", n, agents, err)
	}
}
