package relay

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/forecast-arena/arena"
)

// fees of one transaction in wei per gas: the priority fee (tip) and the
// fee cap of an EIP-1559 transaction, or (legacy) the gas price in cap.
type fees struct {
	tip, cap *big.Int
	legacy   bool
}

// nextFees are the fees of a transaction signed now: the node's suggested
// tip and a fee cap of twice the base fee plus the tip, so that it stays
// includable while the base fee rises for six full blocks (12.5 % each).
// Without a base fee (a legacy chain) both are the suggested gas price.
// For a replacement of a pending transaction with fees prev, both are at
// least prev's plus 1/8 (rounded up): geth's pool takes a replacement only
// for 10 % more of each, and anything less would be refused.
func nextFees(suggested, baseFee *big.Int, prev *fees) fees {
	f := fees{tip: new(big.Int).Set(suggested), cap: new(big.Int).Set(suggested)}
	if baseFee != nil {
		f.cap.Add(f.cap, new(big.Int).Lsh(baseFee, 1))
	}
	if prev != nil {
		f.tip = maxBig(f.tip, plusEighth(prev.tip))
		f.cap = maxBig(f.cap, plusEighth(prev.cap))
		if f.cap.Cmp(f.tip) < 0 {
			f.cap.Set(f.tip) // a cap below the tip is invalid
		}
	}
	return f
}

// underpriced: t's transaction pays less than a new one would at the
// current head (a tip below the node's suggestion, or a fee cap below the
// base fee plus that tip; for a legacy transaction, a gas price below the
// node's). Only then does a replacement help: one that pays the going
// rate and waits (a stalled chain, a full pool) would gain nothing by a
// bump, and bumps compounding every BumpAfter would only raise the bill.
func (r *Relayer) underpriced(ctx context.Context, t *arena.ChainTx) (bool, error) {
	tx, err := decodeTx(t)
	if err != nil {
		return false, err
	}
	now, err := r.fees(ctx, nil)
	if err != nil {
		return false, err
	}
	if now.legacy || tx.Type() == types.LegacyTxType {
		return tx.GasPrice().Cmp(now.cap) < 0, nil
	}
	need := new(big.Int).Add(r.head.BaseFee, now.tip)
	return tx.GasTipCap().Cmp(now.tip) < 0 || tx.GasFeeCap().Cmp(need) < 0, nil
}

// plusEighth is v + ⌈v/8⌉ (at least v + 1).
func plusEighth(v *big.Int) *big.Int {
	inc := new(big.Int).Add(v, big.NewInt(7))
	inc.Rsh(inc, 3)
	if inc.Sign() == 0 {
		inc.SetInt64(1)
	}
	return inc.Add(inc, v)
}

func maxBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// fillNonceHoles repairs a gap in the relayer's own nonces that no record
// covers: the node's pending nonce (its next executable one) is below a
// recorded unmined transaction and none is recorded at it, so every later
// transaction waits for ever. That happens when a transaction whose
// record was lost (a database restored from a backup taken before it was
// sent) is dropped by the node. A recorded transaction the node lost is
// broadcast again by reconcile instead. The hole gets a transfer of
// nothing to the relayer itself, recorded first like every item; then the
// node's pending nonce moves on to the next hole, if any.
func (r *Relayer) fillNonceHoles(ctx context.Context) error {
	for range len(r.sent) + 1 {
		p, err := r.Client.PendingNonceAt(ctx, r.from)
		if err != nil {
			return fmt.Errorf("relay: pending nonce of %s: %w", r.from.Hex(), err)
		}
		recorded, above := false, false
		for _, t := range r.sent {
			if t.Status != arena.ChainTxSent || t.Block != 0 || t.RawTx == "" {
				continue
			}
			recorded = recorded || t.TxNonce == p
			above = above || t.TxNonce > p
		}
		if recorded || !above {
			return nil
		}
		f, err := r.fees(ctx, nil)
		if err != nil {
			return err
		}
		tx, err := r.signTx(p, r.from, 21_000, nil, f)
		if err != nil {
			return err
		}
		item := &arena.ChainTx{Kind: KindFiller, Item: strconv.FormatUint(p, 10), TxHash: tx.hash, TxNonce: p, RawTx: tx.raw,
			Status: arena.ChainTxSent, SignedAt: r.Now()}
		r.Logger.Warn("chain: a hole in the relayer's nonces holds back its transactions; filling it", "nonce", p, "tx", tx.hash)
		if ok, err := r.Store.InsertChainTx(ctx, item); err != nil || !ok {
			return err // !ok: filled already (by another relayer)
		}
		r.sent = append(r.sent, *item)
		r.inFlight++
		if err := r.broadcast(ctx, item); err != nil {
			return err
		}
	}
	return nil
}

// late is why a commit could not be mirrored: it reached the chain after
// the on-chain commit deadline (the same as the arena's), having been
// accepted in the last seconds before it.
func (r *Relayer) late(ctx context.Context, t *arena.ChainTx, rd *arena.Round, what string) string {
	why := "late: " + what
	subs, err := r.Store.Submissions(ctx, rd.ID)
	if err != nil {
		return why
	}
	for _, s := range subs {
		if common.HexToAddress(s.Agent) == common.HexToAddress(t.Item) && !s.CommittedAt.IsZero() {
			return fmt.Sprintf("%s; the arena accepted it %s before the commit deadline, less than the relayer needed to mine it",
				why, rd.CommitDeadline.Sub(s.CommittedAt).Round(time.Millisecond))
		}
	}
	return why
}
