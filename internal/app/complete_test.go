package app

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/config"
)

// New is the only setup step: no exported method of App opens, starts or
// attaches a part after it, so nothing depends on the order of calls.
func TestNoSecondSetupPhase(t *testing.T) {
	typ := reflect.TypeFor[*App]()
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		for _, prefix := range []string{"Open", "Init", "Setup", "Attach", "Start"} {
			if strings.HasPrefix(name, prefix) {
				t.Errorf("App.%s: a second setup step after New", name)
			}
		}
	}
}

// A broken model registry (ARENA_AGENTS) fails only what uses the trading
// track: New builds the rest, the forecast track and the oracle work, and
// the track's accessor, the handler that serves it and serve's jobs say
// why.
func TestBrokenRegistryFailsOnlyTrading(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "agents.json")
	writeFile(t, reg, `{"agents": [`)
	o := config.Defaults()
	o.DB, o.AgentsFile, o.NoSync, o.LogKey = "sqlite:"+filepath.Join(dir, "a.db"), reg, true, filepath.Join(dir, "log.key")
	ctx := context.Background()
	a, err := New(ctx, o, Deps{Log: LogWrite})
	if err != nil {
		t.Fatalf("New with a broken registry: %v", err)
	}
	defer a.Close()
	if _, err := a.Rounds.Names(ctx); err != nil {
		t.Errorf("forecast track: %v", err)
	}
	if _, err := a.Oracle.Flag(ctx, 1, "ambiguous"); err == nil || strings.Contains(err.Error(), reg) {
		t.Errorf("oracle flag of a missing market: %v, want its own error", err)
	}
	for what, err := range map[string]error{"Trading": second(a.Trading(ctx)), "Handler": second(a.Handler()), "Jobs": second(a.Jobs(ctx, "http://127.0.0.1:1"))} {
		if err == nil || !strings.Contains(err.Error(), "agents.json") {
			t.Errorf("%s with a broken registry: %v", what, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// An app built to read the log makes, reads and binds no key, and refuses
// what signs or publishes (serve's jobs, Serve, exports) rather than run
// without the log's routes or export jobs; its handler serves the API
// without the log's.
func TestLogReadSignsNothing(t *testing.T) {
	dir := t.TempDir()
	o := config.Defaults()
	o.DB, o.NoSync, o.LogKey = "sqlite:"+filepath.Join(dir, "a.db"), true, filepath.Join(dir, "log.key")
	ctx := context.Background()
	a, err := New(ctx, o, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := os.Stat(o.LogKey); !os.IsNotExist(err) {
		t.Fatalf("log key made by a read-only app: %v", err)
	}
	if n, err := a.TLog.Size(ctx); err != nil || n != 0 {
		t.Fatalf("log size %d, %v", n, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for what, err := range map[string]error{"Publisher": second(a.Publisher()), "Jobs": second(a.Jobs(ctx, "http://127.0.0.1:1")),
		"Serve": a.Serve(ctx, ln, nil), "PublishExport": a.PublishExport(ctx)} {
		if !errors.Is(err, errReadOnlyLog) {
			t.Errorf("%s on a read-only log: %v", what, err)
		}
	}
	h, err := a.Handler()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/healthz": 200, "/log/vkey": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
		}
	}
}
