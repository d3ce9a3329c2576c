// Package metrics keeps the Prometheus metrics of one `arena serve`
// process in a registry the process owns (not the client library's global
// default), so several servers in one test binary do not collide.
//
// Every method is safe on a nil *Metrics and then does nothing: the
// packages that report (web, jobs, llm, oracle) work the same without it.
//
// Every label is bounded, so that no client can grow the page: a label
// whose values a client sends (the HTTP method, the status) takes only
// the values of a fixed list, others counting as "other"; a label whose
// values come from the program or its configuration (routes, error codes,
// job names, agent ids, oracle statuses) keeps at most MaxLabelValues
// distinct values, should a bug ever let a client's text through.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of series one server exports at /metrics.
type Metrics struct {
	Registry *prometheus.Registry

	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	submissions    *prometheus.CounterVec
	rateLimited    *prometheus.CounterVec
	jobRuns        *prometheus.CounterVec
	jobDuration    *prometheus.HistogramVec
	jobTakeovers   *prometheus.CounterVec
	jobLastSuccess *prometheus.GaugeVec
	modelCalls     *prometheus.CounterVec
	modelTokens    *prometheus.CounterVec
	modelCost      *prometheus.CounterVec
	modelCache     *prometheus.CounterVec
	oracleRuns     *prometheus.CounterVec

	routes, kinds, codes, limits, jobs, agents, oracleStatuses labelValues
}

// Other is the value a label takes in place of one outside its bounds.
const Other = "other"

// MaxLabelValues bounds the distinct values of a label whose values come
// from the program or its configuration; later values count as Other.
const MaxLabelValues = 200

// labelValues keeps the values a label has taken, up to MaxLabelValues.
type labelValues struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

func (l *labelValues) bound(v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= MaxLabelValues {
		return Other
	}
	if l.seen == nil {
		l.seen = map[string]struct{}{}
	}
	l.seen[v] = struct{}{}
	return v
}

// methods are the HTTP methods counted by name (RFC 9110 and PATCH); a
// method is a client's free text, so any other counts as Other.
var methods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true, http.MethodOptions: true, http.MethodTrace: true}

func methodLabel(m string) string {
	if methods[m] {
		return m
	}
	return Other
}

func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return Other
	}
	return strconv.Itoa(status)
}

