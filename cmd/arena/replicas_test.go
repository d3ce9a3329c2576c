package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// Two servers of one arena on one PostgreSQL database, behind a balancer
// that alternates between them: `arena verify --url` verifies every round
// scored so far through either, and after the log grows on one server
// (a profile signed) and it publishes, the export verified is the new
// checkpoint's, whichever server answers each request.
func TestVerifyURLTwoReplicas(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("plays a demo on PostgreSQL")
	}
	dbURL := storetest.URL(t, "postgres") // skips without ARENA_TEST_POSTGRES_URL
	ctx := context.Background()
	dir := t.TempDir()
	res, err := demo.Run(ctx, demo.Config{Seed: 3, Rounds: 2, Dir: dir, DB: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	o := config.Defaults()
	o.DB, o.DataDir, o.RateIPPerMin, o.RateAgentPerMin = dbURL, dir, 0, 0
	b, err := app.New(ctx, o, app.Deps{Log: app.LogWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	hb, err := b.Handler()
	if err != nil {
		t.Fatal(err)
	}
	servers := []http.Handler{res.Handler, hb}
	var n atomic.Int64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servers[n.Add(1)%2].ServeHTTP(w, r)
	}))
	defer lb.Close()
	pub, err := b.Publisher()
	if err != nil {
		t.Fatal(err)
	}
	vkey := pub.VerifierKey()
	verify := func(t *testing.T) (size uint64, out string) {
		t.Helper()
		out, _, err := cli(t, nil, "verify", "--url", lb.URL, "--vkey", vkey)
		if err != nil || !strings.Contains(out, "OK:") || strings.Contains(out, "note: no export published for the current checkpoint") {
			t.Fatalf("verify --url through the alternating balancer: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`checkpoint: log \S+ at (\d+) entries`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no checkpoint in:\n%s", out)
		}
		fmt.Sscan(m[1], &size)
		return size, out
	}
	// Server A publishes; both serve its export.
	if err := res.App.PublishExport(ctx); err != nil {
		t.Fatal(err)
	}
	logSize, err := res.App.TLog.Store.LogSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rounds, err := res.DB.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		t.Fatal(err)
	}
	size, out := verify(t)
	if size != logSize || !strings.Contains(out, fmt.Sprintf("rounds %d,", len(rounds))) {
		t.Fatalf("the export verified covers %d of %d entries, want every one and %d rounds:\n%s", size, logSize, len(rounds), out)
	}
	// The log grows on server B, which publishes.
	key, err := forecast.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p := forecast.ProfileFields{Name: "Replica B's agent"}
	msg := forecast.Profile{Agent: key.Address(), ProfileFields: p, Version: 1, Deadline: uint64(time.Now().Add(time.Hour).Unix())}
	sig, err := key.SignProfile(b.Rounds.Domain, msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Rounds.SetProfile(ctx, key.Address().Hex(), forecast.ProfileRequest{ProfileFields: p, Version: 1, Deadline: msg.Deadline,
		Signature: forecast.EncodeSignature(sig)}); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishExport(ctx); err != nil {
		t.Fatal(err)
	}
	grown, out := verify(t)
	if grown != logSize+1 || !strings.Contains(out, "live: the arena's current checkpoint ("+fmt.Sprint(grown)+" entries) extends the export's ("+fmt.Sprint(grown)+")") {
		t.Fatalf("after the profile on server B: the export verified covers %d entries, want %d:\n%s", grown, logSize+1, out)
	}
	// Both exports stay downloadable by size, from either server.
	for i := range 2 {
		for _, s := range []uint64{size, grown} {
			resp, err := http.Get(fmt.Sprintf("%s/exports/%d/meta.json", lb.URL, s))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Export-Size") != fmt.Sprint(s) {
				t.Fatalf("request %d: GET /exports/%d/meta.json: %d, X-Export-Size %q", i, s, resp.StatusCode, resp.Header.Get("X-Export-Size"))
			}
		}
	}
}
