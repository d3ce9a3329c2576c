package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
)

// toServer sends every request to srv, whatever its URL: the registry's
// base URL (part of the cache key) stays fixed while the server's port
// changes.
type toServer struct{ base *url.URL }

func (s toServer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = s.base.Scheme, s.base.Host, s.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// forecasters runs agent "m" of a fixed registry against srv.
func forecasters(t *testing.T, srv *llmtest.Server) *Forecasters {
	t.Helper()
	reg, err := llm.ParseRegistry(strings.NewReader(`{"agents":[{"id":"m","provider":"local","model":"m","base_url":"http://llm-cache-v1.invalid/v1",
		"input_usd_per_mtok":1,"output_usd_per_mtok":2,"max_tokens":500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	f, skipped := NewForecasters(reg, llm.EnvLookup(nil), 0, llm.WithHTTPClient(&http.Client{Transport: toServer{u}}),
		llm.WithLogger(slog.New(slog.DiscardHandler)), llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 1}))
	if len(skipped) != 0 {
		t.Fatal(skipped)
	}
	return f
}

// testdata/llm-cache-v1 was written by the code before the chain (one
// cache per agent and round) for roundData's round: the chain reads it
// as it is and asks the model nothing.
func TestForecastersReadOldCache(t *testing.T) {
	task, _ := roundData(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/llm-cache-v1")); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t) // nothing scripted: a request would fail
	f := forecasters(t, srv)
	f.Cache = llm.DirStore{Dir: dir}
	tr, err := f.Forecast(context.Background(), "m", task)
	if err != nil || fmt.Sprint(tr.Predictions) != "[6100 4200 5300]" {
		t.Fatalf("%v %+v", err, tr)
	}
	if n := len(srv.Requests("")); n != 0 || tr.Calls != 0 || tr.CachedCalls != 2 || f.Meter.Run().CachedCalls != 2 {
		t.Errorf("%d requests, %d calls, %d cached; meter %+v", n, tr.Calls, tr.CachedCalls, f.Meter.Run())
	}
}

// An agent's chain, and so its cache, is built once and serves every
// round; each round's calls are accounted under that round.
func TestForecastersOneChainPerAgent(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Script("m", tools(call(ToolDetails, `{"index":0}`)), tools(call(ToolSubmit, `{"predictions":[1,2,3]}`)))
	f := forecasters(t, srv)
	f.Cache = &llmtest.MemStore{}
	for _, round := range []string{"1", "2"} {
		task.Round = round
		if tr, err := f.Forecast(context.Background(), "m", task); err != nil || !tr.Submitted() {
			t.Fatalf("round %s: %v %+v", round, err, tr)
		}
	}
	c := f.chain("m")
	if len(f.chains) != 1 || c.Cache() == nil {
		t.Fatalf("%d chains", len(f.chains))
	}
	if h, m := c.Cache().Stats(); h != 2 || m != 2 || len(srv.Requests("m")) != 2 {
		t.Errorf("cache %d hits %d misses, %d requests; want 2, 2, 2", h, m, len(srv.Requests("m")))
	}
	if r1, r2 := f.Meter.Round("m", "1"), f.Meter.Round("m", "2"); r1.Calls != 2 || r1.CachedCalls != 0 || r2.Calls != 0 || r2.CachedCalls != 2 {
		t.Errorf("round 1 %+v, round 2 %+v", r1, r2)
	}
}
