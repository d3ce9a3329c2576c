package stats

import "context"

// meter checks a context at the first work and then every so much work,
// so that a long computation stops soon after its context ends, at a
// cost too small to measure: a unit of work is a row or an observation
// visited, some nanoseconds, and a check comes every checkEvery units
// (well under a millisecond).
type meter struct {
	ctx  context.Context
	left int
}

const checkEvery = 1 << 16

func newMeter(ctx context.Context) *meter { return &meter{ctx: ctx} }

// add counts n units of work, and returns the context's error when it
// has ended by a check.
func (m *meter) add(n int) error {
	if m.left -= n; m.left > 0 {
		return nil
	}
	m.left = checkEvery
	return m.ctx.Err()
}
