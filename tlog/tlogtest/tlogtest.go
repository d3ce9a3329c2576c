// Package tlogtest helps tests of what carries the log's signed head.
package tlogtest

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena/tlog"
)

// Origin is the log origin of the checkpoints Checkpoint signs.
const Origin = "arena.test/log"

// Checkpoint publishes a checkpoint of lg as it stands, kept in memory,
// and returns its note: what an export carries as its signed head.
func Checkpoint(t testing.TB, lg *tlog.Log) []byte {
	t.Helper()
	ctx := context.Background()
	pub, err := tlog.NewPublisher(lg, Origin, &tlog.MemCheckpoints{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := pub.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