// New returns metrics registered in a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "arena_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route"})
	m.submissions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_submissions_total", Help: "Forecast submissions (commit, reveal, reasoning) by result and error code (\"\" when accepted).",
	}, []string{"kind", "result", "code"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_rate_limited_total", Help: "Requests refused by a rate limit or agent cap, by limit.",
	}, []string{"limit"})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_job_runs_total", Help: "Scheduled job runs finished by this process, by job and result (ok or error).",
	}, []string{"job", "result"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "arena_job_duration_seconds", Help: "Duration of scheduled job runs by job.",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10), // 10 ms … ~43 min
	}, []string{"job"})
	m.jobTakeovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_job_takeovers_total", Help: "Job periods this process took over from a claimant whose lease expired.",
	}, []string{"job"})
	m.jobLastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "arena_job_last_success_timestamp_seconds", Help: "Unix time of the last successful run of a job in this process.",
	}, []string{"job"})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_model_calls_total", Help: "Model calls that reached a provider, by agent and result (ok or error).",
	}, []string{"agent", "result"})
	m.modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_model_tokens_total", Help: "Model tokens by agent and direction (input or output).",
	}, []string{"agent", "direction"})
	m.modelCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_model_cost_usd_total", Help: "Model spending in USD (registry prices) by agent.",
	}, []string{"agent"})
	m.modelCache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_model_cache_lookups_total", Help: "Model call cache lookups by agent and result (hit: answered without a call; miss).",
	}, []string{"agent", "result"})
	m.oracleRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_oracle_runs_total", Help: "Oracle panel runs by recorded status; status=\"escalated\" counts escalations to a human.",
	}, []string{"status"})
	m.Registry.MustRegister(m.httpRequests, m.httpDuration, m.submissions, m.rateLimited,
		m.jobRuns, m.jobDuration, m.jobTakeovers, m.jobLastSuccess,
		m.modelCalls, m.modelTokens, m.modelCost, m.modelCache, m.oracleRuns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Register adds a collector (e.g. the database pool's) to the registry.
func (m *Metrics) Register(c prometheus.Collector) error {
	if m == nil {
		return nil
	}
	return m.Registry.Register(c)
}

// HTTPRequest counts one answered request. route is the matched pattern
// (a bounded set), never the raw path; method is the request's, counted
// by name only when it is a standard method.
func (m *Metrics) HTTPRequest(route, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	route = m.routes.bound(route)
	m.httpRequests.WithLabelValues(route, methodLabel(method), statusLabel(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(took.Seconds())
}

// Submission counts a submission; code is the error code of a rejection.
func (m *Metrics) Submission(kind string, accepted bool, code string) {
	if m == nil {
		return
	}
	result := "accepted"
	if !accepted {
		result = "rejected"
	}
	m.submissions.WithLabelValues(m.kinds.bound(kind), result, m.codes.bound(code)).Inc()
}

// RateLimited counts a request refused by the named limit.
func (m *Metrics) RateLimited(limit string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(m.limits.bound(limit)).Inc()
}

// JobRun counts a finished run of job.
func (m *Metrics) JobRun(job string, took time.Duration, err error, at time.Time) {
	if m == nil {
		return
	}
	job = m.jobs.bound(job)
	result := "ok"
	if err != nil {
		result = "error"
	} else {
		m.jobLastSuccess.WithLabelValues(job).Set(float64(at.UnixNano()) / 1e9)
	}
	m.jobRuns.WithLabelValues(job, result).Inc()
	m.jobDuration.WithLabelValues(job).Observe(took.Seconds())
}

// JobTakeover counts a period taken over from an expired claim.
func (m *Metrics) JobTakeover(job string) {
	if m == nil {
		return
	}
	m.jobTakeovers.WithLabelValues(m.jobs.bound(job)).Inc()
}

// ModelCall counts one model call that reached a provider (after its
// retries) with its tokens and cost in micro-dollars.
func (m *Metrics) ModelCall(agent string, ok bool, inputTokens, outputTokens, costMicros int64) {
	if m == nil {
		return
	}
	agent = m.agents.bound(agent)
	result := "ok"
	if !ok {
		result = "error"
	}
	m.modelCalls.WithLabelValues(agent, result).Inc()
	m.modelTokens.WithLabelValues(agent, "input").Add(float64(inputTokens))
	m.modelTokens.WithLabelValues(agent, "output").Add(float64(outputTokens))
	m.modelCost.WithLabelValues(agent).Add(float64(costMicros) / 1e6)
}

// ModelCacheLookup counts one lookup in the model call cache.
func (m *Metrics) ModelCacheLookup(agent string, hit bool) {
	if m == nil {
		return
	}
	result := "miss"
	if hit {
		result = "hit"
	}
	m.modelCache.WithLabelValues(m.agents.bound(agent), result).Inc()
}

// OracleRun counts one recorded oracle run by its status.
func (m *Metrics) OracleRun(status string) {
	if m == nil {
		return
	}
	m.oracleRuns.WithLabelValues(m.oracleStatuses.bound(status)).Inc()
}

// Value is the current value of the counter, gauge or histogram (its
// sample count) named name whose labels include all of labels, summed
// over the matching series: what a scrape would show, read in-process.
func (m *Metrics) Value(name string, labels map[string]string) float64 {
	if m == nil {
		return 0
	}
	families, err := m.Registry.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case s.Counter != nil:
				sum += s.GetCounter().GetValue()
			case s.Gauge != nil:
				sum += s.GetGauge().GetValue()
			case s.Histogram != nil:
				sum += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}
