package rounds

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
)

// DefaultK is the number of markets in a round.
const DefaultK = 7

// ValidateRound checks a round definition: a valid schedule and
// exactly k distinct open binary markets, at most one per event, every one
// closing strictly after the reveal deadline, so that no agent can see an
// outcome before deciding whether to reveal.
func ValidateRound(s forecast.Schedule, k int, markets []*arena.Market) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if k < 1 {
		return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: k = %d, need at least one market", k)
	}
	if len(markets) != k {
		return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: %d markets, k = %d", len(markets), k)
	}
	seen := make(map[string]bool, k)
	events := make(map[string]bool, k)
	for i, m := range markets {
		if m == nil {
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d is missing", i)
		}
		switch {
		case !m.IsBinary():
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d (%s) is not binary", i, m)
		case m.Status != arena.StatusOpen || m.Resolution != "":
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d (%s) is %s, not open", i, m, m.Status)
		case m.CloseTime.IsZero():
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d (%s) has no close time", i, m)
		case !m.CloseTime.After(s.RevealDeadline):
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d (%s) closes at %s, not after the reveal deadline %s",
				i, m, fmtTime(m.CloseTime), fmtTime(s.RevealDeadline))
		}
		if key := marketKey(m); seen[key] {
			return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %s appears twice", m)
		} else {
			seen[key] = true
		}
		if m.EventID != "" {
			key := m.Source + "\x00" + m.EventID
			if events[key] {
				return forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: two markets on event %s/%s", m.Source, m.EventID)
			}
			events[key] = true
		}
	}
	return nil
}

// Rules are how a round's markets are chosen (curated by rules,
// not by hand). They are stored with the round as JSON, so a round's
// selection can be re-run and audited.
type Rules struct {
	// MinVolume and MinLiquidity are in USD (Polymarket volumeNum and
	// liquidityNum); a market needs at least both, unless Venues sets
	// its venue's own.
	MinVolume    float64 `json:"min_volume"`
	MinLiquidity float64 `json:"min_liquidity"`
	// When MaxPrice > 0 a market needs a known Yes price in
	// [MinPrice, MaxPrice], which keeps out nearly decided markets.
	MinPrice float64 `json:"min_price"`
	MaxPrice float64 `json:"max_price"`
	// A market must close more than MinCloseAfter after the reveal deadline
	// and, when MaxCloseAfter > 0, at most MaxCloseAfter after it (so the
	// round resolves soon).
	MinCloseAfter arena.Duration `json:"min_close_after"`
	MaxCloseAfter arena.Duration `json:"max_close_after"`
	// MaxPerCategory caps markets per category (0: no cap).
	MaxPerCategory int `json:"max_per_category"`
	// Sources restricts markets to these sources (empty: any).
	Sources []string `json:"sources,omitempty"`
	// ExcludeCategories are skipped, compared case-insensitively.
	ExcludeCategories []string `json:"exclude_categories,omitempty"`
	// Venues holds what differs by venue (a market's Venue): thresholds
	// in the venue's own units and its share of a round.
	Venues map[string]VenueRules `json:"venues,omitempty"`
}

// VenueRules are one venue's selection rules. Volumes and liquidity are
// in the venue's own units (Kalshi counts contracts, Manifold mana,
// Metaculus has neither), so one threshold cannot suit every venue, and
// volumes of two venues cannot be ranked against each other: once any
// venue has a Share, a round takes its markets from the venues with one,
// in proportion to their shares, each venue's ranked by its own volume.
type VenueRules struct {
	// MinVolume and MinLiquidity, when set, replace the rules' own for
	// this venue's markets.
	MinVolume    *float64 `json:"min_volume,omitempty"`
	MinLiquidity *float64 `json:"min_liquidity,omitempty"`
	// Share is the venue's weight in a round's k markets (0: none).
	Share float64 `json:"share,omitempty"`
}

// venueMinimums are the built-in minimums of the venues whose volume is
// not in dollars: Kalshi's counts contracts (each pays at most a dollar)
// and its liquidity field is deprecated (zero); Manifold's are play money
// (mana); Metaculus has neither, only forecasters.
var venueMinimums = map[string][2]float64{
	arena.SourceKalshi:    {1_000, 0},
	arena.SourceManifold:  {1_000, 0},
	arena.SourceMetaculus: {0, 0},
}

