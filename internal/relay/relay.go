// Package relay mirrors the forecast track to an EVM chain: rounds,
// benchmarks, every accepted commit and reveal (with the agent's own EIP-712
// signature, the relayer paying gas), the frozen outcomes and the on-chain
// scoring. Each item is recorded in the store (arena.ChainTxStore) with its
// signed transaction before that is broadcast, so the relayer is idempotent
// and resumable: a restart continues from the records, and a transaction
// that went missing (dropped from the pool, or mined and then reorged out)
// is broadcast again as is, never as a second transaction.
package relay

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain"
	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// Kinds of mirrored items, in the order a round needs them.
const (
	KindRound      = "round"
	KindCommit     = "commit"
	KindBenchmarks = "benchmarks"
	KindReveal     = "reveal"
	KindPayout     = "payout" // reported to a MockConditionalTokens
	KindTrigger    = "trigger"
	KindScore      = "score"
	KindInvalidate = "invalidate"
	KindDone       = "done" // the round's mirroring is finished
	// KindFiller is a transfer of nothing to the relayer itself that fills
	// a hole in its nonces (round 0, item the nonce).
	KindFiller = "filler"
)

// Client is what the relayer needs of a chain node; go-ethereum's
// ethclient.Client and simulated.Client implement it.
type Client interface {
	bind.ContractBackend
	bind.DeployBackend
	ChainID(ctx context.Context) (*big.Int, error)
	TransactionByHash(ctx context.Context, hash common.Hash) (*types.Transaction, bool, error)
}

// Store is what the relayer reads and records.
type Store interface {
	arena.ChainTxStore
	Round(ctx context.Context, id uint64) (*arena.Round, error)
	Submissions(ctx context.Context, roundID uint64) ([]*arena.Submission, error)
	MarketsByID(ctx context.Context, ids []int64) (map[int64]*arena.Market, error)
}

// Relayer mirrors rounds to one deployment (a PredictionArena and the
// RoundManager and conditional tokens it reads). Its key must be the
// RoundManager's curator. Call Init once, then Pass repeatedly.
type Relayer struct {
	Store  Store
	Client Client
	Key    *ecdsa.PrivateKey
	Arena  common.Address
	// ReportOutcomes makes the relayer report each frozen outcome to the
	// conditional-tokens contract before triggering: only a
	// MockConditionalTokens (local chains) accepts that; with the real
	// conditional tokens the outcomes are already there.
	ReportOutcomes bool
	// Confirmations a receipt needs before its item counts as confirmed
	// (default 1: mined). Until then a receipt that disappears (a reorg)
	// makes the relayer broadcast the transaction again.
	Confirmations uint64
	// MaxInFlight bounds the relayer's unmined transactions (default 16,
	// the per-account slots geth's pool guarantees): items beyond wait for
	// a later pass, so a stalled chain or a fee spike strands at most
	// this many transactions to rebroadcast or bump.
	MaxInFlight int
	// BumpAfter is how long a transaction may stay unmined before the
	// relayer replaces it with the same nonce and higher fees (default 1
	// minute), provided its fees are below what the chain asks now (see
	// underpriced). MaxFeeCap, when set, bounds the fee cap (wei per gas) a
	// bump may reach: past it the transaction waits as it is.
	BumpAfter time.Duration
	MaxFeeCap *big.Int
	Now       func() time.Time
	Logger    *slog.Logger

	from      common.Address
	chainID   *big.Int
	signer    types.Signer
	rounds    common.Address // RoundManager
	ctf       common.Address
	arenaABI  *abi.ABI
	roundsABI *abi.ABI
	ctfABI    *abi.ABI
	pa        *bindings.PredictionArena
	rm        *bindings.RoundManager
	nextNonce uint64
	// sent are the items awaiting their receipt, as of this pass, and
	// inFlight how many of them are not mined.
	sent     []arena.ChainTx
	inFlight int
	head     *types.Header
}

