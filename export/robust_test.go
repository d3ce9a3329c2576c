//go:build unix

package export_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
)

// A table or meta.json that is a FIFO is refused at once, without waiting
// for a writer, naming the file; a directory in a table's place too.
func TestVerifyRefusesNonRegularFiles(t *testing.T) {
	t.Parallel()
	f := played(t)
	for _, name := range []string{"scores.jsonl", "meta.json", "log_entries.jsonl"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := copyExport(t, f.base[export.JSONL])
			path := filepath.Join(dir, name)
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := export.Verify(dir, export.VerifyOptions{}); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "named pipe") {
					t.Fatalf("want a refusal naming %s, a named pipe: %v", name, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("verify blocked on a FIFO")
			}
		})
	}
	dir := copyExport(t, f.base[export.JSONL])
	os.Remove(filepath.Join(dir, "agents.jsonl"))
	os.Mkdir(filepath.Join(dir, "agents.jsonl"), 0o755)
	if _, err := export.Verify(dir, export.VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Fatalf("a directory for a table: %v", err)
	}
}

// A key named twice in meta.json, in index.json or in a log leaf is
// refused: encoding/json would keep the last value.
func TestDuplicateKeysRefused(t *testing.T) {
	t.Parallel()
	f := played(t)
	for _, tc := range []struct{ name, old, new string }{
		{"top level", `"format": "jsonl",`, `"format": "csv", "format": "jsonl",`},
		{"the log key", `"log_public_key": "`, `"log_public_key": "00", "log_public_key": "`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyExport(t, f.base[export.JSONL])
			path := filepath.Join(dir, "meta.json")
			b, _ := os.ReadFile(path)
			if !strings.Contains(string(b), tc.old) {
				t.Fatalf("meta.json has no %s", tc.old)
			}
			os.WriteFile(path, []byte(strings.Replace(string(b), tc.old, tc.new, 1)), 0o644)
			_, err := export.Verify(dir, export.VerifyOptions{})
			if !errors.Is(err, export.ErrDuplicateKey) && (err == nil || !strings.Contains(err.Error(), "names a key twice")) {
				t.Fatalf("want a refusal of the key named twice: %v", err)
			}
		})
	}
	idx := `{"files": [{"name": "meta.json", "size": 1, "size": 2, "sha256": "` + strings.Repeat("a", 64) + `"}]}`
	if _, err := export.ParseIndex([]byte(idx)); err == nil || !strings.Contains(err.Error(), "names a key twice") {
		t.Fatalf("index.json with a key twice: %v", err)
	}
}

// verify of a directory that does not exist says so, not that the export
// is tampered with; a file in its place is not a directory.
func TestVerifyMissingDirectory(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nowhere")
	if _, err := export.Verify(missing, export.VerifyOptions{}); arena.ErrorKind(err) != arena.ENOTFOUND || !strings.Contains(err.Error(), "no such directory") {
		t.Fatalf("a missing directory: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("{}"), 0o644)
	if _, err := export.Verify(file, export.VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("a file: %v", err)
	}
}

// An index listing more than the download bound, in one file or in all,
// is refused before any file is requested; one within it is fetched.
func TestFetchRefusesOversizedIndex(t *testing.T) {
	t.Parallel()
	var files atomic.Int32
	sum := strings.Repeat("0", 64)
	var index atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/index.json") {
			fmt.Fprint(w, index.Load())
			return
		}
		files.Add(1)
		http.Error(w, "not served", http.StatusTeapot)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, index string
		max         int64
		want        string
	}{
		{"one file past a table's bound", fmt.Sprintf(`{"files":[{"name":"meta.json","size":%d,"sha256":"%s"}]}`, int64(export.MaxTableBytes)+1, sum), 0, "malformed index.json"},
		{"files past the download bound", fmt.Sprintf(`{"files":[{"name":"meta.json","size":600,"sha256":"%s"},{"name":"scores.jsonl","size":600,"sha256":"%s"}]}`, sum, sum), 1000, "lists 1200 bytes of files, more than the 1000 allowed"},
		{"files past the default bound", fmt.Sprintf(`{"files":[{"name":"meta.json","size":%d,"sha256":"%s"},{"name":"a.jsonl","size":%d,"sha256":"%s"},{"name":"b.jsonl","size":%d,"sha256":"%s"},{"name":"c.jsonl","size":%d,"sha256":"%s"},{"name":"d.jsonl","size":%d,"sha256":"%s"}]}`,
			int64(export.MaxTableBytes), sum, int64(export.MaxTableBytes), sum, int64(export.MaxTableBytes), sum, int64(export.MaxTableBytes), sum, int64(export.MaxTableBytes), sum), 0, "more than the 17179869184 allowed"},
	} {
		index.Store(tc.index)
		_, err := export.Fetcher{MaxBytes: tc.max}.Fetch(context.Background(), srv.URL+"/exports/latest/", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q: %v", tc.name, tc.want, err)
		}
		if n := files.Load(); n != 0 {
			t.Errorf("%s: %d files requested before the index was refused", tc.name, n)
		}
	}
	index.Store(fmt.Sprintf(`{"files":[{"name":"meta.json","size":600,"sha256":"%s"}]}`, sum))
	if _, err := (export.Fetcher{MaxBytes: 600}).Fetch(context.Background(), srv.URL+"/x/", t.TempDir()); err == nil || files.Load() != 1 {
		t.Errorf("an index within the bound: its file was not requested (%v)", err)
	}
}

// A server that keeps each request's pace but is slower than the
// download's budget for the export's size fails with ErrTooSlow once the
// budget passes, naming the size and the budget; the budget is asked with
// the total the index lists.
func TestFetchBudget(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 64<<10)
	sum := sha256.Sum256([]byte(body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/index.json") {
			fmt.Fprintf(w, `{"files":[{"name":"meta.json","size":%d,"sha256":"%x"}]}`, len(body), sum)
			return
		}
		for i := 0; i < len(body); i += 1024 { // 1 KiB every 50 ms: 64 KiB in 3.2 s
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			w.Write([]byte(body[i : i+1024]))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	var asked int64
	f := export.Fetcher{Budget: func(total int64) time.Duration { asked = total; return 500 * time.Millisecond }}
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL+"/x/", t.TempDir())
	var slow *export.ErrTooSlow
	if !errors.As(err, &slow) || asked != int64(len(body)) || time.Since(start) > 3*time.Second ||
		!strings.Contains(err.Error(), "the export's 65536 bytes took longer than the 500ms allowed for them") {
		t.Fatalf("a download slower than its budget: %v after %s (budget asked for %d bytes)", err, time.Since(start), asked)
	}
	f.Budget = func(int64) time.Duration { return time.Minute }
	if _, err := f.Fetch(context.Background(), srv.URL+"/x/", t.TempDir()); err != nil {
		t.Fatalf("within its budget: %v", err)
	}
}