// DefaultRulesFor are the default rules over the markets of venues (each
// one of arena.Venues): liquid markets that are not nearly decided and
// close within a week after the reveal deadline, each venue's with
// minimums in its own units, and with two venues or more an equal share of
// every round for each.
func DefaultRulesFor(venues []string) Rules {
	r := defaultRules()
	r.Sources = slices.Clone(venues)
	for _, v := range venues {
		if m, ok := venueMinimums[v]; ok {
			if r.Venues == nil {
				r.Venues = map[string]VenueRules{}
			}
			r.Venues[v] = VenueRules{MinVolume: &m[0], MinLiquidity: &m[1]}
		}
	}
	if len(venues) > 1 {
		r.ShareEqually(venues)
	}
	return r
}

// ShareEqually gives each of venues an equal share of every round, keeping
// the minimums set for it.
func (r *Rules) ShareEqually(venues []string) {
	if r.Venues == nil {
		r.Venues = map[string]VenueRules{}
	}
	for _, v := range venues {
		vr := r.Venues[v]
		vr.Share = 1
		r.Venues[v] = vr
	}
}

func defaultRules() Rules {
	return Rules{
		MinVolume:     10_000,
		MinLiquidity:  1_000,
		MinPrice:      0.03,
		MaxPrice:      0.97,
		MinCloseAfter: arena.Duration(time.Hour),
		MaxCloseAfter: arena.Duration(7 * 24 * time.Hour),
		// No cap: round-robin already mixes categories, and Polymarket
		// leaves many markets uncategorized.
		MaxPerCategory: 0,
	}
}

// Validate checks that the rules are in range.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return forecast.Reject(forecast.CodeRulesInvalid, "rules: "+format, args...)
	}
	switch {
	case !(r.MinVolume >= 0) || math.IsInf(r.MinVolume, 0):
		return bad("min_volume %v", r.MinVolume)
	case !(r.MinLiquidity >= 0) || math.IsInf(r.MinLiquidity, 0):
		return bad("min_liquidity %v", r.MinLiquidity)
	case r.MaxPrice != 0 && !(0 <= r.MinPrice && r.MinPrice <= r.MaxPrice && r.MaxPrice <= 1):
		return bad("price bounds [%v, %v] are not within [0, 1]", r.MinPrice, r.MaxPrice)
	case r.MaxPrice == 0 && r.MinPrice != 0:
		return bad("min_price %v without max_price", r.MinPrice)
	case r.MinCloseAfter < 0 || r.MaxCloseAfter < 0:
		return bad("negative close window")
	case r.MaxCloseAfter > 0 && r.MaxCloseAfter <= r.MinCloseAfter:
		return bad("max_close_after %s is not after min_close_after %s", r.MaxCloseAfter, r.MinCloseAfter)
	case r.MaxPerCategory < 0:
		return bad("max_per_category %d", r.MaxPerCategory)
	}
	for _, v := range slices.Sorted(maps.Keys(r.Venues)) {
		vr := r.Venues[v]
		switch {
		case !arena.IsVenue(v) && v != arena.SourceSim:
			return bad("venues: %q is not a venue (want %s)", v, strings.Join(arena.Venues, ", "))
		case vr.MinVolume != nil && !(*vr.MinVolume >= 0 && !math.IsInf(*vr.MinVolume, 0)):
			return bad("venues: %s: min_volume %v", v, *vr.MinVolume)
		case vr.MinLiquidity != nil && !(*vr.MinLiquidity >= 0 && !math.IsInf(*vr.MinLiquidity, 0)):
			return bad("venues: %s: min_liquidity %v", v, *vr.MinLiquidity)
		case !(vr.Share >= 0 && vr.Share <= 1e6): // also refuses NaN
			return bad("venues: %s: share %v", v, vr.Share)
		}
	}
	return nil
}

// shared reports whether the rules split rounds among venues by share.
func (r Rules) shared() bool {
	for _, vr := range r.Venues {
		if vr.Share > 0 {
			return true
		}
	}
	return false
}

