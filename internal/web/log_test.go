package web_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

// The log API serves proofs that verify against the log's roots, and no
// signed head of its own: the checkpoint under /log/ is the only one.
func TestLogAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
		if err != nil {
			t.Fatal(err)
		}
		lg := &tlog.Log{Store: db, Key: key}
		for i := range 5 {
			if err := lg.Append(ctx, tlog.KindScore, i); err != nil {
				t.Fatal(err)
			}
		}
		oldRoot, err := lg.RootAt(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := lg.Append(ctx, tlog.KindScore, 10+i); err != nil {
				t.Fatal(err)
			}
		}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Log: lg}).Handler()
		get := func(path string, want int, v any) {
			t.Helper()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != want {
				t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
			if v != nil {
				if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
					t.Fatal(err)
				}
			}
		}
		root, err := lg.RootAt(ctx, 8)
		if err != nil {
			t.Fatal(err)
		}
		var entries struct{ Entries []web.LogEntryJSON }
		get("/api/v1/log/entries?start=0&end=8", http.StatusOK, &entries)
		var incl struct{ Proof []string }
		get("/api/v1/log/proof/inclusion?index=6&tree_size=8", http.StatusOK, &incl)
		if err := tlog.VerifyInclusion(6, 8, tlog.LeafHash(entries.Entries[6].Leaf), unhex(t, incl.Proof), root); err != nil {
			t.Fatal(err)
		}
		var cons struct{ Proof []string }
		get("/api/v1/log/proof/consistency?first=5&second=8", http.StatusOK, &cons)
		if err := tlog.VerifyConsistency(5, 8, unhex(t, cons.Proof), oldRoot, root); err != nil {
			t.Fatal(err)
		}
		for _, retired := range []string{"/api/v1/log/sth", "/api/v1/log/sths"} {
			get(retired, http.StatusNotFound, nil)
		}
		// The OpenAPI document lists the log routes.
		var doc struct {
			Paths map[string]any `json:"paths"`
		}
		get("/api/v1/openapi.json", http.StatusOK, &doc)
		for _, p := range []string{"/api/v1/log/entries", "/api/v1/log/proof/inclusion", "/api/v1/log/proof/consistency"} {
			if doc.Paths[p] == nil {
				t.Errorf("OpenAPI misses %s", p)
			}
		}
		get("/api/v1/log/proof/inclusion?index=8&tree_size=8", http.StatusBadRequest, nil)
		get("/api/v1/log/proof/consistency?first=5&second=9", http.StatusBadRequest, nil)
		get("/api/v1/log/proof/inclusion?index=x&tree_size=8", http.StatusBadRequest, nil)
		get("/api/v1/log/entries?start=0&end=5000", http.StatusBadRequest, nil)
	})
}

func unhex(t *testing.T, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// A round's commits and reveals are in the log at once, but the log API
// shows their leaves only after the round's outcomes are triggered; until
// then it gives the leaf hash, which still proves inclusion.
func TestLogSealsSubmissionsUntilTrigger(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
		if err != nil {
			t.Fatal(err)
		}
		lg := &tlog.Log{Store: db, Key: key}
		m := storetest.Binary("sealed", 1)
		if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		r := &arena.Round{CommitDeadline: t0, RevealStart: t0.Add(time.Hour), RevealDeadline: t0.Add(2 * time.Hour), CreatedAt: t0,
			Markets: []arena.RoundMarket{{MarketID: m.ID}}}
		if err := db.CreateRound(ctx, r); err != nil {
			t.Fatal(err)
		}
		reveal := forecast.RevealEntry{RoundID: r.ID, Agent: "0xabc", Predictions: []uint16{7321}, Salt: "0x5a17"}
		for _, a := range []struct {
			kind string
			v    any
		}{{tlog.KindCommit, forecast.CommitEntry{RoundID: r.ID, Agent: "0xabc"}}, {tlog.KindReveal, reveal}, {tlog.KindScore, 1}} {
			if err := lg.Append(ctx, a.kind, a.v); err != nil {
				t.Fatal(err)
			}
		}
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}, Log: lg})
		get := func() ([]web.LogEntryJSON, string) {
			t.Helper()
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/log/entries?start=0&end=3", nil))
			var out struct{ Entries []web.LogEntryJSON }
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out.Entries) != 3 {
				t.Fatalf("entries: %d %s", rec.Code, rec.Body)
			}
			return out.Entries, rec.Body.String()
		}
		es, body := get()
		if !es[0].Sealed || !es[1].Sealed || es[2].Sealed || strings.Contains(body, "7321") || strings.Contains(body, "5a17") {
			t.Fatalf("before the trigger: %s", body)
		}
		if err := db.SaveRoundResult(ctx, r.ID, []int8{1}, nil, nil, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		es, body = get()
		if es[1].Sealed || !strings.Contains(body, "7321") || hex.EncodeToString(tlog.LeafHash(es[1].Leaf)) != es[1].LeafHash {
			t.Fatalf("after the trigger: %s", body)
		}
	})
}
