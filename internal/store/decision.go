package store

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena"
)

// Decision implements arena.CohortStore.
func (d *DB) Decision(ctx context.Context, id int64) (*arena.Decision, error) {
	return lookup(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+decisionColumns+` FROM decisions WHERE id = ?`), id), scanDecision, fmt.Sprintf("decision %d", id))
}
