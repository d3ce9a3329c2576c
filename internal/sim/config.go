package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// Defaults for Config's zero values.
const (
	DefaultMarkets  = 200
	DefaultHorizon  = 8 * 7 * 24 * time.Hour
	DefaultStep     = 10 * time.Minute
	DefaultVoidRate = 0.03
	// MaxMarkets bounds memory: each market keeps its grid (≈ 10 bytes a point,
	// ≈ 2,000 points at the default step), so 20,000 markets is ≈ 0.5 GB.
	MaxMarkets = 20000
)

// DefaultStart is the world's default start: Monday 2026-01-05 00:00 UTC.
var DefaultStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Market lifetimes are log-uniform between these, in whole hours, so that
// short markets feed forecast rounds and long ones feed weekly cohorts.
const (
	minLife = 4 * 24 * time.Hour
	maxLife = 56 * 24 * time.Hour
)

// closeLead is how soon after Start the first event closes; closeTail is
// how far past the horizon the last one closes, so that a round opened at
// the very end of the horizon still finds markets closing days later.
const (
	closeLead = 24 * time.Hour
	closeTail = 14 * 24 * time.Hour
)

// Config describes a synthetic world. Zero values take the defaults.
type Config struct {
	Seed    int64
	Markets int       // number of markets (default 200, at most MaxMarkets)
	Start   time.Time // start of the horizon (default DefaultStart); markets may open before it
	// Horizon is the period in which tracks run (default 8 weeks). Markets
	// close from Start+1d to Start+Horizon+14d.
	Horizon time.Duration
	// Step is the price grid (default 10 minutes); it must divide one hour.
	// Every price a market ever shows sits on this grid, so a benchmark
	// lookup with ±Step/2 tolerance always finds a point.
	Step time.Duration
	// ResolveDelay separates close from resolution (default 0: a market
	// resolves when it closes). Between the two its status is "closed".
	ResolveDelay time.Duration
	// VoidRate is the fraction of markets that resolve VOID (0: default 3%;
	// negative: none).
	VoidRate float64
	// Venues, when set, names the world's markets after venues
	// (comma-separated, each one of arena.Venues, as ParseVenues writes
	// them): event k's markets carry the k-th in turn as their Origin, so
	// an offline round mixes venues. It draws nothing at random: the
	// world's markets, prices and outcomes are the same with or without.
	Venues string

	// futureFrom and futureSalt re-seed every random draw for times at or
	// after futureFrom. Tests use them to prove that the view at an
	// earlier instant does not depend on the future.
	futureFrom time.Time
	futureSalt uint64
}

// withDefaults fills zero values.
func (c Config) withDefaults() Config {
	if c.Markets == 0 {
		c.Markets = DefaultMarkets
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	c.Start = c.Start.UTC()
	if c.Horizon == 0 {
		c.Horizon = DefaultHorizon
	}
	if c.Step == 0 {
		c.Step = DefaultStep
	}
	switch {
	case c.VoidRate == 0:
		c.VoidRate = DefaultVoidRate
	case c.VoidRate < 0:
		c.VoidRate = 0
	}
	return c
}

// Validate reports a configuration that NewWorld cannot build, after
// defaults are applied. Errors are *arena.Error of kind EINVALID.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Markets < 0 || c.Markets > MaxMarkets:
		return arena.Errorf(arena.EINVALID, "sim: markets must be between 1 and %d, got %d", MaxMarkets, c.Markets)
	case c.Horizon < 0:
		return arena.Errorf(arena.EINVALID, "sim: horizon must be positive, got %s", c.Horizon)
	case c.Step < time.Minute || c.Step > time.Hour || time.Hour%c.Step != 0:
		return arena.Errorf(arena.EINVALID, "sim: step must divide one hour and be at least a minute, got %s", c.Step)
	case c.ResolveDelay < 0:
		return arena.Errorf(arena.EINVALID, "sim: resolve delay must not be negative, got %s", c.ResolveDelay)
	case c.VoidRate > 0.5:
		return arena.Errorf(arena.EINVALID, "sim: void rate must be at most 0.5, got %v", c.VoidRate)
	}
	if v, err := ParseVenues(c.Venues); err != nil || v != c.Venues {
		return arena.Errorf(arena.EINVALID, "sim: venues %q: want one or more of %s, comma-separated, each once", c.Venues, strings.Join(arena.Venues, ", "))
	}
	return nil
}

