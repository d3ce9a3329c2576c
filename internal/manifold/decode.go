package manifold

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// market is one Manifold market as /v0 serves it: a LiteMarket (GET
// /search-markets, /markets) or a FullMarket (GET /market/{id}), which
// adds the description and the topics. Times are epoch milliseconds;
// probability is the AMM's price of YES after the last trade (binary
// markets only). Fields the arena does not use are not decoded;
// docs/operations.md lists what is read and why.
type market struct {
	ID                    string       `json:"id"`
	Question              string       `json:"question"`
	Slug                  string       `json:"slug"`
	URL                   string       `json:"url"`
	OutcomeType           string       `json:"outcomeType"`
	Probability           venue.Number `json:"probability"`
	CreatedTime           venue.Number `json:"createdTime"`
	CloseTime             venue.Number `json:"closeTime"`
	ResolutionTime        venue.Number `json:"resolutionTime"`
	IsResolved            bool         `json:"isResolved"`
	Resolution            string       `json:"resolution"`
	ResolutionProbability venue.Number `json:"resolutionProbability"`
	Volume                venue.Number `json:"volume"`
	TotalLiquidity        venue.Number `json:"totalLiquidity"`
	SiblingContractID     string       `json:"siblingContractId"`
	TextDescription       string       `json:"textDescription"`
	GroupSlugs            []string     `json:"groupSlugs"`
}

// entry is a decoded, mapped market with the listing fact Sync needs.
type entry struct {
	M        *arena.Market
	Eligible bool // open and traded
}

// decode decodes one market object and maps it to an arena.Market as it
// stands at now (Manifold has no closed flag: a market is closed once
// its closeTime has passed, until it resolves). now stamps its price
// points. Errors are *venue.SkipError.
func decode(raw []byte, now time.Time) (*entry, error) {
	var k market
	if err := venue.Decode(Venue, raw, &k, salvage); err != nil {
		return nil, err
	}
	return k.toEntry(now.UTC())
}

func salvage(raw []byte) string {
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &m)
	id, _ := venue.ID(m.ID)
	return id
}

func (k *market) toEntry(now time.Time) (*entry, error) {
	id, ok := venue.ID(k.ID)
	if !ok {
		return nil, venue.Skip(Venue, venue.SkipMissingID, "", "id %.60q", k.ID)
	}
	// Only BINARY markets ask a yes/no question; MULTIPLE_CHOICE, POLL,
	// NUMBER, PSEUDO_NUMERIC, DATE and the rest resolve to an answer or a
	// number.
	if k.OutcomeType != "BINARY" {
		return nil, venue.Skip(Venue, venue.SkipNotBinary, id, "outcomeType %.40q", k.OutcomeType)
	}
	question := venue.Text(k.Question, venue.MaxQuestion)
	if question == "" {
		return nil, venue.Skip(Venue, venue.SkipMissingQuestion, id, "empty question")
	}
	var created, closeT, resolvedT time.Time
	if err := venue.Times(Venue, id, venue.Millis, venue.TimeField[venue.Number]{Name: "createdTime", Value: k.CreatedTime, Dst: &created},
		venue.TimeField[venue.Number]{Name: "closeTime", Value: k.CloseTime, Dst: &closeT},
		venue.TimeField[venue.Number]{Name: "resolutionTime", Value: k.ResolutionTime, Dst: &resolvedT}); err != nil {
		return nil, err
	}
	prob, hasProb, err := k.Probability.Probability("probability")
	if err == nil && k.ResolutionProbability.Set {
		_, _, err = k.ResolutionProbability.Probability("resolutionProbability")
	}
	if err != nil {
		return nil, venue.Skip(Venue, venue.SkipBadPrice, id, "%v", err)
	}
	if k.Volume.V < 0 || k.TotalLiquidity.V < 0 {
		return nil, venue.Skip(Venue, venue.SkipBadField, id, "negative volume %v or liquidity %v", k.Volume.V, k.TotalLiquidity.V)
	}
	m := &arena.Market{
		Source: arena.SourceManifold, SourceID: id, Kind: arena.KindMarket,
		Question: question,
		Criteria: venue.Text(k.TextDescription, venue.MaxCriteria),
		URL:      marketURL(k.URL),
		Slug:     venue.Text(k.Slug, venue.MaxLabel),
		Type:     arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		Volume: k.Volume.V, Liquidity: k.TotalLiquidity.V,
		OpenTime: created, CloseTime: closeT,
		Status: arena.StatusOpen,
	}
	for _, g := range k.GroupSlugs {
		if m.Category = venue.Text(g, venue.MaxLabel); m.Category != "" {
			break
		}
	}
	// A question Manifold runs in mana and in prize cash is two markets,
	// each naming the other: one event, so a round takes one of them.
	if sib, ok := venue.ID(k.SiblingContractID); ok {
		m.EventID = min(id, sib)
	}
	if !closeT.IsZero() && !closeT.After(now) {
		m.Status = arena.StatusClosed
	}
	if hasProb {
		m.Prices = venue.BinaryPrices(prob)
		m.History = []arena.PricePoint{venue.YesPoint(now, prob, arena.PriceAMM, now)}
	}
	if k.IsResolved {
		resolve(m, strings.ToUpper(strings.TrimSpace(k.Resolution)), k.ResolutionProbability, venue.FirstSet(resolvedT, closeT, now), now)
	}
	if err := m.Validate(); err != nil {
		return nil, venue.Skip(Venue, venue.SkipInvalid, id, "%v", err)
	}
	return &entry{M: m, Eligible: m.Status == arena.StatusOpen && m.Volume > 0}, nil
}

// resolve applies a resolved market's resolution: YES and NO resolve it;
// CANCEL resolves it VOID (Manifold returns the mana traded); MKT
// resolves it to a probability, paying each YES share
// resolutionProbability, so a probability of 1 or 0 resolves it Yes or No
// and any other resolves it VOID with the probability kept as its
// settlement price (never rounded to an outcome). A resolution the arena
// cannot read, or MKT without its probability, leaves the market closed
// and ambiguous, for the oracle.
func resolve(m *arena.Market, resolution string, mkt venue.Number, at, fetched time.Time) {
	switch {
	case resolution == "YES" || resolution == "MKT" && mkt.Set && mkt.V == 1:
		venue.Settle(m, arena.Yes, 1, true, at, fetched)
	case resolution == "NO" || resolution == "MKT" && mkt.Set && mkt.V == 0:
		venue.Settle(m, arena.No, 0, true, at, fetched)
	case resolution == "MKT" && mkt.Set:
		venue.Settle(m, arena.Void, mkt.V, true, at, fetched)
	case resolution == "CANCEL":
		venue.Settle(m, arena.Void, 0, false, at, fetched)
	default:
		m.Status, m.Ambiguous = arena.StatusClosed, true
	}
}

// marketURL keeps a market's url when it is a Manifold page: the
// dashboard links to it, so a venue cannot make it point elsewhere.
func marketURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme != "https" || u.Host != "manifold.markets" || u.User != nil {
		return ""
	}
	return u.String()
}
