package store

import (
	"context"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.AdmissionStore = (*DB)(nil)

// RoundAgents implements arena.AdmissionStore.
func (d *DB) RoundAgents(ctx context.Context, roundID uint64) (int, error) {
	var n int
	if err := d.r().QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM submissions WHERE round_id = ?`), int64(roundID)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: agents of round %d: %w", roundID, err)
	}
	return n, nil
}

// AgentKnown implements arena.AdmissionStore.
func (d *DB) AgentKnown(ctx context.Context, agent string) (bool, error) {
	var n int
	if err := d.r().QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM agents WHERE address = ?`), agent).Scan(&n); err != nil {
		return false, fmt.Errorf("store: agent %s: %w", agent, err)
	}
	return n > 0, nil
}

// NewAgentsSince implements arena.AdmissionStore.
func (d *DB) NewAgentsSince(ctx context.Context, t time.Time) (int, error) {
	var n int
	if err := d.r().QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM agents WHERE created_at >= ?`), t.UnixMicro()).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: new agents since %s: %w", t.Format(time.RFC3339), err)
	}
	return n, nil
}