// Init reads the deployment (chain id, RoundManager, conditional tokens)
// and checks that the key is the curator.
func (r *Relayer) Init(ctx context.Context) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.Confirmations == 0 {
		r.Confirmations = 1
	}
	if r.MaxInFlight <= 0 {
		r.MaxInFlight = DefaultMaxInFlight
	}
	if r.BumpAfter <= 0 {
		r.BumpAfter = DefaultBumpAfter
	}
	r.from = crypto.PubkeyToAddress(r.Key.PublicKey)
	id, err := r.Client.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("relay: chain id: %w", err)
	}
	r.chainID, r.signer = id, types.LatestSignerForChainID(id)
	if r.pa, err = bindings.NewPredictionArena(r.Arena, r.Client); err != nil {
		return err
	}
	opts := &bind.CallOpts{Context: ctx}
	if r.rounds, err = r.pa.Rounds(opts); err != nil {
		return fmt.Errorf("relay: %s is not a PredictionArena: %w", r.Arena.Hex(), err)
	}
	if r.ctf, err = r.pa.Ctf(opts); err != nil {
		return fmt.Errorf("relay: conditional tokens of %s: %w", r.Arena.Hex(), err)
	}
	if r.rm, err = bindings.NewRoundManager(r.rounds, r.Client); err != nil {
		return err
	}
	curator, err := r.rm.Curator(opts)
	if err != nil {
		return fmt.Errorf("relay: curator of %s: %w", r.rounds.Hex(), err)
	}
	if curator != r.from {
		return fmt.Errorf("relay: the key's address %s is not the RoundManager's curator %s", r.from.Hex(), curator.Hex())
	}
	for _, p := range []struct {
		dst  **abi.ABI
		meta *bind.MetaData
	}{{&r.arenaABI, bindings.PredictionArenaMetaData}, {&r.roundsABI, bindings.RoundManagerMetaData}, {&r.ctfABI, bindings.MockConditionalTokensMetaData}} {
		if *p.dst, err = p.meta.GetAbi(); err != nil {
			return err
		}
	}
	return nil
}

// From is the relayer's (and curator's) address.
func (r *Relayer) From() common.Address { return r.from }

// Domain is the EIP-712 domain agents must sign under for their
// submissions to be relayable: this chain and this PredictionArena.
func (r *Relayer) Domain() forecast.Domain {
	return forecast.Domain{ChainID: r.chainID.Uint64(), Contract: r.Arena}
}

