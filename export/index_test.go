package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/export"
)

// serveExport serves dir as an arena serves its latest export.
func serveExport(t *testing.T, dir string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/exports/latest/", http.StripPrefix("/exports/latest", export.Handler(dir)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/exports/latest/"
}

// An export served by Handler is fetched whole by Fetch, every file
// checked against the index, and verifies; the handler serves the files
// the index lists and nothing else, read-only; a file changed after the
// index was written, or a server without an export, fails the fetch.
func TestHandlerFetch(t *testing.T) {
	f := played(t)
	ctx := context.Background()
	src := copyExport(t, f.checkpointed)
	url := serveExport(t, src)

	dir := t.TempDir()
	idx, err := export.Fetch(ctx, nil, url, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Files) != len(export.Specs)+2 { // the tables, meta.json and the checkpoint
		t.Fatalf("index lists %d files: %+v", len(idx.Files), idx.Files)
	}
	for _, e := range idx.Files {
		want, _ := os.ReadFile(filepath.Join(src, e.Name))
		got, err := os.ReadFile(filepath.Join(dir, e.Name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s fetched differs: %v", e.Name, err)
		}
	}
	if _, err := export.Verify(dir, export.VerifyOptions{VKey: f.vkey}); err != nil {
		t.Fatalf("the fetched export: %v", err)
	}

	get := func(method, path string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for path, want := range map[string]int{
		"meta.json":         http.StatusOK,
		"checkpoint":        http.StatusOK,
		"index.json":        http.StatusOK,
		"arena.db":          http.StatusNotFound,
		"..%2fmeta.json":    http.StatusNotFound,
		"../../etc/passwd":  http.StatusNotFound,
		"":                  http.StatusNotFound,
		"scores.csv":        http.StatusNotFound, // not in a JSON Lines export
		"meta.json/":        http.StatusNotFound,
		"%2e%2e/checkpoint": http.StatusNotFound,
	} {
		if resp := get(http.MethodGet, path); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if resp := get(http.MethodPost, "meta.json"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	resp := get(http.MethodGet, "checkpoint")
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("checkpoint Content-Type %q", ct)
	}
	if resp := get(http.MethodGet, "checkpoint", "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != http.StatusNotModified {
		t.Errorf("GET with the ETag: %d, want 304", resp.StatusCode)
	}

	// A file replaced after the index was written: the fetch fails,
	// naming it.
	if err := os.WriteFile(filepath.Join(src, "scores.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export.Fetch(ctx, nil, url, t.TempDir()); err == nil || !strings.Contains(err.Error(), "scores.jsonl") || !strings.Contains(err.Error(), "fetch again") {
		t.Fatalf("fetch of a changed file: %v", err)
	}
	// No export yet.
	if _, err := export.Fetch(ctx, nil, serveExport(t, t.TempDir()), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no export published yet") {
		t.Fatalf("fetch without an export: %v", err)
	}
}

const goodIndex = `{"files":[{"name":"meta.json","size":10,"sha256":"` + zeros + `"}]}`
const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// ParseIndex refuses an index that could name another path, repeats a
// file, or misstates a size or digest.
func TestParseIndex(t *testing.T) {
	if _, err := export.ParseIndex([]byte(goodIndex)); err != nil {
		t.Fatal(err)
	}
	entry := func(name string, size int, sum string) string {
		b, _ := json.Marshal(export.IndexEntry{Name: name, Size: int64(size), SHA256: sum})
		return string(b)
	}
	meta := entry("meta.json", 1, zeros)
	for name, bad := range map[string]string{
		"a path in a file name":   `{"files":[` + meta + `,` + entry("../meta.json", 1, zeros) + `]}`,
		"an absolute file name":   `{"files":[` + meta + `,` + entry("/etc/passwd", 1, zeros) + `]}`,
		"a file listed twice":     `{"files":[` + meta + `,` + meta + `]}`,
		"no meta.json":            `{"files":[` + entry("scores.jsonl", 1, zeros) + `]}`,
		"the index listed":        `{"files":[` + meta + `,` + entry("index.json", 1, zeros) + `]}`,
		"a negative size":         `{"files":[` + entry("meta.json", -1, zeros) + `]}`,
		"a digest in capitals":    `{"files":[` + entry("meta.json", 1, strings.Repeat("A", 64)) + `]}`,
		"a digest too short":      `{"files":[` + entry("meta.json", 1, "00") + `]}`,
		"an unknown field":        `{"files":[` + meta + `],"signature":"x"}`,
		"data after the object":   goodIndex + `{}`,
		"not JSON":                `files: meta.json`,
		"more than 64 files":      `{"files":[` + meta + strings.Repeat(`,`+entry("x", 1, zeros), 64) + `]}`,
		"a file name in capitals": `{"files":[` + meta + `,` + entry("Scores.jsonl", 1, zeros) + `]}`,
	} {
		if _, err := export.ParseIndex([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Fuzzed indexes: never a panic; what parses encodes and parses back to
// the same index.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(goodIndex))
	f.Add([]byte(`{"files":[{"name":"meta.json","size":1,"sha256":"` + zeros + `"},{"name":"checkpoint","size":0,"sha256":"` + zeros + `"}]}`))
	f.Add([]byte(`{"files":[{"name":"../meta.json","size":1,"sha256":"` + zeros + `"}]}`))
	f.Add([]byte(`{"files":[{"name":"meta.json","size":1,"size":2,"sha256":"` + zeros + `"}]}`))
	f.Add([]byte(`{"files":[],"files":[{"name":"meta.json","size":1,"sha256":"` + zeros + `"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := export.ParseIndex(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(idx)
		if err != nil {
			t.Fatal(err)
		}
		idx2, err := export.ParseIndex(again)
		if err != nil || !reflect.DeepEqual(idx, idx2) {
			t.Fatalf("%s parsed to %+v, which encodes to %s and parses to %+v, %v", b, idx, again, idx2, err)
		}
		for _, e := range idx.Files {
			if filepath.Base(e.Name) != e.Name || strings.HasPrefix(e.Name, ".") {
				t.Fatalf("a file name that is a path: %q", e.Name)
			}
		}
	})
}