// minimums are the volume and liquidity a market of venue v needs.
func (r Rules) minimums(v string) (volume, liquidity float64) {
	volume, liquidity = r.MinVolume, r.MinLiquidity
	if vr, ok := r.Venues[v]; ok {
		if vr.MinVolume != nil {
			volume = *vr.MinVolume
		}
		if vr.MinLiquidity != nil {
			liquidity = *vr.MinLiquidity
		}
	}
	return volume, liquidity
}

// Quotas splits k markets among the venues with a share, in proportion
// to their shares by largest remainder (ties to the venue named first),
// so that the quotas sum to k; nil when no venue has a share.
func (r Rules) Quotas(k int) map[string]int {
	if !r.shared() {
		return nil
	}
	var names []string
	total := 0.0
	for _, v := range slices.Sorted(maps.Keys(r.Venues)) {
		if s := r.Venues[v].Share; s > 0 {
			names, total = append(names, v), total+s
		}
	}
	q := make(map[string]int, len(names))
	rem := make(map[string]float64, len(names))
	left := k
	for _, v := range names {
		exact := float64(k) * r.Venues[v].Share / total
		q[v] = int(math.Floor(exact))
		rem[v] = exact - float64(q[v])
		left -= q[v]
	}
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(rem[b], rem[a]) })
	for i := 0; i < left; i++ {
		q[order[i%len(order)]]++
	}
	return q
}

// Eligible reports whether m may enter a round whose reveal deadline is
// revealDeadline, and if not, why.
func (r Rules) Eligible(m *arena.Market, revealDeadline time.Time) (bool, string) {
	switch {
	case m == nil:
		return false, "missing"
	case !m.IsBinary():
		return false, "not binary"
	case m.Status != arena.StatusOpen || m.Resolution != "" || m.Ambiguous:
		return false, "not open"
	case len(r.Sources) > 0 && !slices.Contains(r.Sources, m.Source):
		return false, "source " + m.Source + " not in the rules"
	case r.shared() && !(r.Venues[m.Venue()].Share > 0):
		return false, "venue " + m.Venue() + " has no share"
	case !m.CloseTime.After(revealDeadline.Add(time.Duration(r.MinCloseAfter))):
		return false, "closes too early"
	case r.MaxCloseAfter > 0 && m.CloseTime.After(revealDeadline.Add(time.Duration(r.MaxCloseAfter))):
		return false, "closes too late"
	}
	minVolume, minLiquidity := r.minimums(m.Venue())
	switch {
	case !(m.Volume >= minVolume): // also refuses NaN
		return false, "volume below min_volume"
	case !(m.Liquidity >= minLiquidity):
		return false, "liquidity below min_liquidity"
	}
	cat := categoryKey(m)
	for _, c := range r.ExcludeCategories {
		if strings.EqualFold(strings.TrimSpace(c), cat) {
			return false, "category " + cat
		}
	}
	if r.MaxPrice > 0 {
		p, ok := m.YesPrice()
		if !ok || !(p >= r.MinPrice && p <= r.MaxPrice) {
			return false, "price outside [min_price, max_price]"
		}
	}
	return true, ""
}

