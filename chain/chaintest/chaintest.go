// Package chaintest helps tests that run contracts on go-ethereum's
// simulated backend.
package chaintest

import (
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/ethclient/simulated"
)

// AdjustTime moves the simulated chain's clock on by d. The backend refuses
// while its transaction pool lists pending transactions, and the pool lets
// go of the ones a Commit has just mined only once it has processed the new
// head, which it does asynchronously: on a loaded machine a test that warps
// right after mining meets "could not adjust time on non-empty block". This
// waits for the pool to catch up, for at most five seconds.
func AdjustTime(sim *simulated.Backend, d time.Duration) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := sim.AdjustTime(d)
		if err == nil || !strings.Contains(err.Error(), "non-empty block") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
