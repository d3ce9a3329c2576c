package chain

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/chain/chaintest"
	"github.com/forecast-arena/arena/forecast"
)

// simChainID is the chain id of go-ethereum's simulated backend.
const simChainID = 1337

// env is a simulated chain with the three contracts deployed; the curator
// deploys, curates and relays.
type env struct {
	t       *testing.T
	sim     *simulated.Backend
	client  simulated.Client
	key     *ecdsa.PrivateKey
	curator common.Address
	addrs   Addresses
	rm      *bindings.RoundManager
	arena   *bindings.PredictionArena
	ctf     *bindings.MockConditionalTokens
	domain  forecast.Domain
	agents  []*ecdsa.PrivateKey
	nonce   uint64 // the curator's next transaction nonce
}

func newEnv(t *testing.T, nAgents int) *env {
	t.Helper()
	key, _ := crypto.GenerateKey()
	e := &env{t: t, key: key, curator: crypto.PubkeyToAddress(key.PublicKey)}
	alloc := types.GenesisAlloc{e.curator: {Balance: new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)}}
	for range nAgents {
		k, _ := crypto.GenerateKey()
		e.agents = append(e.agents, k)
		alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)}
	}
	e.sim = simulated.NewBackend(alloc, simulated.WithBlockGasLimit(2_000_000_000), osaka)
	t.Cleanup(func() { e.sim.Close() })
	e.client = e.sim.Client()
	o := e.opts()
	addrs, err := Deploy(o, e.client, e.curator, common.Address{}, func(*types.Transaction) error {
		e.sim.Commit()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.addrs = addrs
	e.nonce = o.Nonce.Uint64()
	if e.rm, err = bindings.NewRoundManager(addrs.RoundManager, e.client); err != nil {
		t.Fatal(err)
	}
	if e.arena, err = bindings.NewPredictionArena(addrs.PredictionArena, e.client); err != nil {
		t.Fatal(err)
	}
	if e.ctf, err = bindings.NewMockConditionalTokens(addrs.ConditionalTokens, e.client); err != nil {
		t.Fatal(err)
	}
	e.domain = forecast.Domain{ChainID: simChainID, Contract: addrs.PredictionArena}
	return e
}

// osaka runs the simulated chain on Osaka, the fork public chains run,
// instead of the development chain's default of every scheduled fork (whose
// state-gas repricing would make the measured gas meaningless).
func osaka(_ *node.Config, ec *ethconfig.Config) {
	cfg := *ec.Genesis.Config
	cfg.BogotaTime = nil
	ec.Genesis.Config = &cfg
}

// opts are the curator's transaction options with the next nonce; the gas
// limit is estimated, so a call that would revert fails before sending.
func (e *env) opts() *bind.TransactOpts {
	o, err := bind.NewKeyedTransactorWithChainID(e.key, big.NewInt(simChainID))
	if err != nil {
		e.t.Fatal(err)
	}
	o.Nonce = new(big.Int).SetUint64(e.nonce)
	e.nonce++
	o.GasPrice = big.NewInt(100e9)
	return o
}

// fixedOpts skips estimation (bulk sending); the receipt says whether the
// call succeeded.
func (e *env) fixedOpts(gas uint64) *bind.TransactOpts {
	o := e.opts()
	o.GasLimit = gas
	return o
}

func (e *env) agentOpts(i int) *bind.TransactOpts {
	o, err := bind.NewKeyedTransactorWithChainID(e.agents[i], big.NewInt(simChainID))
	if err != nil {
		e.t.Fatal(err)
	}
	o.GasPrice = big.NewInt(100e9)
	return o
}

func (e *env) agent(i int) common.Address { return crypto.PubkeyToAddress(e.agents[i].PublicKey) }

// mine commits a block and returns tx's receipt, failing unless it succeeded.
func (e *env) mine(tx *types.Transaction, err error) *types.Receipt {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("send: %v (code %q)", err, RevertCode(err))
	}
	e.sim.Commit()
	r, err := e.client.TransactionReceipt(context.Background(), tx.Hash())
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("transaction reverted (gas used %d)", r.GasUsed)
	}
	return r
}

