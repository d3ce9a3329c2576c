package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// However many distinct values a client (or a bug) puts into the labels,
// the series stop growing at a constant: methods and statuses outside
// their lists count as "other", other labels keep at most MaxLabelValues
// values.
func TestLabelsBounded(t *testing.T) {
	m := New()
	series := func() int {
		fs, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range fs {
			if strings.HasPrefix(f.GetName(), "arena_") {
				n += len(f.GetMetric())
			}
		}
		return n
	}
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			v := fmt.Sprintf("RT%d-%s", i, strings.Repeat("x", 1000))
			m.HTTPRequest(v, v, 1000+i, time.Millisecond)
			m.Submission(v, false, v)
			m.RateLimited(v)
			m.JobRun(v, time.Second, nil, time.Now())
			m.JobRun(v, time.Second, errors.New("failed"), time.Now())
			m.JobTakeover(v)
			m.ModelCall(v, true, 1, 1, 1)
			m.ModelCacheLookup(v, true)
			m.OracleRun(v)
		}
	}
	flood(0, 1000)
	full := series()
	flood(1000, 3000)
	if got := series(); got != full {
		t.Errorf("2000 more hostile values grew the series from %d to %d", full, got)
	}
	// Per value at most: requests and latency (2), submissions, rate
	// limits, job runs (2), job durations, takeovers, last success, model
	// calls, tokens (2), cost, cache lookups, oracle runs; plus Other.
	if limit := 16 * (MaxLabelValues + 1); full > limit {
		t.Errorf("%d series after 1000 hostile values, want at most %d", full, limit)
	}
	if got := m.Value("arena_http_requests_total", map[string]string{"method": Other, "status": Other}); got != 3000 {
		t.Errorf("requests with a made-up method and status counted %v under other, want 3000", got)
	}
	m.HTTPRequest("GET /x", "GET", 200, time.Millisecond)
	if got := m.Value("arena_http_requests_total", map[string]string{"method": "GET", "status": "200"}); got != 1 {
		t.Errorf("a GET answered 200 counted %v, want 1", got)
	}
}
