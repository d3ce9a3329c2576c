package arena

import (
	"context"
	"time"
)

// Statuses of a mirrored item (ChainTx).
const (
	// ChainTxSent: the signed transaction is recorded and broadcast (or
	// about to be); its receipt is awaited. Block is set once it is mined.
	ChainTxSent = "sent"
	// ChainTxConfirmed: mined successfully, with the required confirmations
	// (or already on chain, when there was nothing to send).
	ChainTxConfirmed = "confirmed"
	// ChainTxFailed: the item cannot be mirrored (the contract refuses it,
	// Error says why) or its transaction reverted.
	ChainTxFailed = "failed"
)

// ChainTx is one item of the forecast track mirrored to an EVM chain by the
// relayer, with the transaction that carries it. (Kind, RoundID, Item) is
// unique: an item is recorded once, before its transaction is broadcast.
type ChainTx struct {
	Kind    string // round, benchmarks, commit, reveal, payout, trigger, score, done, filler
	RoundID uint64
	// Item tells items of one kind and round apart: the agent of a commit
	// or reveal, the market index of a payout, the batch number of a score
	// batch; "" otherwise.
	Item  string
	Nonce uint64 // the agent's signed nonce, for commits and reveals
	// TxHash, TxNonce and RawTx are the signed transaction (hex): a
	// transaction missing from the chain is rebroadcast as is, so it can
	// never land twice. Empty when nothing was sent.
	TxHash  string
	TxNonce uint64
	RawTx   string
	// SignedAt is when the current transaction was signed: one left
	// unmined for long is replaced with higher fees.
	SignedAt time.Time
	// Replaced are the earlier signed transactions (hex) of the item, with
	// the same nonce and lower fees; any of them may be the one mined.
	Replaced  []string
	Status    string
	Block     uint64 // the receipt's block; 0 when none is known
	Error     string // why it failed, or the last transient problem
	Attempts  int    // broadcasts so far
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ChainTxStore records the relayer's mirrored items.
type ChainTxStore interface {
	// InsertChainTx records a new item; it reports false (and changes
	// nothing) when (Kind, RoundID, Item) is recorded already.
	InsertChainTx(ctx context.Context, tx *ChainTx) (bool, error)
	// UpdateChainTx stores tx's transaction fields, status, block, error
	// and attempts on its existing row.
	UpdateChainTx(ctx context.Context, tx *ChainTx) error
	// ChainTxs lists the items of a round (roundID > 0) or of every round,
	// optionally only those with the given status, by round, kind, item.
	ChainTxs(ctx context.Context, roundID uint64, status string) ([]ChainTx, error)
	// ChainRoundsOpen lists the rounds that have a "round" item and no
	// "done" item, ascending.
	ChainRoundsOpen(ctx context.Context) ([]uint64, error)
	// ChainRoundsToStart lists the rounds open for commits at now (not
	// triggered, not invalidated) that have no "round" item, ascending.
	ChainRoundsToStart(ctx context.Context, now time.Time) ([]uint64, error)
}
