package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.ChainTxStore = (*DB)(nil)

const chainTxColumns = `kind, round_id, item, nonce, tx_hash, tx_nonce, raw_tx, status, block, error, attempts, created_at, updated_at, signed_at, replaced`

// InsertChainTx implements arena.ChainTxStore. A "round" item opens the
// round in chain_open_rounds and a "done" item closes it, in the same
// transaction.
func (d *DB) InsertChainTx(ctx context.Context, t *arena.ChainTx) (bool, error) {
	now := d.Now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	var inserted bool
	err := d.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO chain_txs (`+chainTxColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (kind, round_id, item) DO NOTHING`),
			t.Kind, int64(t.RoundID), t.Item, int64(t.Nonce), t.TxHash, int64(t.TxNonce), t.RawTx, t.Status, int64(t.Block), t.Error, t.Attempts,
			t.CreatedAt.UnixMicro(), t.UpdatedAt.UnixMicro(), unix(t.SignedAt), strings.Join(t.Replaced, " "))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		inserted = true
		d.touch(tx, arena.DomainChain)
		switch t.Kind {
		case "round":
			_, err = tx.ExecContext(ctx, d.rebind(`INSERT INTO chain_open_rounds (round_id) VALUES (?) ON CONFLICT (round_id) DO NOTHING`), int64(t.RoundID))
		case "done":
			_, err = tx.ExecContext(ctx, d.rebind(`DELETE FROM chain_open_rounds WHERE round_id = ?`), int64(t.RoundID))
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: record chain item %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, err)
	}
	return inserted, nil
}

// UpdateChainTx implements arena.ChainTxStore.
func (d *DB) UpdateChainTx(ctx context.Context, t *arena.ChainTx) error {
	t.UpdatedAt = d.Now()
	res, err := d.exec(ctx, []arena.Domain{arena.DomainChain}, `UPDATE chain_txs SET nonce = ?, tx_hash = ?, tx_nonce = ?, raw_tx = ?, status = ?, block = ?, error = ?, attempts = ?, updated_at = ?,
		signed_at = ?, replaced = ? WHERE kind = ? AND round_id = ? AND item = ?`,
		int64(t.Nonce), t.TxHash, int64(t.TxNonce), t.RawTx, t.Status, int64(t.Block), t.Error, t.Attempts, t.UpdatedAt.UnixMicro(),
		unix(t.SignedAt), strings.Join(t.Replaced, " "), t.Kind, int64(t.RoundID), t.Item)
	if err != nil {
		return fmt.Errorf("store: update chain item %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return arena.Errorf(arena.ENOTFOUND, "store: chain item %s/%d/%s is not recorded", t.Kind, t.RoundID, t.Item)
	}
	return nil
}

// ChainTxs implements arena.ChainTxStore. Each filter is its own
// condition, so that a round's items are read through chain_txs_by_round
// and the sent ones through chain_txs_by_status.
func (d *DB) ChainTxs(ctx context.Context, roundID uint64, status string) ([]arena.ChainTx, error) {
	q, args := `SELECT `+chainTxColumns+` FROM chain_txs WHERE 1 = 1`, []any{}
	if roundID > 0 {
		q, args = q+` AND round_id = ?`, append(args, int64(roundID))
	}
	if status != "" {
		q, args = q+` AND status = ?`, append(args, status)
	}
	out, err := queryAll(ctx, d.r(), d.rebind(q+` ORDER BY round_id, kind, item`), args, func(sc scanner) (arena.ChainTx, error) {
		var t arena.ChainTx
		var rid, nonce, txNonce, block, created, updated, signed int64
		var replaced string
		err := sc.Scan(&t.Kind, &rid, &t.Item, &nonce, &t.TxHash, &txNonce, &t.RawTx, &t.Status, &block, &t.Error, &t.Attempts, &created, &updated,
			&signed, &replaced)
		t.RoundID, t.Nonce, t.TxNonce, t.Block = uint64(rid), uint64(nonce), uint64(txNonce), uint64(block)
		t.CreatedAt, t.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		if signed != 0 {
			t.SignedAt = time.UnixMicro(signed).UTC()
		}
		t.Replaced = strings.Fields(replaced)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: chain items: %w", err)
	}
	return out, nil
}

// ChainRoundsOpen implements arena.ChainTxStore.
func (d *DB) ChainRoundsOpen(ctx context.Context) ([]uint64, error) {
	out, err := queryAll(ctx, d.r(), `SELECT round_id FROM chain_open_rounds ORDER BY round_id`, nil, scanRoundID)
	if err != nil {
		return nil, fmt.Errorf("store: rounds being mirrored: %w", err)
	}
	return out, nil
}

// ChainRoundsToStart implements arena.ChainTxStore: through the index on
// commit deadlines, only rounds still open for commits are read. (Sorted
// here: with ORDER BY id, SQLite scans every round in id order instead.)
func (d *DB) ChainRoundsToStart(ctx context.Context, now time.Time) ([]uint64, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT r.id FROM rounds r WHERE r.commit_deadline >= ? AND r.triggered_at IS NULL AND NOT r.invalidated
		AND NOT EXISTS (SELECT 1 FROM chain_txs c WHERE c.kind = 'round' AND c.round_id = r.id)`), []any{now.UnixMicro()}, scanRoundID)
	if err != nil {
		return nil, fmt.Errorf("store: rounds to mirror: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

func scanRoundID(sc scanner) (uint64, error) {
	var id int64
	err := sc.Scan(&id)
	return uint64(id), err
}
