package relay_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/params"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// item returns the recorded item, failing when there is none.
// fileDB is a SQLite store in a file, and a second handle on it for a test
// to change rows behind the store's back (as an operator or a restore
// from an older backup would).
func fileDB(t testing.TB) (*store.DB, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arena.db")
	db, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return db, raw
}

func (e *env) item(round uint64, kind, item string) arena.ChainTx {
	e.t.Helper()
	items, err := e.db.ChainTxs(context.Background(), round, "")
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range items {
		if it.Kind == kind && it.Item == item {
			return it
		}
	}
	e.t.Fatalf("no %s item %q in round %d: %+v", kind, item, round, items)
	return arena.ChainTx{}
}

// pass runs one pass of a fresh relayer without mining.
func (e *env) pass(c relay.Client) {
	e.t.Helper()
	if err := e.relayer(c).Pass(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// onChainCommits is the number of commits of round on chain.
func (e *env) onChainCommits(round uint64) int64 {
	e.t.Helper()
	pa, err := bindings.NewPredictionArena(e.addrs.PredictionArena, e.client)
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := pa.ParticipantCount(&bind.CallOpts{}, new(big.Int).SetUint64(round))
	if err != nil {
		e.t.Fatal(err)
	}
	return n.Int64()
}

// sentCount is how many transactions the relayer has sent (its nonce on
// chain, less the deployments).
func (e *env) sentCount() uint64 {
	e.t.Helper()
	n, err := e.client.NonceAt(context.Background(), crypto.PubkeyToAddress(e.key.PublicKey), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return n - e.deploy
}

// stuckCommit mirrors a new round, then one agent's commit, left in the
// pool unmined; it returns the commit's item.
func (e *env) stuckCommit(prefix, agent string) (*arena.Round, *forecast.Key, arena.ChainTx) {
	e.t.Helper()
	r, _ := e.newRound(prefix, 2)
	k := agentKey(agent)
	e.commit(r, k, []uint16{100, 200})
	e.passes(1, nil) // the round
	e.pass(nil)      // the commit, left in the pool
	return r, k, e.item(r.ID, relay.KindCommit, k.Address().Hex())
}

// landed checks that round has commits on chain and the relayer sent txs
// transactions in all.
func (e *env) landed(round uint64, commits int64, txs uint64) {
	e.t.Helper()
	if n, sent := e.onChainCommits(round), e.sentCount(); n != commits || sent != txs {
		e.t.Fatalf("%d commits on chain, %d transactions sent; want %d and %d", n, sent, commits, txs)
	}
}

// spikeClient is the chain after a fee spike: its node suggests a tip
// higher by extra wei per gas.
type spikeClient struct {
	simulated.Client
	extra int64
}

func (s spikeClient) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	tip, err := s.Client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, err
	}
	return tip.Add(tip, big.NewInt(s.extra)), nil
}

// A commit left unmined past BumpAfter at the going rate is left alone
// (a bump would only raise the bill). After a fee spike it is replaced by
// an EIP-1559 transaction with the same nonce and fees at least 10 %
// higher, which the pool (geth's own replacement rule) accepts in place of
// the first; the replacement is mined, the item is confirmed once.
func TestFeeBumpReplacesStuckTransaction(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	r, k, first := e.stuckCommit("b", "frank")
	tx1, _, err := e.client.TransactionByHash(ctx, common.HexToHash(first.TxHash))
	if err != nil {
		t.Fatal(err)
	}
	if tx1.Type() != types.DynamicFeeTxType {
		t.Fatalf("transaction type %d, want EIP-1559 (%d)", tx1.Type(), types.DynamicFeeTxType)
	}
	e.pass(nil) // unmined for less than BumpAfter: left alone
	if it := e.item(r.ID, relay.KindCommit, k.Address().Hex()); it.TxHash != first.TxHash {
		t.Fatalf("replaced before BumpAfter: %s", it.TxHash)
	}
	e.now = e.now.Add(relay.DefaultBumpAfter + time.Second)
	e.pass(nil) // unmined, but paying what the chain asks: left alone
	if it := e.item(r.ID, relay.KindCommit, k.Address().Hex()); it.TxHash != first.TxHash {
		t.Fatalf("replaced while paying the going rate: %s", it.TxHash)
	}
	e.pass(spikeClient{e.client, params.GWei})
	bumped := e.item(r.ID, relay.KindCommit, k.Address().Hex())
	if bumped.TxHash == first.TxHash || len(bumped.Replaced) != 1 || bumped.Replaced[0] != first.RawTx || bumped.TxNonce != first.TxNonce {
		t.Fatalf("after BumpAfter: %+v", bumped)
	}
	tx2, pending, err := e.client.TransactionByHash(ctx, common.HexToHash(bumped.TxHash))
	if err != nil || !pending {
		t.Fatalf("the replacement is not in the pool: %v %v", pending, err)
	}
	t.Logf("tip %s → %s, fee cap %s → %s wei/gas", tx1.GasTipCap(), tx2.GasTipCap(), tx1.GasFeeCap(), tx2.GasFeeCap())
	if _, _, err := e.client.TransactionByHash(ctx, tx1.Hash()); err == nil {
		t.Fatal("the first transaction is still in the pool next to its replacement")
	}
	e.passes(2, nil)
	got := e.item(r.ID, relay.KindCommit, k.Address().Hex())
	if got.Status != arena.ChainTxConfirmed || got.TxHash != bumped.TxHash {
		t.Fatalf("after mining: %+v", got)
	}
	e.landed(r.ID, 1, 2) // the round, the commit
}

// When the transaction a bump replaced is the one mined (the replacement
// never reached the node), its receipt settles the item.
func TestReplacedTransactionMined(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	r, k, first := e.stuckCommit("c", "grace")
	e.now = e.now.Add(relay.DefaultBumpAfter + time.Second)
	e.pass(&dropClient{Client: spikeClient{e.client, params.GWei}, drop: 1}) // a fee spike; the replacement is lost
	if it := e.item(r.ID, relay.KindCommit, k.Address().Hex()); it.TxHash == first.TxHash {
		t.Fatal("not bumped")
	}
	e.sim.Commit() // mines the first transaction
	e.syncClock()
	e.pass(nil)
	got := e.item(r.ID, relay.KindCommit, k.Address().Hex())
	if got.Status != arena.ChainTxConfirmed || got.TxHash != first.TxHash || len(got.Replaced) != 1 {
		t.Fatalf("after the first transaction was mined: %+v", got)
	}
	e.landed(r.ID, 1, 2)
}

// A dropped transaction leaves a gap: the later ones wait behind it in the
// pool and nothing is mined. The next pass resubmits from the chain's
// pending nonce (the recorded transaction at the gap), and all land.
func TestNonceGapRepaired(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	r, _ := e.newRound("d", 2)
	for i := range 3 {
		e.commit(r, agentKey(fmt.Sprint("gap ", i)), []uint16{100, 200})
	}
	e.passes(1, nil)
	from := crypto.PubkeyToAddress(e.key.PublicKey)
	e.pass(&dropClient{Client: e.client, pass: 1, drop: 1}) // the second commit is lost
	e.sim.Commit()
	e.syncClock()
	if n := e.onChainCommits(r.ID); n != 1 {
		t.Fatalf("%d commits mined behind the gap, want 1", n)
	}
	p, err := e.client.PendingNonceAt(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	if p != e.deploy+2 {
		t.Fatalf("pending nonce %d, want %d (the gap)", p, e.deploy+2)
	}
	e.passes(1, nil)
	e.landed(r.ID, 3, 4)
}

// A hole no record covers (the database restored from a backup taken
// before a transaction that the node then dropped) is filled with a
// transfer of nothing to the relayer itself; the item whose record was
// lost is sent again and every commit lands once.
func TestNonceHoleFilled(t *testing.T) {
	db, raw := fileDB(t)
	e := newEnv(t, db)
	r, _ := e.newRound("h", 2)
	keys := []string{"hole 0", "hole 1", "hole 2"}
	for _, k := range keys {
		e.commit(r, agentKey(k), []uint16{100, 200})
	}
	e.passes(1, nil)
	e.pass(&dropClient{Client: e.client, drop: 1}) // the first commit is lost...
	lost := e.item(r.ID, relay.KindCommit, agentKey(keys[0]).Address().Hex())
	// ... and so is its record.
	if _, err := raw.Exec(`DELETE FROM chain_txs WHERE kind = 'commit' AND item = ?`, lost.Item); err != nil {
		t.Fatal(err)
	}
	e.sim.Commit()
	if n := e.onChainCommits(r.ID); n != 0 {
		t.Fatalf("%d commits mined behind the hole, want 0", n)
	}
	e.passes(2, nil)
	filler := e.item(0, relay.KindFiller, fmt.Sprint(lost.TxNonce))
	if filler.Status != arena.ChainTxConfirmed {
		t.Fatalf("filler %+v", filler)
	}
	e.landed(r.ID, 3, 5) // the round, the filler, three commits
}

// A commit accepted after the round was mirrored is mirrored on the next
// pass. One accepted a second before the deadline, when the chain's clock
// passes the deadline before the relayer sends it, is recorded as failed
// with why ("late"), and the chain check names it: the chain never saw it.
func TestLateCommit(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	r, _ := e.newRound("l", 2)
	e.passes(2, nil) // the round is on chain
	early, late := agentKey("early"), agentKey("late")
	e.commit(r, early, []uint16{100, 200})
	e.passes(2, nil)
	if it := e.item(r.ID, relay.KindCommit, early.Address().Hex()); it.Status != arena.ChainTxConfirmed {
		t.Fatalf("commit after the round was mirrored: %+v", it)
	}
	e.advance(r.CommitDeadline.Add(-time.Second).Sub(e.now))
	e.commit(r, late, []uint16{300, 400})
	e.advance(2 * time.Second)
	e.passes(1, nil)
	it := e.item(r.ID, relay.KindCommit, late.Address().Hex())
	if it.Status != arena.ChainTxFailed || !strings.HasPrefix(it.Error, "late: ") || !strings.Contains(it.Error, "before the commit deadline") || it.TxHash != "" {
		t.Fatalf("late commit: %+v", it)
	}
	t.Logf("recorded: %s", it.Error)
	rep, err := relay.Verify(ctx, db, e.client, e.addrs.PredictionArena, relay.VerifyOptions{Relayed: db})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mismatches) != 1 || !strings.Contains(rep.Mismatches[0], "commit of "+late.Address().Hex()+" not on chain (relayer: failed, late: ") {
		t.Fatalf("chain check: %v", rep.Mismatches)
	}
}
