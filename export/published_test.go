package export_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forecast-arena/arena/export"
)

// An export published into the database serves, from any server of the
// arena, the export Write makes of the same checkpoint: fetched from
// /exports/latest/ (its files then from /exports/<size>/) and from
// /exports/<size>/, it verifies under the log's verifier key, its
// checkpoint the one published. Publishing it again, from this server or
// another, stores nothing; sizes never published are 404.
func TestPublishedExportServedAndVerified(t *testing.T) {
	t.Parallel()
	f := played(t)
	ctx := context.Background()
	note := mustCheckpoint(t, f)
	p := &export.Publisher{Store: f.res.DB}
	st, err := p.Publish(ctx, f.source(), export.Note(note))
	if err != nil || !st.Stored || st.Parts == 0 || st.NewBytes < st.Bytes || st.NewParts < st.Parts { // the first stores every part, and the nodes listing them
		t.Fatalf("publish: %+v %v", st, err)
	}
	// Two servers racing on the same checkpoint: neither stores it again.
	var wg sync.WaitGroup
	for _, pp := range []*export.Publisher{p, {Store: f.res.DB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := pp.Publish(ctx, f.source(), export.Note(note)); err != nil || st.Stored {
				t.Errorf("publishing the checkpoint again: %+v %v", st, err)
			}
		}()
	}
	wg.Wait()
	var paths []string
	var mu sync.Mutex
	h := export.StoreHandler(f.res.DB)
	srv := httptest.NewServer(http.StripPrefix("/exports", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		h.ServeHTTP(w, r)
	})))
	defer srv.Close()
	size := strings.Split(tlogText(note), "\n")[1]
	for _, url := range []string{srv.URL + "/exports/latest/", srv.URL + "/exports/" + size + "/"} {
		dir := t.TempDir()
		if _, err := export.Fetch(ctx, nil, url, dir); err != nil {
			t.Fatalf("fetch %s: %v", url, err)
		}
		rep, err := export.Verify(dir, export.VerifyOptions{VKey: f.vkey})
		if err != nil {
			t.Fatalf("verify the export fetched from %s: %v", url, err)
		}
		if rep.Checkpoint == nil || rep.Checkpoint.Size == 0 || rep.Rounds == 0 || rep.Scores == 0 {
			t.Fatalf("the export fetched from %s: %+v", url, rep)
		}
		// The same bytes as the file copy made from the parts.
		mirror := filepath.Join(t.TempDir(), "mirror")
		_, m, err := f.res.DB.ExportManifest(ctx, rep.Checkpoint.Size, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := export.Mirror(ctx, f.res.DB, m, mirror); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"meta.json", "scores.jsonl", "log_entries.jsonl", export.CheckpointFile} {
			a, _ := os.ReadFile(filepath.Join(dir, name))
			b, _ := os.ReadFile(filepath.Join(mirror, name))
			if len(a) == 0 || string(a) != string(b) {
				t.Fatalf("%s: %d bytes fetched, %d in the mirror", name, len(a), len(b))
			}
		}
	}
	// After the latest index, every file came from the export of its size.
	for _, p := range paths {
		if strings.HasPrefix(p, "/latest/") && p != "/latest/index.json" {
			t.Errorf("fetched %s: a file of the latest export by the moving name", p)
		}
	}
	for _, path := range []string{"/exports/999999/index.json", "/exports/0" + size + "/index.json", "/exports/latest/nothing.jsonl", "/exports/latest/../meta.json", "/exports/x/index.json"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
	}
}

// tlogText is a note's text.
func tlogText(n []byte) string { return string(n[:strings.Index(string(n), "\n\n")+1]) }
