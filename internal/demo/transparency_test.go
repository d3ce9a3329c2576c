package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/web/view"
	"github.com/forecast-arena/arena/tlog"
)

// The arena's handler publishes the log as C2SP does (the checkpoint
// under the configured origin, its verifier key, tiles) and the latest
// published export beside it; an export fetched from there verifies
// against the published verifier key, its checkpoint a prefix of the
// served one.
func TestServesCheckpointAndPublishedExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	res, _ := played(t)
	if err := res.App.PublishExport(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(res.Handler)
	defer hs.Close()
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	vkey := strings.TrimSpace(string(get("/log/vkey")))
	pub, err := res.App.Publisher()
	if err != nil {
		t.Fatal(err)
	}
	// Without a configured origin, the log is named after the deployment.
	if vkey != pub.VerifierKey() || !strings.HasPrefix(vkey, "forecast-arena/"+strings.ToLower(res.App.Rounds.Domain.Contract.Hex()[2:])+"/log+") {
		t.Fatalf("vkey %q, the publisher's %q", vkey, pub.VerifierKey())
	}
	// The methodology page says how to verify the arena with them.
	var m view.MethodologyJSON
	if err := json.Unmarshal(get("/api/v1/pages/methodology"), &m); err != nil || m.Verify == nil || m.Verify.VKey != vkey ||
		m.Verify.Command != "arena verify --url "+hs.URL+" --vkey "+vkey || m.Verify.Export != hs.URL+"/exports/latest/" {
		t.Fatalf("methodology's verify section %+v (%v)", m.Verify, err)
	}
	if html := string(get("/methodology")); !strings.Contains(html, "Verify this arena") || !strings.Contains(html, "arena verify --url "+hs.URL) {
		t.Fatal("the methodology page does not say how to verify the arena")
	}
	cp, err := tlog.OpenCheckpoint(get("/log/checkpoint"), vkey)
	if err != nil {
		t.Fatal(err)
	}
	size, err := res.App.TLog.Store.LogSize(ctx)
	if err != nil || cp.Size != size {
		t.Fatalf("checkpoint of %d entries, the log holds %d (%v)", cp.Size, size, err)
	}
	dir := t.TempDir()
	if _, err := export.Fetch(ctx, nil, hs.URL+"/exports/latest/", dir); err != nil {
		t.Fatal(err)
	}
	rep, err := export.Verify(dir, export.VerifyOptions{VKey: vkey})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checkpoint.Size != cp.Size {
		t.Fatalf("the published export's checkpoint has %d entries, the served one %d", rep.Checkpoint.Size, cp.Size)
	}
}
