package demo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/demo"
	"github.com/forecast-arena/arena/web"
)

// chromium finds a headless browser, or skips (fails when CI requires one).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("ARENA_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium on PATH, and ARENA_REQUIRE_CHROMIUM=1")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// server wires the demo's parts the way `arena demo` does.
func server(p demo.Parts) http.Handler {
	return web.Build(web.Parts{Markets: p.DB, DB: p.DB, Logger: p.Logger, Forecast: p.Forecast, Trading: p.Trading}).Handler()
}

// The leaderboard page of a finished demo, rendered by a real headless
// Chromium: every agent of the JSON leaderboard appears as a table row
// with its signed alpha.
func TestLeaderboardPageInChromium(t *testing.T) {
	browser := chromium(t)
	ctx := context.Background()
	res, err := demo.Run(ctx, demo.Config{Seed: 3, Rounds: 6, Dir: t.TempDir(), Server: server})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	srv := httptest.NewServer(res.Handler)
	defer srv.Close()

	shot := filepath.Join(t.TempDir(), "leaderboard.png")
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size=1100,700", "--screenshot="+shot, "--dump-dom", srv.URL+"/")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	if len(res.Leaderboard) < 7 {
		t.Fatalf("%d leaderboard rows", len(res.Leaderboard))
	}
	// One header row per table, then one row per agent of each track.
	if got, want := strings.Count(dom, "<tr>"), 2+len(res.Leaderboard)+len(res.Trading); got != want {
		t.Errorf("page shows %d rows, want %d (forecast %d, trading %d, 2 headers)", got, want, len(res.Leaderboard), len(res.Trading))
	}
	if len(res.Trading) == 0 || !strings.Contains(dom, `id="trading"`) {
		t.Error("no trading leaderboard on the page")
	}
	for _, r := range res.Trading {
		if !strings.Contains(dom, r.Name) {
			t.Errorf("trader %s missing from the rendered page", r.Name)
		}
	}
	for _, e := range res.Leaderboard {
		if !strings.Contains(dom, e.Name) {
			t.Errorf("agent %s missing from the rendered page", e.Name)
		}
	}
	if !strings.Contains(dom, `class="pos"`) || !strings.Contains(dom, "6 rounds scored") {
		t.Error("rendered page lacks positive alphas or the round count")
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 5000 {
		t.Errorf("no screenshot rendered: %v", err)
	}
	if dst := os.Getenv("ARENA_SCREENSHOT_DIR"); dst != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(filepath.Join(dst, "leaderboard.png"), b, 0o644)
	}
}
