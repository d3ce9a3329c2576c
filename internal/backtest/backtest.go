// Package backtest runs the forecast track's LLM agents on imported
// historical questions (ForecastBench): rounds cut from each question set,
// the freeze value as the benchmark price, tools that answer only as of
// each question's freeze time, and a contamination guard by training
// cutoff. Results are scored by the same score code as live rounds and
// kept as the separate "backtest" track.
package backtest

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/stats"
)

// DefaultK is the number of questions per backtest round.
const DefaultK = 7

// Store is what a backtest reads and writes.
type Store interface {
	arena.MarketStore
	arena.BacktestStore
}

// Question is one historical market question of a round.
type Question struct {
	Market *arena.Market
	Due    time.Time // forecast due date of its question set
	AsOf   time.Time // freeze time: nothing later reaches the agent
}

// Round is K questions of one question set, in SourceID order.
type Round struct {
	Key       string // "<due date>#<n>", n from 1
	Due       time.Time
	Questions []Question
}

// Plan is the rounds of a backtest and the questions left over.
type Plan struct {
	Rounds   []Round
	LeftOver int
}

// Questions counts the questions in rounds.
func (p *Plan) Questions() int {
	n := 0
	for _, r := range p.Rounds {
		n += len(r.Questions)
	}
	return n
}

// DueDate reads the forecast due date that starts a ForecastBench SourceID.
func DueDate(sourceID string) (time.Time, error) {
	d, _, _ := strings.Cut(sourceID, ":")
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return t, fmt.Errorf("backtest: source id %q does not start with a due date", sourceID)
	}
	return t, nil
}

// Cut builds the rounds: the market-source questions of each question set
// that resolved to Yes or No (due date within [from, to] when set), in
// SourceID order (also each question's index within its round), cut into
// rounds of exactly k; a set's last questions that do not fill a round form
// none and are counted in LeftOver. A plan without a round is an error
// that says why: a backtest of nothing is a mistake, not a result.
func Cut(ms []*arena.Market, k int, from, to time.Time) (*Plan, error) {
	return CutWith(ms, k, from, to, nil)
}

// CutWith is Cut where a question set due on a date of human has human
// forecasts: its questions are then exactly the items the humans
// forecast (human[due], by SourceID) that resolved Yes or No, market and
// dataset alike, so that models and humans are scored on the same items.
func CutWith(ms []*arena.Market, k int, from, to time.Time, human map[time.Time]map[string]bool) (*Plan, error) {
	if k < 1 {
		return nil, arena.Errorf(arena.EINVALID, "round size %d: want ≥ 1", k)
	}
	sets := map[time.Time][]Question{}
	var resolved int
	var first, last time.Time
	for _, m := range ms {
		if m.Source != arena.SourceForecastBench || (m.Resolution != arena.Yes && m.Resolution != arena.No) {
			continue
		}
		due, err := DueDate(m.SourceID)
		if err != nil {
			return nil, err
		}
		if items, ok := human[due]; ok {
			if !items[m.SourceID] {
				continue
			}
		} else if m.Kind != arena.KindMarket {
			continue
		}
		if resolved++; first.IsZero() || due.Before(first) {
			first = due
		}
		if due.After(last) {
			last = due
		}
		if (!from.IsZero() && due.Before(from)) || (!to.IsZero() && due.After(to)) {
			continue
		}
		asOf := m.FreezeTime
		if asOf.IsZero() {
			asOf = due
		}
		sets[due] = append(sets[due], Question{Market: m, Due: due, AsOf: asOf})
	}
	dues := make([]time.Time, 0, len(sets))
	for d := range sets {
		dues = append(dues, d)
	}
	sort.Slice(dues, func(i, j int) bool { return dues[i].Before(dues[j]) })
	p := &Plan{}
	for _, d := range dues {
		qs := sets[d]
		sort.Slice(qs, func(i, j int) bool { return qs[i].Market.SourceID < qs[j].Market.SourceID })
		n := len(qs) / k
		for i := 0; i < n; i++ {
			p.Rounds = append(p.Rounds, Round{Key: fmt.Sprintf("%s#%d", d.Format(time.DateOnly), i+1), Due: d, Questions: qs[i*k : (i+1)*k]})
		}
		p.LeftOver += len(qs) - n*k
	}
	if len(p.Rounds) > 0 {
		return p, nil
	}
	switch {
	case resolved == 0:
		return nil, arena.Errorf(arena.EINVALID, "backtest: the store holds no resolved ForecastBench market question (import question and resolution sets with 'arena import forecastbench')")
	case len(sets) == 0:
		return nil, arena.Errorf(arena.EINVALID, "backtest: none of the %d resolved questions is due %s (their due dates run from %s to %s)",
			resolved, dateRange(from, to), first.Format(time.DateOnly), last.Format(time.DateOnly))
	}
	return nil, arena.Errorf(arena.EINVALID, "backtest: no question set due %s has %d resolved questions to fill a round (%d in all): lower the round size",
		dateRange(from, to), k, p.LeftOver)
}