// reverts checks that a call fails at gas estimation with the given code;
// the unsent transaction consumed no nonce of the curator's if it was the
// curator's.
func (e *env) reverts(code string, tx *types.Transaction, err error) {
	e.t.Helper()
	if err == nil {
		e.t.Fatalf("want revert %s, the transaction %s was sent", code, tx.Hash().Hex())
	}
	if got := RevertCode(err); got != code {
		e.t.Fatalf("want revert %s, got %q (%v)", code, got, err)
	}
}

// unsent rewinds the curator nonce after a transaction that was refused
// at estimation.
func (e *env) unsent() { e.nonce-- }

func (e *env) now() uint64 {
	h, err := e.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Time
}

// warp moves the chain clock to at least t (block timestamp).
func (e *env) warp(t uint64) {
	e.t.Helper()
	if now := e.now(); t > now {
		if err := chaintest.AdjustTime(e.sim, time.Duration(t-now)*time.Second); err != nil {
			e.t.Fatal(err)
		}
	}
}

type schedule struct{ commitDeadline, revealStart, revealDeadline, grace uint64 }

func (e *env) schedule() schedule {
	now := e.now()
	return schedule{commitDeadline: now + 3600, revealStart: now + 3601, revealDeadline: now + 7200, grace: 86400}
}

func (e *env) createRound(id uint64, cids [][32]byte, s schedule) {
	e.t.Helper()
	e.mine(e.rm.CreateRound(e.opts(), u(id), cids, s.commitDeadline, s.revealStart, s.revealDeadline, s.grace))
}

func u(v uint64) *big.Int { return new(big.Int).SetUint64(v) }

func cid(i int) [32]byte { return crypto.Keccak256Hash([]byte{byte(i >> 8), byte(i)}) }

// signedCommit returns the arguments of commitWithSignature for agent i.
type signed struct {
	commit   forecast.Commit
	reveal   forecast.Reveal
	sig      []byte
	preds    []uint16
	salt     [32]byte
	agentIdx int
}

func (e *env) signCommit(i int, round uint64, preds []uint16, nonce, deadline uint64) signed {
	e.t.Helper()
	salt, _ := forecast.NewSalt()
	a := e.agent(i)
	c := forecast.Commit{RoundID: round, CommitHash: forecast.CommitHash(round, a, preds, salt), Agent: a, Nonce: nonce, Deadline: deadline}
	sig, err := forecast.Sign(e.agents[i], e.domain.CommitDigest(c))
	if err != nil {
		e.t.Fatal(err)
	}
	return signed{commit: c, sig: sig, preds: preds, salt: salt, agentIdx: i}
}

func (e *env) signReveal(s signed, nonce, deadline uint64) signed {
	e.t.Helper()
	r := forecast.Reveal{RoundID: s.commit.RoundID, Predictions: s.preds, Salt: s.salt, Agent: s.commit.Agent, Nonce: nonce, Deadline: deadline}
	sig, err := forecast.Sign(e.agents[s.agentIdx], e.domain.RevealDigest(r))
	if err != nil {
		e.t.Fatal(err)
	}
	s.reveal, s.sig = r, sig
	return s
}

func (e *env) sendCommit(o *bind.TransactOpts, s signed) (*types.Transaction, error) {
	c := s.commit
	return e.arena.CommitWithSignature(o, u(c.RoundID), c.CommitHash, c.ReasoningHash, c.Agent, u(c.Nonce), u(c.Deadline), s.sig)
}

func (e *env) sendReveal(o *bind.TransactOpts, s signed) (*types.Transaction, error) {
	r := s.reveal
	return e.arena.RevealWithSignature(o, u(r.RoundID), r.Predictions, r.Salt, r.Agent, u(r.Nonce), u(r.Deadline), s.sig)
}

func (e *env) agentNonce(i int) uint64 {
	n, err := e.arena.Nonces(nil, e.agent(i))
	if err != nil {
		e.t.Fatal(err)
	}
	return n.Uint64()
}

// report resolves a condition with the given payout numerators.
func (e *env) report(c [32]byte, nums ...int64) {
	e.t.Helper()
	bs := make([]*big.Int, len(nums))
	for i, n := range nums {
		bs[i] = big.NewInt(n)
	}
	e.mine(e.ctf.ReportPayouts(e.opts(), c, bs))
}
