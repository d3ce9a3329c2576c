package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/tlog/tlogtest"
)

// appendingForecasts appends an entry to the log when the export computes
// its leaderboard, after the first tables are read, as a round triggered
// mid-export would.
type appendingForecasts struct {
	*rounds.Service
	log      *tlog.Log
	appended bool
}

func (a *appendingForecasts) Snapshot(ctx context.Context, fn func(arena.StoreSnapshot, func(context.Context) (scoring.Board, error)) error) error {
	return a.Service.Snapshot(ctx, func(st arena.StoreSnapshot, board func(context.Context) (scoring.Board, error)) error {
		return fn(st, func(ctx context.Context) (scoring.Board, error) {
			if !a.appended {
				if err := a.log.Append(ctx, "test", map[string]int{"n": 1}); err != nil {
					return scoring.Board{}, err
				}
				a.appended = true
			}
			return board(ctx)
		})
	})
}

// Every table of an export is read from one state of the store: an entry
// appended while they are read does not show in them. A log that grew past the checkpoint before the
// export began is refused (ErrLogGrew), leaving no index that a verifier
// could take for an export's.
func TestWriteReadsOneState(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, "sqlite")
	lg := &tlog.Log{Store: db, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))}
	if err := lg.Append(ctx, "test", map[string]int{"n": 0}); err != nil {
		t.Fatal(err)
	}
	svc := &rounds.Service{Store: db}
	dir := filepath.Join(t.TempDir(), "export")
	src := &appendingForecasts{Service: svc, log: lg}
	counts, err := export.Write(ctx, export.Source{Forecast: src, Log: lg}, dir, export.Options{Checkpoint: tlogtest.Checkpoint(t, lg)})
	if err != nil || !src.appended {
		t.Fatalf("an export while the log grew: %v (appended %v)", err, src.appended)
	}
	if n, _ := db.LogSize(ctx); counts["log_entries"] != 1 || n != 2 {
		t.Fatalf("the export holds %d log entries, the log %d; want the checkpoint's 1", counts["log_entries"], n)
	}

	// The checkpoint of one entry, the log now of two.
	old := filepath.Join(t.TempDir(), "old")
	_, err = export.Write(ctx, export.Source{Forecast: svc, Log: lg}, old, export.Options{Checkpoint: tlogtest.Checkpoint(t, &tlog.Log{Store: oneEntry{db}, Key: lg.Key})})
	if arena.ErrorKind(err) != arena.ECONFLICT || !errors.Is(err, export.ErrLogGrew) {
		t.Fatalf("a checkpoint the log grew past: %v, want ECONFLICT wrapping ErrLogGrew", err)
	}
	if _, serr := os.Stat(filepath.Join(old, export.IndexFile)); !os.IsNotExist(serr) {
		t.Fatal("the refused export has an index")
	}
}

// oneEntry is a log store that shows only its first entry.
type oneEntry struct{ tlog.Store }

func (oneEntry) LogSize(context.Context) (uint64, error) { return 1, nil }