// dateRange describes a due-date filter; a zero bound is open.
func dateRange(from, to time.Time) string {
	switch {
	case from.IsZero() && to.IsZero():
		return "at any date"
	case to.IsZero():
		return "on or after " + from.Format(time.DateOnly)
	case from.IsZero():
		return "on or before " + to.Format(time.DateOnly)
	}
	return "from " + from.Format(time.DateOnly) + " to " + to.Format(time.DateOnly)
}

// Cutoff is the training cutoff the guard applies to an agent: a model's
// own; for an ensemble the latest of its members' (none if a member has
// none). ok is false when there is none.
func Cutoff(reg *llm.Registry, spec llm.ModelSpec) (time.Time, bool) {
	if !spec.IsEnsemble() {
		return spec.TrainingCutoff.Time, !spec.TrainingCutoff.IsZero()
	}
	var c time.Time
	for _, id := range spec.Members {
		m, ok := reg.Agent(id)
		if !ok || m.TrainingCutoff.IsZero() {
			return time.Time{}, false
		}
		if m.TrainingCutoff.After(c) {
			c = m.TrainingCutoff.Time
		}
	}
	return c, true
}

// Allowed reports whether the guard lets an agent with the given cutoff
// forecast a question set due on due: only one the model cannot have seen
// as of its cutoff (agent.AsOf), that is strictly after it.
func Allowed(cutoff time.Time, hasCutoff bool, due time.Time) bool {
	return hasCutoff && !(agent.AsOf{Time: cutoff}).Sees(due)
}

// AgentResult is one agent's line of the report.
type AgentResult struct {
	Agent            string   `json:"agent"`
	Forecasts        int      `json:"forecasts"`          // questions forecast
	ExcludedByCutoff int      `json:"excluded_by_cutoff"` // questions the guard withheld
	Failures         int      `json:"failures"`           // rounds with no valid forecast
	Brier            *float64 `json:"brier"`
	Alpha            *float64 `json:"alpha"`
	CostUSD          float64  `json:"cost_usd"`
	Calls            int64    `json:"calls"`
	CachedCalls      int64    `json:"cached_calls"`
	// BilledUSD is what the provider reported charging (OpenRouter's
	// usage.cost) over the BilledCalls that reported it, beside the
	// price-table estimate CostUSD.
	BilledUSD   float64 `json:"billed_usd"`
	BilledCalls int64   `json:"billed_calls"`
	// Notes say why an agent forecast nothing (no cutoff, skipped, …).
	Notes []string `json:"-"`
}

// Cost is the run's totals.
type Cost struct {
	USD         float64 `json:"usd"`
	Calls       int64   `json:"calls"`
	CachedCalls int64   `json:"cached_calls"`
	BilledUSD   float64 `json:"billed_usd"`
	BilledCalls int64   `json:"billed_calls"`
}

