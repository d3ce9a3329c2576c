package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/tlog/tlogtest"
)

// appendingForecasts appends an entry to the log when the export first
// reads the track's tables, as a round triggered mid-export would.
type appendingForecasts struct {
	*rounds.Service
	log  *tlog.Log
	once sync.Once
	err  error
}

func (a *appendingForecasts) ForecastStore() arena.ForecastStore {
	a.once.Do(func() { a.err = a.log.Append(context.Background(), "test", map[string]int{"n": 1}) })
	return a.Service.ForecastStore()
}

// An entry appended while the tables are read may show in them though the
// checkpoint does not cover it: the export is refused (ErrLogGrew) and
// has no index, so no verifier takes it for one; without the append it is
// written.
func TestWriteRefusesALogThatGrewMidExport(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, "sqlite")
	lg := &tlog.Log{Store: db, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))}
	if err := lg.Append(ctx, "test", map[string]int{"n": 0}); err != nil {
		t.Fatal(err)
	}
	svc := &rounds.Service{Store: db}
	dir := filepath.Join(t.TempDir(), "export")
	src := &appendingForecasts{Service: svc, log: lg}
	_, err := export.Write(ctx, export.Source{Forecast: src, Log: lg}, dir, export.Options{Checkpoint: tlogtest.Checkpoint(t, lg)})
	if src.err != nil {
		t.Fatal(src.err)
	}
	if arena.ErrorKind(err) != arena.ECONFLICT || !errors.Is(err, export.ErrLogGrew) {
		t.Fatalf("a log that grew mid-export: %v, want ECONFLICT wrapping ErrLogGrew", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, export.IndexFile)); !os.IsNotExist(serr) {
		t.Fatal("the refused export has an index")
	}
	if _, err := export.Write(ctx, export.Source{Forecast: svc, Log: lg}, dir, export.Options{Checkpoint: tlogtest.Checkpoint(t, lg)}); err != nil {
		t.Fatalf("the export of the checkpoint of the grown log: %v", err)
	}
}
