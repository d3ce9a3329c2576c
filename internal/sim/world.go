// Package sim is Forecast Arena's deterministic synthetic world:
// binary markets whose outcomes follow a latent Brownian model, a market
// price that is calibrated but less informed than the truth, and simulated
// agents of known skill. It feeds the offline demo (`arena sync --source
// sim`) and the statistical checks of the scoring code.
//
// Everything is a pure function of Config: the same Config gives the same
// world, byte for byte, and an observer's view at an instant depends only on
// random draws for times up to that instant.
package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// World is a generated synthetic world. It is immutable after NewWorld and
// safe for concurrent use.
type World struct {
	cfg     Config
	markets []*market
	events  []*event
	byID    map[string]*market
}

// Spec is the static description of a market: what is fixed when it is
// listed. It carries no latent parameters and no outcome.
type Spec struct {
	Index    int
	SourceID string
	EventID  string
	Category string
	Question string
	Open     time.Time
	Close    time.Time
	Venue    string // the venue the market is named after ("": none; see Config.Venues)
}

type event struct {
	index   int
	id      string
	cat     *Category
	open    time.Time
	close   time.Time
	steps   int // grid intervals from open to close
	markets []*market
}

type market struct {
	spec   Spec
	cat    *Category
	void   bool
	c      float64 // latent threshold
	sigma  float64 // latent volatility per √day
	jump   float64 // sd of the terminal shock
	tau    float64 // sd of the market's observation noise
	life   float64 // T in days
	lag    int     // grid steps
	volume float64 // final volume
	liq    float64
	w      []float64 // latent path on the grid, w[0] = 0
	price  []uint16  // market Yes price on the grid, basis points
}

// New builds the world described by cfg, or reports why it cannot.
func New(cfg Config) (*World, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return build(cfg.withDefaults()), nil
}

// NewWorld builds the world described by cfg. It panics on a configuration
// that Config.Validate rejects; callers handling user input use New.
func NewWorld(cfg Config) *World {
	w, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return w
}

// Config returns the configuration with defaults applied.
func (w *World) Config() Config { return w.cfg }

func build(cfg Config) *World {
	w := &World{cfg: cfg, byID: make(map[string]*market, cfg.Markets)}
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5151_0000_0000_0001))

	// Events first: sizes and categories, until the market count is reached.
	for n := 0; n < cfg.Markets; {
		size := 1
		switch u := r.Float64(); {
		case u < 0.08:
			size = 3
		case u < 0.25:
			size = 2
		}
		size = min(size, cfg.Markets-n)
		e := &event{index: len(w.events), cat: pickCategory(r.Float64())}
		e.id = fmt.Sprintf("s%d-e%d", cfg.Seed, e.index)
		e.markets = make([]*market, size)
		w.events = append(w.events, e)
		n += size
	}

	// Close times are stratified over the span (a random permutation of
	// equal slots, jittered inside each) so that at every instant of the
	// horizon some events close within days; lifetimes are log-uniform.
	span := cfg.Horizon + closeTail - closeLead
	slots := r.Perm(len(w.events))
	for i, e := range w.events {
		pos := (float64(slots[i]) + r.Float64()) / float64(len(w.events))
		e.close = cfg.Start.Add(closeLead + time.Duration(pos*float64(span))).Truncate(time.Hour)
		if !e.close.After(cfg.Start) {
			e.close = cfg.Start.Add(time.Hour)
		}
		e.open = e.close.Add(-logUniformLife(r))
		e.steps = int(e.close.Sub(e.open) / cfg.Step)
	}

	for _, e := range w.events {
		for j := range e.markets {
			m := &market{cat: e.cat, sigma: e.cat.Vol, jump: e.cat.Jump}
			m.spec = Spec{
				Index:    len(w.markets),
				SourceID: fmt.Sprintf("s%d-m%d", cfg.Seed, len(w.markets)),
				EventID:  e.id,
				Category: e.cat.Name,
				Open:     e.open,
				Close:    e.close,
				Venue:    venueOf(cfg.Venues, e.index),
			}
			m.c = thresholdMean + thresholdSD*r.NormFloat64()
			m.void = r.Float64() < cfg.VoidRate
			m.life = durDays(e.close.Sub(e.open))
			m.tau = e.cat.Noise * m.sigma * math.Sqrt(m.life)
			m.lag = max(1, int(e.cat.Lag/cfg.Step))
			m.volume = math.Round(e.cat.VolumeScale * math.Exp(r.NormFloat64()))
			m.liq = math.Round(m.volume * (0.02 + 0.08*r.Float64()))
			m.spec.Question = question(e, j, m, r)
			e.markets[j] = m
			w.markets = append(w.markets, m)
			w.byID[m.spec.SourceID] = m
		}
	}

	// Paths: each event is independent, so build them in parallel; the
	// result does not depend on scheduling because every draw comes from a
	// stream keyed by (seed, event, day).
	work := make(chan *event)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range work {
				w.genPaths(e)
			}
		}()
	}
	for _, e := range w.events {
		work <- e
	}
	close(work)
	wg.Wait()
	return w
}