// Report is the backtest's result (`arena backtest --format json`).
type Report struct {
	Rounds    int           `json:"rounds"`
	Questions int           `json:"questions"`
	LeftOver  int           `json:"left_over"`
	Agents    []AgentResult `json:"agents"`
	Cost      Cost          `json:"cost"`
	// Rows are the scored forecasts, in the `arena score` input format.
	Rows []stats.Row `json:"-"`
	// Stops are the calls refused by a budget cap.
	Stops []llm.BudgetError `json:"-"`
	// Board puts the models beside the human groups of the rounds that
	// have human forecasts (see HumanBoard); nil without any.
	Board []stats.BoardRow `json:"board,omitempty"`
}

// Runner runs a backtest.
type Runner struct {
	Store   Store
	Agents  *agent.Forecasters
	Skipped []llm.Skipped // agents that cannot run, reported as such
	Workers int           // concurrent (agent, round) forecasts; default 4
	// Search, when set, offers searchWeb, showing only sources dated at or
	// before the round's earliest freeze time.
	Search arena.Retriever
	Now    func() time.Time
	Logger *slog.Logger
	// Progress, when set, is told after each (agent, round) forecast how
	// many of the run's total are done.
	Progress func(done, total int)
}

type job struct {
	spec  llm.ModelSpec
	round *Round
}

// Run forecasts every allowed (agent, round) of the plan, stores the
// forecasts as the backtest track and scores them.
func (r *Runner) Run(ctx context.Context, plan *Plan) (*Report, error) {
	rep := &Report{Rounds: len(plan.Rounds), Questions: plan.Questions(), LeftOver: plan.LeftOver}
	jobs, res := r.planJobs(plan)
	if err := r.forecastAll(ctx, jobs, res); err != nil {
		return nil, err
	}
	// Score this run's forecasts exactly as `arena score` would.
	rows, err := r.rows(ctx, plan)
	if err != nil {
		return nil, err
	}
	rep.Rows = rows
	if err := scoreInto(ctx, rows, res); err != nil {
		return nil, err
	}
	r.addCosts(rep, res)
	return rep, nil
}

// planJobs lists the (agent, round) forecasts the run makes, models
// before ensembles, and starts each agent's result with why it forecasts
// nothing (skipped, no cutoff) and how many questions the contamination
// guard withholds from it.
func (r *Runner) planJobs(plan *Plan) ([]job, map[string]*AgentResult) {
	reg := r.Agents.Registry
	res := map[string]*AgentResult{}
	skipped := map[string]string{}
	for _, s := range r.Skipped {
		skipped[s.ID] = s.Reason
	}
	var jobs []job
	for _, spec := range reg.Agents {
		ar := &AgentResult{Agent: spec.ID}
		res[spec.ID] = ar
		if reason, ok := skipped[spec.ID]; ok {
			ar.Notes = append(ar.Notes, "skipped: "+reason)
			continue
		}
		cutoff, has := Cutoff(reg, spec)
		if !has {
			ar.Notes = append(ar.Notes, "no training_cutoff: every question withheld by the contamination guard")
		}
		for i := range plan.Rounds {
			rd := &plan.Rounds[i]
			if !Allowed(cutoff, has, rd.Due) {
				ar.ExcludedByCutoff += len(rd.Questions)
				continue
			}
			jobs = append(jobs, job{spec, rd})
		}
	}
	// Ensembles read their members' forecasts of the same round: run the
	// models first so an ensemble never waits on a busy member.
	sort.SliceStable(jobs, func(i, j int) bool { return !jobs[i].spec.IsEnsemble() && jobs[j].spec.IsEnsemble() })
	return jobs, res
}

