package store

import (
	"context"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.ChainTxStore = (*DB)(nil)

const chainTxColumns = `kind, round_id, item, nonce, tx_hash, tx_nonce, raw_tx, status, block, error, attempts, created_at, updated_at`

// InsertChainTx implements arena.ChainTxStore.
func (d *DB) InsertChainTx(ctx context.Context, t *arena.ChainTx) (bool, error) {
	now := d.Now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	res, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO chain_txs (`+chainTxColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (kind, round_id, item) DO NOTHING`),
		t.Kind, int64(t.RoundID), t.Item, int64(t.Nonce), t.TxHash, int64(t.TxNonce), t.RawTx, t.Status, int64(t.Block), t.Error, t.Attempts,
		t.CreatedAt.UnixMicro(), t.UpdatedAt.UnixMicro())
	if err != nil {
		return false, fmt.Errorf("store: record chain item %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UpdateChainTx implements arena.ChainTxStore.
func (d *DB) UpdateChainTx(ctx context.Context, t *arena.ChainTx) error {
	t.UpdatedAt = d.Now()
	res, err := d.db.ExecContext(ctx, d.rebind(`UPDATE chain_txs SET nonce = ?, tx_hash = ?, tx_nonce = ?, raw_tx = ?, status = ?, block = ?, error = ?, attempts = ?, updated_at = ?
		WHERE kind = ? AND round_id = ? AND item = ?`),
		int64(t.Nonce), t.TxHash, int64(t.TxNonce), t.RawTx, t.Status, int64(t.Block), t.Error, t.Attempts, t.UpdatedAt.UnixMicro(),
		t.Kind, int64(t.RoundID), t.Item)
	if err != nil {
		return fmt.Errorf("store: update chain item %s/%d/%s: %w", t.Kind, t.RoundID, t.Item, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return arena.Errorf(arena.ENOTFOUND, "store: chain item %s/%d/%s is not recorded", t.Kind, t.RoundID, t.Item)
	}
	return nil
}

// ChainTxs implements arena.ChainTxStore.
func (d *DB) ChainTxs(ctx context.Context, roundID uint64, status string) ([]arena.ChainTx, error) {
	q := `SELECT ` + chainTxColumns + ` FROM chain_txs WHERE (? = 0 OR round_id = ?) AND (? = '' OR status = ?) ORDER BY round_id, kind, item`
	out, err := queryAll(ctx, d.db, d.rebind(q), []any{int64(roundID), int64(roundID), status, status}, func(sc scanner) (arena.ChainTx, error) {
		var t arena.ChainTx
		var rid, nonce, txNonce, block, created, updated int64
		err := sc.Scan(&t.Kind, &rid, &t.Item, &nonce, &t.TxHash, &txNonce, &t.RawTx, &t.Status, &block, &t.Error, &t.Attempts, &created, &updated)
		t.RoundID, t.Nonce, t.TxNonce, t.Block = uint64(rid), uint64(nonce), uint64(txNonce), uint64(block)
		t.CreatedAt, t.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: chain items: %w", err)
	}
	return out, nil
}

// ChainRoundsOpen implements arena.ChainTxStore.
func (d *DB) ChainRoundsOpen(ctx context.Context) ([]uint64, error) {
	out, err := queryAll(ctx, d.db, `SELECT r.round_id FROM chain_txs r WHERE r.kind = 'round'
		AND NOT EXISTS (SELECT 1 FROM chain_txs x WHERE x.kind = 'done' AND x.round_id = r.round_id) ORDER BY r.round_id`, nil,
		func(sc scanner) (uint64, error) {
			var id int64
			err := sc.Scan(&id)
			return uint64(id), err
		})
	if err != nil {
		return nil, fmt.Errorf("store: rounds being mirrored: %w", err)
	}
	return out, nil
}