// SelectMarkets chooses k markets for a round whose reveal deadline is
// revealDeadline: eligible markets (Rules.Eligible), the highest-volume
// market of each event, then round-robin over categories — categories
// ordered by their best market's volume, each category's markets by
// volume — so that the round mixes categories. Ties break on (Source,
// SourceID), so the result depends only on the set of candidates, not on
// their order. When venues have shares (Rules.Quotas), each venue's quota
// is chosen so from its own markets, venue after venue in name order; the
// places of a venue short of markets go to the others' remaining markets,
// chosen the same way, so that a venue's quiet week does not stop the
// arena (the board by venue weighs venues equally however many markets
// each has). MaxPerCategory holds over the whole round.
// The result is in selection order, which becomes the market index
// within the round.
func SelectMarkets(candidates []*arena.Market, k int, rules Rules, revealDeadline time.Time) ([]*arena.Market, error) {
	if k < 1 {
		return nil, forecast.Reject(forecast.CodeRulesInvalid, "select: k = %d", k)
	}
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	best := make(map[string]*arena.Market) // event key → best market
	refused := map[string]int{}            // reason → markets
	for _, m := range candidates {
		if ok, why := rules.Eligible(m, revealDeadline); !ok {
			refused[why]++
			continue
		}
		key := eventKey(m)
		if cur, ok := best[key]; !ok || better(m, cur) {
			best[key] = m
		}
	}
	used := map[string]int{} // category → markets chosen
	var out []*arena.Market
	if quotas := rules.Quotas(k); quotas != nil {
		byVenue := map[string][]*arena.Market{}
		for _, m := range best {
			byVenue[m.Venue()] = append(byVenue[m.Venue()], m)
		}
		for _, v := range slices.Sorted(maps.Keys(quotas)) {
			out = append(out, roundRobin(byVenue[v], quotas[v], rules.MaxPerCategory, used)...)
		}
		for _, m := range out {
			delete(best, eventKey(m))
		}
	}
	out = append(out, roundRobin(slices.Collect(maps.Values(best)), k-len(out), rules.MaxPerCategory, used)...)
	if len(out) < k {
		return nil, notEnough(len(out), rules, len(candidates), k, refused)
	}
	return out, nil
}

// roundRobin takes k markets, at most one per event already, round-robin
// over their categories (see SelectMarkets), so that with those used
// already (counted in used, which it updates) at most maxPerCategory are
// of a category when it is positive; fewer when there are not enough.
func roundRobin(ms []*arena.Market, k, maxPerCategory int, used map[string]int) []*arena.Market {
	if k <= 0 {
		return nil
	}
	byCat := make(map[string][]*arena.Market)
	for _, m := range ms {
		c := categoryKey(m)
		byCat[c] = append(byCat[c], m)
	}
	cats := make([]string, 0, len(byCat))
	for c, ms := range byCat {
		slices.SortFunc(ms, compareMarkets)
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		if c := compareMarkets(byCat[a][0], byCat[b][0]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]*arena.Market, 0, k)
	for layer := 0; len(out) < k; layer++ {
		added := false
		for _, c := range cats {
			if layer < len(byCat[c]) && len(out) < k && (maxPerCategory <= 0 || used[c] < maxPerCategory) {
				out = append(out, byCat[c][layer])
				used[c]++
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// notEnough is the refusal of a selection that found only n of the k
// markets it needs.
func notEnough(n int, rules Rules, candidates, k int, refused map[string]int) error {
	limits := "one per event"
	if rules.MaxPerCategory > 0 {
		limits += fmt.Sprintf(", at most %d per category", rules.MaxPerCategory)
	}
	return forecast.Reject(forecast.CodeNotEnoughMarkets, "select: %d eligible markets (%s) among %d candidates, need %d%s",
		n, limits, candidates, k, refusals(refused))
}

// refusals says why candidates were not eligible, most common reason
// first: "; refused: 40 source polymarket, 20 closes too early".
func refusals(n map[string]int) string {
	if len(n) == 0 {
		return ""
	}
	why := make([]string, 0, len(n))
	for w := range n {
		why = append(why, w)
	}
	slices.SortFunc(why, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(why))
	for i, w := range why {
		parts[i] = fmt.Sprintf("%d %s", n[w], w)
	}
	return "; refused: " + strings.Join(parts, ", ")
}

// compareMarkets orders by volume descending, then Source and SourceID.
func compareMarkets(a, b *arena.Market) int {
	switch {
	case a.Volume > b.Volume:
		return -1
	case a.Volume < b.Volume:
		return 1
	}
	if c := strings.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	return strings.Compare(a.SourceID, b.SourceID)
}

func better(a, b *arena.Market) bool { return compareMarkets(a, b) < 0 }

func marketKey(m *arena.Market) string { return m.Source + "\x00" + m.SourceID }

// eventKey groups markets on one event; a market without an event is its
// own event.
func eventKey(m *arena.Market) string {
	if m.EventID == "" {
		return "m\x00" + marketKey(m)
	}
	return "e\x00" + m.Source + "\x00" + m.EventID
}

func categoryKey(m *arena.Market) string {
	c := strings.ToLower(strings.TrimSpace(m.Category))
	if c == "" {
		return "uncategorized"
	}
	return c
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