// ParseVenues reads a list of venues to name a world's markets after:
// comma-separated, each one of arena.Venues (in any letter case), each
// once. It returns them as Config.Venues holds them: lower case, joined
// by commas, in the order given; "" for none.
func ParseVenues(s string) (string, error) {
	var out []string
	for _, v := range strings.Split(s, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case v == "" && strings.TrimSpace(s) == "":
			return "", nil
		case !arena.IsVenue(v):
			return "", arena.Errorf(arena.EINVALID, "venue %q: want %s", v, strings.Join(arena.Venues, ", "))
		case slices.Contains(out, v):
			return "", arena.Errorf(arena.EINVALID, "venue %q named twice", v)
		}
		out = append(out, v)
	}
	return strings.Join(out, ","), nil
}

// Category is one family of markets. Categories differ in how fast their
// latent variable moves (Vol) against how much is settled only at close
// (Jump), in how well the market tracks the truth (Noise), and in how late
// prices react (Lag).
type Category struct {
	Name   string
	Weight float64 // share of events
	// Vol is the latent volatility per √day: crypto prices swing daily,
	// science prices barely move until the result.
	Vol float64
	// Jump is the sd of a terminal shock added to the latent path at close
	// (the game, the vote count): it keeps markets uncertain until they
	// close, so q(t) = Φ((W(t) − c)/√(σ²(T−t) + Jump²)).
	Jump float64
	// Noise (ν) is the market's observation noise in units of σ√T, the
	// path's spread over the market's life: the market sees W(t−Lag) + η
	// with sd(η) = ν·σ·√T (η mean-reverting over noiseCorrTime) and prices
	// P(Yes | that observation), which is calibrated by construction but
	// less informed than q(t).
	Noise float64
	Lag   time.Duration // the market sees the latent path this late
	// Corr is the correlation of the latent paths of markets on one event.
	Corr float64
	// VolumeScale is the median final volume in dollars.
	VolumeScale float64
}

// categories is the fixed category table. Changing it changes every world.
var categories = []Category{
	{Name: "politics", Weight: 0.24, Vol: 0.45, Jump: 1.75, Noise: 0.60, Lag: 3 * time.Hour, Corr: 0.7, VolumeScale: 400_000},
	{Name: "sports", Weight: 0.20, Vol: 0.80, Jump: 2.60, Noise: 0.50, Lag: time.Hour, Corr: 0.6, VolumeScale: 150_000},
	{Name: "crypto", Weight: 0.18, Vol: 1.00, Jump: 0, Noise: 0.25, Lag: 20 * time.Minute, Corr: 0.8, VolumeScale: 250_000},
	{Name: "economics", Weight: 0.14, Vol: 0.35, Jump: 1.40, Noise: 0.60, Lag: 6 * time.Hour, Corr: 0.7, VolumeScale: 120_000},
	{Name: "science", Weight: 0.12, Vol: 0.30, Jump: 1.40, Noise: 0.80, Lag: 12 * time.Hour, Corr: 0.5, VolumeScale: 40_000},
	{Name: "weather", Weight: 0.12, Vol: 0.60, Jump: 1.75, Noise: 0.70, Lag: 2 * time.Hour, Corr: 0.6, VolumeScale: 30_000},
}

// thresholdSD is the spread of the latent threshold c (in latent units) and
// thresholdMean its centre; a positive centre makes NO the more common
// outcome, as on real prediction markets.
const (
	thresholdMean = 0.5
	thresholdSD   = 0.9
)

// noiseCorrTime is the correlation time of the market's observation noise:
// mispricings persist for days rather than flickering every grid step.
const noiseCorrTime = 72 * time.Hour

// staleAge is how old the stale agent's price is.
const staleAge = 24 * time.Hour

// tick is the price grid of the simulated market (Polymarket's fine tick),
// in basis points; prices are clipped to [minPrice, maxPrice] bps.
const (
	tickBPS  = 10
	minPrice = 100
	maxPrice = 9900
)
