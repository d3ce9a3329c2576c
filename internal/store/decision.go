package store

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena"
)

// Decision implements arena.CohortStore.
func (d *DB) Decision(ctx context.Context, id int64) (*arena.Decision, error) {
	dc, err := scanDecision(d.db.QueryRowContext(ctx, d.rebind(`SELECT `+decisionColumns+` FROM decisions WHERE id = ?`), id))
	if isNoRows(err) {
		return nil, arena.Errorf(arena.ENOTFOUND, "decision %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: load decision %d: %w", id, err)
	}
	return dc, nil
}