// venueOf is the venue event i's markets are named after: the venues of
// list in turn.
func venueOf(list string, i int) string {
	if list == "" {
		return ""
	}
	vs := strings.Split(list, ",")
	return vs[i%len(vs)]
}

func pickCategory(u float64) *Category {
	total := 0.0
	for i := range categories {
		total += categories[i].Weight
	}
	u *= total
	for i := range categories {
		if u < categories[i].Weight {
			return &categories[i]
		}
		u -= categories[i].Weight
	}
	return &categories[len(categories)-1]
}

// dayRNG is the random stream for one event's grid steps on one UTC day.
// Keying by day (not by call order) is what makes a prefix of the world
// independent of anything drawn later.
func (w *World) dayRNG(e *event, day int64) *rand.Rand {
	s1 := mix64(uint64(w.cfg.Seed) ^ mix64(uint64(e.index)+1))
	s2 := mix64(uint64(day))
	if w.cfg.futureSalt != 0 && !time.Unix(day*86400, 0).Before(w.cfg.futureFrom) {
		s2 ^= mix64(w.cfg.futureSalt)
	}
	return rand.New(rand.NewPCG(s1, s2))
}

// genPaths draws the latent paths of an event's markets and their prices.
func (w *World) genPaths(e *event) {
	n := e.steps + 1
	dt := durDays(w.cfg.Step)
	sq := math.Sqrt(dt)
	a := math.Sqrt(e.cat.Corr)
	b := math.Sqrt(1 - e.cat.Corr)
	ou := math.Exp(-float64(w.cfg.Step) / float64(noiseCorrTime))
	ouInnov := math.Sqrt(1 - ou*ou)
	eta := make([][]float64, len(e.markets))
	for i, m := range e.markets {
		m.w = make([]float64, n)
		m.price = make([]uint16, n)
		eta[i] = make([]float64, n)
	}
	var r *rand.Rand
	day := int64(math.MinInt64)
	for k := range n {
		t := e.open.Add(time.Duration(k) * w.cfg.Step)
		if d := floorDiv(t.Unix(), 86400); d != day {
			day, r = d, w.dayRNG(e, d)
		}
		if k == 0 {
			for i, m := range e.markets {
				eta[i][0] = m.tau * r.NormFloat64()
			}
			continue
		}
		zc := r.NormFloat64()
		for i, m := range e.markets {
			m.w[k] = m.w[k-1] + m.sigma*sq*(a*zc+b*r.NormFloat64())
			eta[i][k] = ou*eta[i][k-1] + m.tau*ouInnov*r.NormFloat64()
		}
		if k == n-1 { // the terminal shock, correlated within the event like the path
			zc := r.NormFloat64()
			for _, m := range e.markets {
				m.w[k] += m.jump * (a*zc + b*r.NormFloat64())
			}
		}
	}
	for i, m := range e.markets {
		for k := range n {
			j := max(k-m.lag, 0)
			p := marketProb(m.w[j]+eta[i][k], float64(j)*dt, m.life, m.sigma, m.jump, m.tau, m.c)
			m.price[k] = toTickBPS(p)
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// question writes a deterministic question for market j of event e.
// Markets of one event share a subject and differ in their level, which is
// how real multi-market events look (e.g. price thresholds).
func question(e *event, j int, m *market, r *rand.Rand) string {
	date := e.close.Format("January 2, 2006")
	level := 10 + 5*j + r.IntN(5)
	subj := subjects[e.cat.Name]
	s := subj[e.index%len(subj)]
	switch e.cat.Name {
	case "politics":
		return fmt.Sprintf("Will %s's approval rating be above %d%% on %s?", s, 30+level, date)
	case "sports":
		return fmt.Sprintf("Will %s score more than %d points in the game ending %s?", s, 80+level, date)
	case "crypto":
		return fmt.Sprintf("Will %s close above $%d,000 on %s?", s, level, date)
	case "economics":
		return fmt.Sprintf("Will the %s index print above %d on %s?", s, 90+level, date)
	case "science":
		return fmt.Sprintf("Will the %s experiment report more than %d events by %s?", s, 10*level, date)
	default:
		return fmt.Sprintf("Will %s record more than %d mm of rain by %s?", s, 2*level, date)
	}
}

var subjects = map[string][]string{
	"politics":  {"Governor Alvarez", "Senator Brooks", "Mayor Chen", "Premier Duval", "Chancellor Eriksen"},
	"sports":    {"the Harbor Hawks", "the Iron Wolves", "the Lakeside Comets", "the Mesa Kings", "the Northern Lights"},
	"crypto":    {"SIMCOIN", "ARENA token", "BLOCKX", "LEDGR", "HASHY"},
	"economics": {"Northland CPI", "Southmark PMI", "Eastvale retail", "Westport housing", "Midland jobs"},
	"science":   {"AURORA", "BOREAS", "CIRRUS", "DELTA-V", "EQUINOX"},
	"weather":   {"Port Elena", "Ridgefield", "Sunhaven", "Tallmoor", "Umberlake"},
}

// Markets returns the static description of every market, in index order.
func (w *World) Markets() []Spec {
	out := make([]Spec, len(w.markets))
	for i, m := range w.markets {
		out[i] = m.spec
	}
	return out
}

// lookup finds a market by SourceID.
func (w *World) lookup(sourceID string) (*market, error) {
	m, ok := w.byID[sourceID]
	if !ok {
		return nil, arena.Errorf(arena.ENOTFOUND, "sim: unknown market %q", sourceID)
	}
	return m, nil
}

// index is the grid point in force at t (the last one at or before t),
// clamped to the market's grid; t must not be before open.
func (w *World) index(m *market, t time.Time) int {
	k := int(t.Sub(m.spec.Open) / w.cfg.Step)
	return min(max(k, 0), len(m.w)-1)
}

// gridTime is the time of grid point k.
func (w *World) gridTime(m *market, k int) time.Time {
	return m.spec.Open.Add(time.Duration(k) * w.cfg.Step)
}

// PriceAt is the market's Yes price in force at t: the last grid price at or
// before t, and the final pre-close price from close on. It reports false
// for an unknown market or a time before the market opened.
func (w *World) PriceAt(sourceID string, t time.Time) (float64, bool) {
	m, ok := w.byID[sourceID]
	if !ok || t.Before(m.spec.Open) {
		return 0, false
	}
	return bpsProb(m.price[w.index(m, t)]), true
}

// TrueProb is q(t), the probability of Yes given the latent path up to the
// grid point in force at t: the prior before open, the latent outcome (0 or
// 1, also for void markets) from close on, NaN for an unknown market.
func (w *World) TrueProb(sourceID string, t time.Time) float64 {
	m, ok := w.byID[sourceID]
	if !ok {
		return math.NaN()
	}
	if t.Before(m.spec.Open) {
		return trueProb(0, m.c, m.sigma, m.jump, m.life)
	}
	k := w.index(m, t)
	rem := m.life - float64(k)*durDays(w.cfg.Step)
	if k == len(m.w)-1 {
		rem = 0
	}
	return trueProb(m.w[k], m.c, m.sigma, m.jump, rem)
}

// Outcome is the market's latent outcome x = 1{W(T) > c} and whether it
// resolves VOID (then x is not scored). An unknown market gives (0, true).
func (w *World) Outcome(sourceID string) (x int, void bool) {
	m, ok := w.byID[sourceID]
	if !ok {
		return 0, true
	}
	return m.outcome(), m.void
}

func (m *market) outcome() int {
	if m.w[len(m.w)-1] > m.c {
		return 1
	}
	return 0
}