// forecastAll runs the jobs on r.Workers workers, counting each agent's
// forecasts and failures into res and storing the forecasts as they come.
// It returns the first error (a storage error or the run's cancellation).
func (r *Runner) forecastAll(ctx context.Context, jobs []job, res map[string]*AgentResult) error {
	log := arena.Logger(r.Logger)
	now := arena.Clock(r.Now)
	workers := r.Workers
	if workers <= 0 {
		workers = 4
	}
	var mu sync.Mutex
	var firstErr error
	done, progress := 0, r.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, len(jobs))
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	rowsCh := make(chan []arena.BacktestForecast, workers)
	wdone := r.storeInBatches(ctx, stop, rowsCh)
	ch := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				rows, failure, err := r.one(ctx, j, now())
				mu.Lock()
				ar := res[j.spec.ID]
				switch {
				case err != nil && ctx.Err() != nil:
					if firstErr == nil {
						firstErr = context.Cause(ctx)
					}
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case failure != "":
					ar.Failures++
					log.Info("backtest: no forecast", "agent", j.spec.ID, "round", j.round.Key, "reason", failure)
				default:
					ar.Forecasts += len(rows)
				}
				done++
				progress(done, len(jobs))
				mu.Unlock()
				if len(rows) > 0 {
					rowsCh <- rows
				}
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(rowsCh)
	if err := <-wdone; err != nil && firstErr == nil {
		firstErr = fmt.Errorf("backtest: store forecasts: %w", err)
	}
	return firstErr
}

// storeInBatches is the run's one writer: it stores the forecasts sent on
// rows in batches, as a transaction per round would make the store's
// commit latency, not the models, the pace. Rows not yet written when a
// run dies are rebuilt from the cache. A failed write stops the run
// through stop (no model call is paid for after it whose forecasts could
// not be kept); the error says why. Once rows is closed and the rest
// written, the returned channel gives the write's error.
func (r *Runner) storeInBatches(ctx context.Context, stop context.CancelCauseFunc, rows <-chan []arena.BacktestForecast) <-chan error {
	wdone := make(chan error, 1)
	go func() {
		var buf []arena.BacktestForecast
		var werr error
		for rs := range rows {
			buf = append(buf, rs...)
			if len(buf) >= 512 && werr == nil {
				if werr = r.Store.SaveBacktest(ctx, buf); werr != nil {
					stop(fmt.Errorf("backtest: store forecasts: %w", werr))
				}
				buf = buf[:0]
			}
		}
		if werr == nil {
			werr = r.Store.SaveBacktest(ctx, buf)
		}
		wdone <- werr
	}()
	return wdone
}

// scoreInto scores the run's rows as `arena score` would and sets each
// agent's Brier score and alpha in res.
func scoreInto(ctx context.Context, rows []stats.Row, res map[string]*AgentResult) error {
	if len(rows) == 0 {
		return nil
	}
	t, err := stats.FromRows(rows)
	if err != nil {
		return err
	}
	results, err := stats.Analyze(ctx, t, stats.Options{})
	if err != nil {
		return err
	}
	for _, a := range results {
		if ar := res[a.Agent]; ar != nil {
			b := a.Brier
			ar.Brier = &b
			if a.Alpha.OK {
				v := a.Alpha.V
				ar.Alpha = &v
			}
		}
	}
	return nil
}

// addCosts fills the report's agents, in registry order, with what the
// meter counted of each one's calls and cost, and the run's totals and
// budget stops.
func (r *Runner) addCosts(rep *Report, res map[string]*AgentResult) {
	meter := r.Agents.Meter
	for _, spec := range r.Agents.Registry.Agents {
		ar := res[spec.ID]
		u := meter.Agent(spec.ID)
		ar.CostUSD, ar.Calls, ar.CachedCalls = float64(u.CostMicros)/1e6, u.Calls, u.CachedCalls
		ar.BilledUSD, ar.BilledCalls = float64(u.BilledMicros)/1e6, u.BilledCalls
		rep.Agents = append(rep.Agents, *ar)
	}
	run := meter.Run()
	rep.Cost = Cost{USD: float64(run.CostMicros) / 1e6, Calls: run.Calls, CachedCalls: run.CachedCalls,
		BilledUSD: float64(run.BilledMicros) / 1e6, BilledCalls: run.BilledCalls}
	rep.Stops = meter.Stops()
}