// Pass reconciles the recorded transactions with the chain, then sends
// whatever became due: new rounds, and for every round being mirrored its
// next items.
func (r *Relayer) Pass(ctx context.Context) error {
	head, err := r.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("relay: chain head: %w", err)
	}
	r.head = head
	sent, err := r.Store.ChainTxs(ctx, 0, arena.ChainTxSent)
	if err != nil {
		return err
	}
	if err := r.initNonce(ctx, sent); err != nil {
		return err
	}
	// In nonce order, so that a node that lost several of them gets the
	// lowest first and the rest are not stuck behind a gap.
	slices.SortStableFunc(sent, func(a, b arena.ChainTx) int { return cmp.Compare(a.TxNonce, b.TxNonce) })
	var errs []error
	r.inFlight = 0
	for i := range sent {
		if err := r.reconcile(ctx, &sent[i], head.Number.Uint64()); err != nil {
			errs = append(errs, err)
		}
		if sent[i].Status == arena.ChainTxSent && sent[i].Block == 0 {
			r.inFlight++
		}
	}
	r.sent = sent
	if err := r.fillNonceHoles(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := r.startRounds(ctx); err != nil {
		errs = append(errs, err)
	}
	open, err := r.Store.ChainRoundsOpen(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	chainNow := time.Unix(int64(head.Time), 0)
	for _, id := range open {
		if err := r.advance(ctx, id, chainNow); err != nil {
			errs = append(errs, fmt.Errorf("relay: round %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// initNonce sets the next transaction nonce: the node's pending nonce, or
// past the highest recorded unmined transaction if that is higher (a
// recorded transaction the node lost is rebroadcast with its own nonce).
func (r *Relayer) initNonce(ctx context.Context, sent []arena.ChainTx) error {
	n, err := r.Client.PendingNonceAt(ctx, r.from)
	if err != nil {
		return fmt.Errorf("relay: nonce of %s: %w", r.from.Hex(), err)
	}
	for _, t := range sent {
		if t.RawTx != "" && t.TxNonce >= n {
			n = t.TxNonce + 1
		}
	}
	r.nextNonce = n
	return nil
}

// reconcile checks one sent item against the chain: a receipt of its
// transaction, or of one it replaced, settles it (confirmed, or failed
// when it reverted). Otherwise a transaction unmined for BumpAfter and
// priced below the chain's current fees is replaced with higher fees, and
// one the node does not know (dropped, or reorged out) is broadcast again
// unchanged.
func (r *Relayer) reconcile(ctx context.Context, t *arena.ChainTx, head uint64) error {
	rc, err := r.receipt(ctx, t)
	switch {
	case err == nil:
		t.Block = rc.BlockNumber.Uint64()
		if rc.Status != types.ReceiptStatusSuccessful {
			t.Status, t.Error = arena.ChainTxFailed, r.revertReason(ctx, t, rc)
			r.Logger.Warn("chain: mirrored transaction reverted", "kind", t.Kind, "round", t.RoundID, "item", t.Item, "tx", t.TxHash, "why", t.Error)
		} else if head+1 >= t.Block+r.Confirmations {
			t.Status, t.Error = arena.ChainTxConfirmed, ""
		}
		return r.Store.UpdateChainTx(ctx, t)
	case !errors.Is(err, ethereum.NotFound):
		return fmt.Errorf("relay: receipt of %s: %w", t.TxHash, err)
	}
	if t.Block != 0 {
		r.Logger.Warn("chain: receipt gone (reorg); broadcasting the transaction again", "kind", t.Kind, "round", t.RoundID, "item", t.Item, "tx", t.TxHash, "was_block", t.Block)
		t.Block = 0
	}
	if r.Now().Sub(signedAt(t)) >= r.BumpAfter {
		low, err := r.underpriced(ctx, t)
		if err != nil {
			return err
		}
		if low {
			return r.bump(ctx, t)
		}
	}
	if _, pending, err := r.Client.TransactionByHash(ctx, common.HexToHash(t.TxHash)); err == nil && pending {
		return nil // waiting in the pool
	} else if err != nil && !errors.Is(err, ethereum.NotFound) {
		return fmt.Errorf("relay: transaction %s: %w", t.TxHash, err)
	}
	return r.broadcast(ctx, t)
}

// receipt is the receipt of t's transaction or of one it replaced (the
// same nonce: at most one of them is mined). A replaced one that was mined
// becomes t's transaction again.
func (r *Relayer) receipt(ctx context.Context, t *arena.ChainTx) (*types.Receipt, error) {
	rc, err := r.Client.TransactionReceipt(ctx, common.HexToHash(t.TxHash))
	if err == nil || !errors.Is(err, ethereum.NotFound) {
		return rc, err
	}
	for i, raw := range t.Replaced {
		old, derr := decodeRaw(raw)
		if derr != nil {
			continue
		}
		rc, rerr := r.Client.TransactionReceipt(ctx, old.Hash())
		if rerr == nil {
			r.Logger.Info("chain: a replaced transaction was the one mined", "kind", t.Kind, "round", t.RoundID, "item", t.Item, "tx", old.Hash().Hex())
			t.Replaced[i] = t.RawTx
			t.TxHash, t.RawTx = old.Hash().Hex(), raw
			return rc, nil
		}
		if !errors.Is(rerr, ethereum.NotFound) {
			return nil, fmt.Errorf("relay: receipt of %s: %w", old.Hash().Hex(), rerr)
		}
	}
	return nil, err
}

// revertReason says why a mined transaction reverted: for a commit mined
// after the round's commit deadline, that it came too late.
func (r *Relayer) revertReason(ctx context.Context, t *arena.ChainTx, rc *types.Receipt) string {
	if t.Kind != KindCommit {
		return "transaction reverted"
	}
	rd, err := r.Store.Round(ctx, t.RoundID)
	if err != nil {
		return "transaction reverted"
	}
	h, err := r.Client.HeaderByNumber(ctx, rc.BlockNumber)
	if err != nil || int64(h.Time) <= rd.CommitDeadline.Unix() {
		return "transaction reverted"
	}
	return r.late(ctx, t, rd, "the transaction was mined after the on-chain commit deadline")
}

func signedAt(t *arena.ChainTx) time.Time {
	if !t.SignedAt.IsZero() {
		return t.SignedAt
	}
	return t.CreatedAt
}

// bump replaces t's transaction, unmined for BumpAfter, with one of the
// same nonce, gas and call and higher fees (see nextFees), and broadcasts
// it. The old one stays in t.Replaced: it may still be the one mined.
func (r *Relayer) bump(ctx context.Context, t *arena.ChainTx) error {
	old, err := decodeTx(t)
	if err != nil {
		return err
	}
	f, err := r.fees(ctx, old)
	if err != nil {
		return err
	}
	if r.MaxFeeCap != nil && f.cap.Cmp(r.MaxFeeCap) > 0 {
		r.Logger.Warn("chain: a transaction is unmined, but a bump would pass the fee cap limit; waiting", "kind", t.Kind, "round", t.RoundID,
			"item", t.Item, "tx", t.TxHash, "fee_cap", f.cap, "limit", r.MaxFeeCap)
		if _, _, err := r.Client.TransactionByHash(ctx, old.Hash()); errors.Is(err, ethereum.NotFound) {
			return r.broadcast(ctx, t)
		}
		return nil
	}
	tx, err := r.signTx(old.Nonce(), *old.To(), old.Gas(), old.Data(), f)
	if err != nil {
		return err
	}
	r.Logger.Warn("chain: transaction unmined; replacing it with higher fees", "kind", t.Kind, "round", t.RoundID, "item", t.Item,
		"old_tx", t.TxHash, "new_tx", tx.hash, "nonce", old.Nonce(), "tip", f.tip, "fee_cap", f.cap, "unmined_for", r.Now().Sub(signedAt(t)).Round(time.Second))
	t.Replaced = append(t.Replaced, t.RawTx)
	t.TxHash, t.RawTx, t.SignedAt = tx.hash, tx.raw, r.Now()
	if err := r.Store.UpdateChainTx(ctx, t); err != nil {
		return err
	}
	return r.broadcast(ctx, t)
}

// broadcast sends t's recorded signed transaction.
func (r *Relayer) broadcast(ctx context.Context, t *arena.ChainTx) error {
	tx, err := decodeTx(t)
	if err != nil {
		return err
	}
	t.Attempts++
	serr := r.Client.SendTransaction(ctx, tx)
	switch {
	case serr == nil || strings.Contains(serr.Error(), "already known"):
		t.Error, serr = "", nil
	case strings.Contains(strings.ToLower(serr.Error()), "nonce too low"):
		// Another transaction took the nonce, so this one can never be
		// mined: the item is signed again with a fresh nonce.
		return r.replace(ctx, t, tx)
	default:
		t.Error = serr.Error()
	}
	if err := r.Store.UpdateChainTx(ctx, t); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("relay: broadcast %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, serr)
	}
	return nil
}

func decodeTx(t *arena.ChainTx) (*types.Transaction, error) {
	tx, err := decodeRaw(t.RawTx)
	if err != nil {
		return nil, fmt.Errorf("relay: recorded transaction of %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, err)
	}
	return tx, nil
}

func decodeRaw(s string) (*types.Transaction, error) {
	raw, err := hexutil.Decode(s)
	if err != nil {
		return nil, err
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, err
	}
	return &tx, nil
}

// replace signs a recorded item's call again with the next nonce, after
// its transaction lost its nonce to another one. If the call's effect is
// on chain by now (the estimate says so), nothing is sent.
func (r *Relayer) replace(ctx context.Context, t *arena.ChainTx, old *types.Transaction) error {
	if t.Kind == KindFiller {
		// The hole it was to fill is filled.
		t.Status, t.Error = arena.ChainTxConfirmed, "the nonce was used by another transaction"
		return r.Store.UpdateChainTx(ctx, t)
	}
	r.Logger.Warn("chain: a recorded transaction's nonce was used by another; signing the item again", "kind", t.Kind, "round", t.RoundID, "item", t.Item, "tx", t.TxHash)
	tx, done, err := r.sign(ctx, t, *old.To(), old.Data())
	if err != nil || done {
		if err == nil {
			err = r.Store.UpdateChainTx(ctx, t)
		}
		return err
	}
	t.TxHash, t.TxNonce, t.RawTx, t.Status, t.Error, t.SignedAt, t.Replaced = tx.hash, tx.nonce, tx.raw, arena.ChainTxSent, "", r.Now(), nil
	if err := r.Store.UpdateChainTx(ctx, t); err != nil {
		return err
	}
	r.nextNonce++
	return r.broadcast(ctx, t)
}

// startRounds begins mirroring rounds that are still open for commits and
// not recorded yet. A round whose commit deadline has passed is not
// started: its commits could no longer be mirrored.
func (r *Relayer) startRounds(ctx context.Context) error {
	ids, err := r.Store.ChainRoundsToStart(ctx, r.Now())
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		rd, err := r.Store.Round(ctx, id)
		if err == nil {
			err = r.createRound(ctx, rd)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("relay: round %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Relayer) createRound(ctx context.Context, rd *arena.Round) error {
	if len(rd.Markets) == 0 {
		return nil // a round always has markets; nothing to mirror otherwise
	}
	ids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		ids[i] = m.MarketID
	}
	ms, err := r.Store.MarketsByID(ctx, ids)
	if err != nil {
		return err
	}
	cids := make([][32]byte, len(rd.Markets))
	for i, id := range ids {
		cids[i] = chain.ConditionID(ms[id])
	}
	commit, start, end := uint64(rd.CommitDeadline.Unix()), uint64(rd.RevealStart.Unix()), uint64(rd.RevealDeadline.Unix())
	if start <= commit {
		// The contract wants reveals to open strictly after the commit
		// deadline; off chain they may open at it. A second later is the
		// nearest schedule the chain accepts.
		start = commit + 1
	}
	if end < start {
		end = start
	}
	data, err := r.roundsABI.Pack("createRound", new(big.Int).SetUint64(rd.ID), cids, commit, start, end, uint64(rd.Grace/time.Second))
	if err != nil {
		return err
	}
	return r.send(ctx, &arena.ChainTx{Kind: KindRound, RoundID: rd.ID}, r.rounds, data)
}

// advance sends a mirrored round's next due items: an invalidated
// round's invalidation; else the commits and reveals and the benchmarks,
// then, once the round is triggered, its benchmarks mined, its commits
// and reveals settled and its reveal deadline passed on chain, the
// payouts (when reported), the trigger and the scoring batches.
func (r *Relayer) advance(ctx context.Context, id uint64, chainNow time.Time) error {
	rd, err := r.Store.Round(ctx, id)
	if err != nil {
		return err
	}
	have, err := r.Store.ChainTxs(ctx, id, "")
	if err != nil {
		return err
	}
	round := find(have, KindRound, "")
	if round == nil {
		return nil
	}
	if round.Status == arena.ChainTxFailed {
		return r.finish(ctx, id, "the round could not be created on chain: "+round.Error)
	}
	if !mined(round) {
		return nil
	}
	if rd.Invalidated {
		return r.invalidate(ctx, id, have)
	}
	subs, err := r.Store.Submissions(ctx, id)
	if err != nil {
		return err
	}
	allSettled, errs := r.relaySubmissions(ctx, rd, subs, have, chainNow)
	bench := find(have, KindBenchmarks, "")
	if bench == nil && !rd.BenchmarkAt.IsZero() && chainNow.Unix() > rd.CommitDeadline.Unix() {
		if err := r.relayBenchmarks(ctx, id, rd); err != nil {
			errs = append(errs, err)
		}
	}
	if rd.TriggeredAt.IsZero() || !mined(bench) || !allSettled || chainNow.Unix() <= rd.RevealDeadline.Unix() {
		return errors.Join(errs...)
	}
	// Outcomes: reported to a mock first when asked to, then triggered.
	if r.ReportOutcomes {
		done, perrs := r.reportPayouts(ctx, id, rd, have)
		errs = append(errs, perrs...)
		if !done {
			return errors.Join(errs...)
		}
	}
	triggered, err := r.triggerOutcomes(ctx, id, have)
	if !triggered {
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(append(errs, r.scoreRound(ctx, id, have))...)
}

// invalidate sends an invalidated round's invalidation, and stops
// mirroring the round once it is settled.
func (r *Relayer) invalidate(ctx context.Context, id uint64, have []arena.ChainTx) error {
	inv := find(have, KindInvalidate, "")
	if inv == nil {
		data, err := r.roundsABI.Pack("invalidateRound", big.NewInt(0).SetUint64(id))
		if err != nil {
			return err
		}
		return r.send(ctx, &arena.ChainTx{Kind: KindInvalidate, RoundID: id}, r.rounds, data)
	}
	if settled(inv) {
		return r.finish(ctx, id, "")
	}
	return nil
}

// relaySubmissions sends the commits and reveals not sent yet, each when
// the agent's on-chain nonce has reached its signed nonce (earlier items
// of the agent are mined), a reveal once its reveal window has opened on
// chain; allSettled when every one of them is settled.
func (r *Relayer) relaySubmissions(ctx context.Context, rd *arena.Round, subs []*arena.Submission, have []arena.ChainTx, chainNow time.Time) (allSettled bool, errs []error) {
	allSettled = true
	for _, s := range subs {
		c := find(have, KindCommit, s.Agent)
		if c == nil {
			allSettled = false
			if err := r.relayCommit(ctx, rd, s); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !settled(c) {
			allSettled = false
			continue
		}
		if !s.Revealed() || c.Status == arena.ChainTxFailed {
			continue
		}
		rv := find(have, KindReveal, s.Agent)
		if rv == nil {
			allSettled = false
			if !chainNow.Before(rd.RevealStart) {
				if err := r.relayReveal(ctx, rd, s); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if !settled(rv) {
			allSettled = false
		}
	}
	return allSettled, errs
}

// relayBenchmarks sends the round's benchmarks, once captured and the
// commit deadline has passed on chain.
func (r *Relayer) relayBenchmarks(ctx context.Context, id uint64, rd *arena.Round) error {
	vals := make([]uint16, len(rd.Markets))
	for i, m := range rd.Markets {
		vals[i] = chain.NoBenchmark
		if m.Benchmark != nil {
			vals[i] = uint16(m.BenchmarkBps)
		}
	}
	data, err := r.roundsABI.Pack("setBenchmarks", new(big.Int).SetUint64(id), vals)
	if err != nil {
		return err
	}
	return r.send(ctx, &arena.ChainTx{Kind: KindBenchmarks, RoundID: id}, r.rounds, data)
}

// reportPayouts reports the round's resolved markets' payouts to the
// conditional tokens mock (ReportOutcomes); done when every one of them
// is settled.
func (r *Relayer) reportPayouts(ctx context.Context, id uint64, rd *arena.Round, have []arena.ChainTx) (done bool, errs []error) {
	ids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		ids[i] = m.MarketID
	}
	ms, err := r.Store.MarketsByID(ctx, ids)
	if err != nil {
		return false, []error{err}
	}
	done = true
	for i, m := range rd.Markets {
		nums := payout(m.Outcome)
		if nums == nil {
			continue
		}
		item := strconv.Itoa(i)
		p := find(have, KindPayout, item)
		if p == nil {
			done = false
			data, err := r.ctfABI.Pack("reportPayouts", chain.ConditionID(ms[m.MarketID]), nums)
			if err == nil {
				err = r.send(ctx, &arena.ChainTx{Kind: KindPayout, RoundID: id, Item: item}, r.ctf, data)
			}
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !settled(p) {
			done = false
		}
	}
	return done, errs
}

// triggerOutcomes sends the round's trigger, and stops mirroring the
// round when it failed; triggered once it is mined.
func (r *Relayer) triggerOutcomes(ctx context.Context, id uint64, have []arena.ChainTx) (triggered bool, err error) {
	trig := find(have, KindTrigger, "")
	if trig == nil {
		data, err := r.arenaABI.Pack("triggerOutcomes", new(big.Int).SetUint64(id))
		if err == nil {
			err = r.send(ctx, &arena.ChainTx{Kind: KindTrigger, RoundID: id}, r.Arena, data)
		}
		return false, err
	}
	if trig.Status == arena.ChainTxFailed {
		return false, r.finish(ctx, id, "outcomes could not be triggered on chain: "+trig.Error)
	}
	return mined(trig), nil
}

// scoreRound sends the round's scoring, one batch of MaxBatch agents at a
// time once the batch before is settled, and stops mirroring the round
// when the contract says scoring is done (or after maxBatches).
func (r *Relayer) scoreRound(ctx context.Context, id uint64, have []arena.ChainTx) error {
	batches := 0
	for _, t := range have {
		if t.Kind == KindScore {
			batches++
			if !settled(&t) {
				return nil
			}
		}
	}
	done, err := r.pa.ScoringDone(&bind.CallOpts{Context: ctx}, new(big.Int).SetUint64(id))
	if err != nil {
		return fmt.Errorf("scoringDone: %w", err)
	}
	if done {
		return r.finish(ctx, id, "")
	}
	if batches > maxBatches {
		return r.finish(ctx, id, "scoring did not finish after "+strconv.Itoa(batches)+" batches")
	}
	data, err := r.arenaABI.Pack("scoreBatch", new(big.Int).SetUint64(id), big.NewInt(MaxBatch))
	if err == nil {
		err = r.send(ctx, &arena.ChainTx{Kind: KindScore, RoundID: id, Item: strconv.Itoa(batches)}, r.Arena, data)
	}
	return err
}

// Defaults of MaxInFlight and BumpAfter.
const (
	DefaultMaxInFlight = 16
	DefaultBumpAfter   = time.Minute
)

// MaxBatch is how many agents one scoreBatch call scores (the contract's
// MAX_BATCH).
const MaxBatch = 64

// maxBatches stops a round whose scoring does not progress (it cannot
// happen with a working contract; the bound keeps a fault from spending gas
// for ever).
const maxBatches = 10_000

func (r *Relayer) relayCommit(ctx context.Context, rd *arena.Round, s *arena.Submission) error {
	item := &arena.ChainTx{Kind: KindCommit, RoundID: rd.ID, Item: s.Agent, Nonce: s.CommitNonce}
	sig, err := forecast.DecodeSignature(s.CommitSig)
	if err != nil || s.CommitSigDeadline == 0 || !common.IsHexAddress(s.Agent) {
		return r.fail(ctx, item, "the signed commit is not fully stored (signature, deadline or agent address)")
	}
	agent := common.HexToAddress(s.Agent)
	if r.full() {
		return nil
	}
	if ok, err := r.nonceReady(ctx, item, agent); !ok || err != nil {
		return err
	}
	var rh common.Hash
	if s.ReasoningHash != "" {
		rh = common.HexToHash(s.ReasoningHash)
	}
	data, err := r.arenaABI.Pack("commitWithSignature", new(big.Int).SetUint64(rd.ID), common.HexToHash(s.CommitHash), rh, agent,
		new(big.Int).SetUint64(s.CommitNonce), new(big.Int).SetUint64(s.CommitSigDeadline), sig)
	if err != nil {
		return err
	}
	return r.send(ctx, item, r.Arena, data)
}

func (r *Relayer) relayReveal(ctx context.Context, rd *arena.Round, s *arena.Submission) error {
	item := &arena.ChainTx{Kind: KindReveal, RoundID: rd.ID, Item: s.Agent, Nonce: s.RevealNonce}
	sig, err := forecast.DecodeSignature(s.RevealSig)
	if err != nil || s.RevealSigDeadline == 0 {
		return r.fail(ctx, item, "the signed reveal is not fully stored (signature or deadline)")
	}
	agent := common.HexToAddress(s.Agent)
	if r.full() {
		return nil
	}
	if ok, err := r.nonceReady(ctx, item, agent); !ok || err != nil {
		return err
	}
	data, err := r.arenaABI.Pack("revealWithSignature", new(big.Int).SetUint64(rd.ID), s.Predictions, common.HexToHash(s.Salt), agent,
		new(big.Int).SetUint64(s.RevealNonce), new(big.Int).SetUint64(s.RevealSigDeadline), sig)
	if err != nil {
		return err
	}
	return r.send(ctx, item, r.Arena, data)
}

// nonceReady reports whether the agent's on-chain nonce equals the item's
// signed nonce. A lower one means an earlier item of the agent is still on
// its way (wait), unless none is pending: then an earlier item was never
// mirrored and this one cannot be either (one nonce sequence per agent).
// A higher one is left to the estimate (already mirrored, or refused).
func (r *Relayer) nonceReady(ctx context.Context, item *arena.ChainTx, agent common.Address) (bool, error) {
	n, err := r.pa.Nonces(&bind.CallOpts{Context: ctx}, agent)
	if err != nil {
		return false, fmt.Errorf("relay: nonce of %s: %w", agent.Hex(), err)
	}
	if !n.IsUint64() || n.Uint64() >= item.Nonce {
		return true, nil
	}
	for _, t := range r.sent {
		if (t.Kind == KindCommit || t.Kind == KindReveal) && t.Item == item.Item && t.Nonce < item.Nonce {
			return false, nil
		}
	}
	return false, r.fail(ctx, item, fmt.Sprintf("nonce gap: the agent's on-chain nonce is %d and this item is signed with nonce %d (an earlier item of the agent is not on chain)", n, item.Nonce))
}

// fail records an item that cannot be mirrored.
func (r *Relayer) fail(ctx context.Context, item *arena.ChainTx, why string) error {
	item.Status, item.Error = arena.ChainTxFailed, why
	r.Logger.Warn("chain: item cannot be mirrored", "kind", item.Kind, "round", item.RoundID, "item", item.Item, "why", why)
	_, err := r.Store.InsertChainTx(ctx, item)
	return err
}

// finish records that a round's mirroring is over.
func (r *Relayer) finish(ctx context.Context, id uint64, why string) error {
	_, err := r.Store.InsertChainTx(ctx, &arena.ChainTx{Kind: KindDone, RoundID: id, Status: arena.ChainTxConfirmed, Error: why})
	if err == nil {
		r.Logger.Info("chain: round mirrored", "round", id, "note", why)
	}
	return err
}

// alreadyDone are the refusals that mean the item's effect is on chain
// already (a transaction of ours whose record was lost, or another relayer).
var alreadyDone = map[string]bool{
	"round_exists": true, "benchmarks_set": true, "already_reported": true,
	forecast.CodeAlreadyCommitted: true, forecast.CodeAlreadyRevealed: true,
}

// transient are the refusals that may pass later (the chain's clock).
var transient = map[string]bool{
	forecast.CodeRevealNotOpen: true, "benchmarks_too_early": true, forecast.CodeTriggerNotAllowed: true,
}

// send estimates the call, signs it with the next nonce, records the new
// item with the signed transaction and broadcasts it. The record comes
// first: whatever happens after it, the same transaction is what a later
// pass broadcasts. A refusal is recorded, or retried later when it may
// pass.
func (r *Relayer) send(ctx context.Context, item *arena.ChainTx, to common.Address, data []byte) error {
	if r.full() {
		return nil
	}
	tx, done, err := r.sign(ctx, item, to, data)
	if err != nil {
		return err
	}
	if done {
		_, err := r.Store.InsertChainTx(ctx, item)
		return err
	}
	if tx == nil {
		return nil // not yet
	}
	item.TxHash, item.TxNonce, item.RawTx, item.Status, item.Error, item.SignedAt = tx.hash, tx.nonce, tx.raw, arena.ChainTxSent, "", r.Now()
	ok, err := r.Store.InsertChainTx(ctx, item)
	if err != nil || !ok {
		return err // !ok: another relayer recorded the item first
	}
	r.nextNonce++
	r.inFlight++
	r.sent = append(r.sent, *item)
	return r.broadcast(ctx, item)
}

// full: MaxInFlight transactions are unmined; new items wait for a later
// pass.
func (r *Relayer) full() bool { return r.inFlight >= r.MaxInFlight }

type signedTx struct {
	hash, raw string
	nonce     uint64
}

// sign estimates a call and signs it with the next nonce. When the
// contract refuses it, done is set and item carries the verdict (already
// on chain: confirmed; refused: failed); when it may pass later, both tx
// and done are zero.
func (r *Relayer) sign(ctx context.Context, item *arena.ChainTx, to common.Address, data []byte) (tx *signedTx, done bool, err error) {
	gas, err := r.Client.EstimateGas(ctx, ethereum.CallMsg{From: r.from, To: &to, Data: data})
	if err != nil {
		code := chain.RevertCode(err)
		switch {
		case code == "":
			return nil, false, fmt.Errorf("relay: estimate %s/%d/%s: %w", item.Kind, item.RoundID, item.Item, err)
		case alreadyDone[code] || (item.Kind == KindTrigger && code == forecast.CodeTriggerNotAllowed && r.triggered(ctx, item.RoundID)):
			item.Status, item.Error = arena.ChainTxConfirmed, "already on chain ("+code+")"
			return nil, true, nil
		case transient[code]:
			r.Logger.Debug("chain: not yet", "kind", item.Kind, "round", item.RoundID, "item", item.Item, "code", code)
			return nil, false, nil
		}
		item.Status, item.Error = arena.ChainTxFailed, "refused by the contract: "+code
		if item.Kind == KindCommit && code == forecast.CodeCommitClosed {
			if rd, err := r.Store.Round(ctx, item.RoundID); err == nil {
				item.Error = r.late(ctx, item, rd, "the chain's commit deadline passed before the relayer could send it (refused: "+code+")")
			}
		}
		r.Logger.Warn("chain: item cannot be mirrored", "kind", item.Kind, "round", item.RoundID, "item", item.Item, "code", code)
		return nil, true, nil
	}
	f, err := r.fees(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	tx, err = r.signTx(r.nextNonce, to, gas+gas/4, data, f)
	return tx, false, err
}

// fees are the fees of a new transaction, or of prev's replacement, at the
// current head (see nextFees).
func (r *Relayer) fees(ctx context.Context, prev *types.Transaction) (fees, error) {
	var p *fees
	if prev != nil {
		p = &fees{tip: prev.GasTipCap(), cap: prev.GasFeeCap()}
	}
	if r.head == nil || r.head.BaseFee == nil {
		// A chain without EIP-1559: a legacy transaction at the node's
		// gas price.
		price, err := r.Client.SuggestGasPrice(ctx)
		if err != nil {
			return fees{}, fmt.Errorf("relay: gas price: %w", err)
		}
		f := nextFees(price, nil, p)
		f.legacy = true
		return f, nil
	}
	tip, err := r.Client.SuggestGasTipCap(ctx)
	if err != nil {
		return fees{}, fmt.Errorf("relay: gas tip: %w", err)
	}
	return nextFees(tip, r.head.BaseFee, p), nil
}

// signTx signs a call with the given nonce, gas and fees: an EIP-1559
// dynamic-fee transaction, or a legacy one on a chain without base fee.
func (r *Relayer) signTx(nonce uint64, to common.Address, gas uint64, data []byte, f fees) (*signedTx, error) {
	var inner types.TxData = &types.DynamicFeeTx{ChainID: r.chainID, Nonce: nonce, GasTipCap: f.tip, GasFeeCap: f.cap, Gas: gas, To: &to, Data: data}
	if f.legacy {
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: f.cap, Gas: gas, To: &to, Data: data}
	}
	signed, err := types.SignTx(types.NewTx(inner), r.signer, r.Key)
	if err != nil {
		return nil, err
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &signedTx{hash: signed.Hash().Hex(), raw: hexutil.Encode(raw), nonce: nonce}, nil
}

func (r *Relayer) triggered(ctx context.Context, id uint64) bool {
	res, err := r.pa.ResultOf(&bind.CallOpts{Context: ctx}, new(big.Int).SetUint64(id))
	return err == nil && res.Triggered
}

// payout is the conditional-tokens payout of a frozen outcome: [1,0] YES
// (index 0), [0,1] NO, [1,1] void; nil for an unresolved market.
func payout(o *int8) []*big.Int {
	if o == nil {
		return nil
	}
	switch *o {
	case scoring.OutcomeYes:
		return []*big.Int{big.NewInt(1), big.NewInt(0)}
	case scoring.OutcomeNo:
		return []*big.Int{big.NewInt(0), big.NewInt(1)}
	case scoring.OutcomeExcluded:
		return []*big.Int{big.NewInt(1), big.NewInt(1)}
	}
	return nil
}

func find(ts []arena.ChainTx, kind, item string) *arena.ChainTx {
	for i := range ts {
		if ts[i].Kind == kind && ts[i].Item == item {
			return &ts[i]
		}
	}
	return nil
}

// mined: the item's effect is on chain (its transaction mined without
// reverting, or nothing needed sending).
func mined(t *arena.ChainTx) bool {
	return t != nil && (t.Status == arena.ChainTxConfirmed || (t.Status == arena.ChainTxSent && t.Block > 0))
}

// settled: mined, or failed for good.
func settled(t *arena.ChainTx) bool {
	return t != nil && (mined(t) || t.Status == arena.ChainTxFailed)
}