// one forecasts one round for one agent and returns its forecasts. A round
// the agent fails (no valid forecast, budget, a failed call, a cache miss
// in cache-only mode) is a failure, not an error; only storage errors and
// cancellation stop the run.
func (r *Runner) one(ctx context.Context, j job, now time.Time) ([]arena.BacktestForecast, string, error) {
	qs := j.round.Questions
	data := &agent.StoreData{Store: r.Store, Times: make([]time.Time, len(qs))}
	task := agent.RoundTask{Round: j.round.Key, Data: data}
	if r.Search != nil {
		asOf := qs[0].AsOf
		for _, q := range qs {
			if q.AsOf.Before(asOf) {
				asOf = q.AsOf
			}
		}
		task.Search = agent.RetrieverSearch{Retriever: r.Search, AsOf: asOf}
	}
	for i, q := range qs {
		data.Markets = append(data.Markets, q.Market)
		data.Times[i] = q.AsOf
		task.Markets = append(task.Markets, agent.TaskMarket{Index: i, Question: q.Market.Question, Category: q.Market.Category, CloseTime: q.Market.CloseTime})
	}
	tr, err := r.Agents.Forecast(ctx, j.spec.ID, task)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, err.Error(), nil
	}
	if !tr.Submitted() {
		return nil, tr.Failure, nil
	}
	rows := make([]arena.BacktestForecast, len(qs))
	for i, q := range qs {
		m := q.Market
		out := int8(0)
		if m.Resolution == arena.Yes {
			out = 1
		}
		rows[i] = arena.BacktestForecast{Agent: j.spec.ID, Round: j.round.Key, MarketID: m.ID, SourceID: m.SourceID,
			Category: category(m), Event: m.EventID, Forecast: tr.Predictions[i], Benchmark: m.FreezeValue, Outcome: out, CreatedAt: now}
	}
	return rows, "", nil
}

func category(m *arena.Market) string {
	if m.Category != "" {
		return m.Category
	}
	return m.Origin
}

// rows reads back this plan's stored forecasts as score rows.
func (r *Runner) rows(ctx context.Context, plan *Plan) ([]stats.Row, error) {
	inPlan := map[string]bool{}
	for _, rd := range plan.Rounds {
		inPlan[rd.Key] = true
	}
	agents := map[string]bool{}
	for _, s := range r.Agents.Registry.Agents {
		agents[s.ID] = true
	}
	stored, err := r.Store.BacktestForecasts(ctx)
	if err != nil {
		return nil, err
	}
	return ScoreRows(stored, func(f arena.BacktestForecast) bool { return inPlan[f.Round] && agents[f.Agent] }), nil
}

// ScoreRows turns the stored backtest forecasts that keep accepts into
// score rows.
func ScoreRows(stored []arena.BacktestForecast, keep func(arena.BacktestForecast) bool) []stats.Row {
	var out []stats.Row
	for _, f := range stored {
		if !keep(f) {
			continue
		}
		row := stats.Row{Agent: f.Agent, Round: f.Round, Market: f.SourceID, Category: f.Category, Event: f.Event,
			Forecast: float64(f.Forecast) / forecast.MaxBps, Outcome: float64(f.Outcome)}
		if f.Benchmark != nil {
			row.Benchmark, row.HasBenchmark = *f.Benchmark, true
		}
		out = append(out, row)
	}
	return out
}

// WriteCSV writes rows in the `arena score` input format: agent, round,
// market (the source id), category, forecast, benchmark (empty when none),
// outcome, event; numbers in their shortest exact form.
func WriteCSV(w io.Writer, rows []stats.Row) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"agent", "round", "market", "category", "forecast", "benchmark", "outcome", "event"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		b := ""
		if r.HasBenchmark {
			b = g(r.Benchmark)
		}
		if err := cw.Write([]string{r.Agent, r.Round, r.Market, r.Category, g(r.Forecast), b, g(math.Round(r.Outcome)), r.Event}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
