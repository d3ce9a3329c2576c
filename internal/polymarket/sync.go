package polymarket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// DisagreementThreshold is the Gamma vs CLOB price gap above which a price
// point is flagged.
const DisagreementThreshold = 0.05

// Report counts what a sync saw and changed.
type Report struct {
	Fetched     int                // market entries received from both listings, duplicates included
	Ineligible  int                // listed but closed, inactive, archived or without volume
	Duplicates  int                // entries already seen under the same id or conditionId
	Skipped     int                // entries that cannot become markets; see SkipReasons
	SkipReasons map[SkipReason]int // entries skipped, by reason
	Kept        int                // top markets by volumeNum

	venue.RefreshCounts // known markets outside the top list, re-read with GET /markets/{id}

	CLOBPrices  int // outcome prices taken from CLOB midpoints
	GammaPrices int // outcome prices from Gamma only (no order book or closed)
	Flagged     int // outcomes whose Gamma and CLOB prices differ by more than 0.05

	Inserted    int // from the store
	Updated     int
	Unchanged   int
	PricePoints int
}

func (r *Report) skip(reason SkipReason) { venue.CountSkip(&r.Skipped, &r.SkipReasons, reason) }

// String is the one-line summary the CLI prints.
func (r Report) String() string {
	skipped := venue.Skipped(r.Skipped, r.SkipReasons)
	return fmt.Sprintf("polymarket: kept %d of %d listed (%d duplicates, %d ineligible, %s skipped); "+
		"refreshed %d (%d closed, %d resolved, %d ambiguous, %d gone); prices %d clob, %d gamma, %d flagged; "+
		"saved %d new, %d updated, %d unchanged, %d price points",
		r.Kept, r.Fetched, r.Duplicates, r.Ineligible, skipped,
		r.Refreshed, r.Closed, r.Resolved, r.Ambiguous, r.RefreshMissing,
		r.CLOBPrices, r.GammaPrices, r.Flagged,
		r.Inserted, r.Updated, r.Unchanged, r.PricePoints)
}

// Sync lists the top `limit` open Polymarket markets by volumeNum, prices
// them with CLOB midpoints, re-reads every open or closed market the store
// knows that fell out of the top list (so closures and resolutions are
// recorded), and writes it all with ONE st.SaveMarkets call. Everything is
// fetched before anything is written, so an unreachable or failing source
// changes nothing in the store. Malformed upstream entries are skipped,
// logged and counted, never fatal.
func Sync(ctx context.Context, st arena.MarketStore, c *Client, limit int) (Report, error) {
	var rep Report
	if limit <= 0 {
		return rep, arena.Errorf(arena.EINVALID, "polymarket: sync limit %d must be positive", limit)
	}
	if c == nil {
		c = &Client{}
	}
	known, err := knownMarkets(ctx, st)
	if err != nil {
		return rep, err
	}
	top, err := c.topMarkets(ctx, limit, &rep)
	if err != nil {
		return rep, unavailable(ctx, err)
	}
	inTop := make(map[string]bool, len(top))
	for _, m := range top {
		inTop[m.SourceID] = true
	}
	var stale []*arena.Market
	for _, k := range known {
		if !inTop[k.SourceID] {
			stale = append(stale, k)
		}
	}
	refreshed, err := c.refresh(ctx, stale, &rep)
	if err != nil {
		return rep, unavailable(ctx, err)
	}
	all := append(top, refreshed...)

	var tokens []string
	for _, m := range all {
		if m.Status == arena.StatusOpen {
			tokens = append(tokens, m.TokenIDs...)
		}
	}
	mids, err := c.Midpoints(ctx, tokens)
	if err != nil {
		return rep, unavailable(ctx, err)
	}
	fetched := c.now().UTC()
	byID := make(map[string]*arena.Market, len(known))
	for _, k := range known {
		byID[k.SourceID] = k
	}
	for _, m := range all {
		prev := byID[m.SourceID]
		// A closed market's last price is recorded once, when it changes
		// status, not again on every sync while it waits for resolution.
		record := m.Status == arena.StatusOpen || prev == nil || prev.Status != m.Status
		applyPrices(m, mids, fetched, record, &rep, c)
	}
	if len(all) == 0 {
		return rep, nil
	}
	res, err := st.SaveMarkets(ctx, all)
	if err != nil {
		return rep, fmt.Errorf("polymarket: save %d markets: %w", len(all), err)
	}
	rep.Inserted, rep.Updated, rep.Unchanged, rep.PricePoints = res.Inserted, res.Updated, res.Unchanged, res.Prices
	return rep, nil
}

// unavailable marks an upstream failure as arena.EUNAVAILABLE, keeping the
// cause in the chain; cancellation is passed through as is.
func unavailable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", arena.Errorf(arena.EUNAVAILABLE, "polymarket unavailable"), err)
}

// knownMarkets returns the store's Polymarket markets that may still
// change upstream: open ones and closed-but-unresolved ones.
func knownMarkets(ctx context.Context, st arena.MarketStore) ([]*arena.Market, error) {
	var out []*arena.Market
	for _, s := range []arena.MarketStatus{arena.StatusOpen, arena.StatusClosed} {
		ms, err := st.Markets(ctx, arena.MarketFilter{Source: arena.SourcePolymarket, Status: s, Kind: arena.KindMarket})
		if err != nil {
			return nil, fmt.Errorf("polymarket: list known %s markets: %w", s, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// applyPrices sets m.Prices from CLOB midpoints where available, else from
// Gamma's outcomePrices (which m.Prices holds on entry), and, when record
// is set, appends both observations to m.History with their provenance.
func applyPrices(m *arena.Market, mids map[string]float64, fetched time.Time, record bool, rep *Report, c *Client) {
	gamma := m.Prices
	prices := make(map[string]float64, len(m.Outcomes))
	at := fetched.Truncate(time.Second)
	for i, o := range m.Outcomes {
		g, hasG := gamma[o]
		var mid float64
		hasMid := false
		if m.Status == arena.StatusOpen && i < len(m.TokenIDs) {
			mid, hasMid = mids[m.TokenIDs[i]]
		}
		flagged := hasG && hasMid && math.Abs(g-mid) > DisagreementThreshold+1e-9
		if flagged {
			rep.Flagged++
			c.log().Info("polymarket: gamma and clob prices disagree", "market", m.SourceID, "outcome", o, "gamma", g, "clob", mid)
		}
		switch {
		case hasMid:
			prices[o] = mid
			rep.CLOBPrices++
		case hasG:
			prices[o] = g
			rep.GammaPrices++
		}
		if !record {
			continue
		}
		if hasG {
			m.History = append(m.History, arena.PricePoint{Outcome: o, Time: at, Price: g, Source: arena.PriceGamma, FetchedAt: fetched, Flagged: flagged})
		}
		if hasMid {
			m.History = append(m.History, arena.PricePoint{Outcome: o, Time: at, Price: mid, Source: arena.PriceCLOBMid, FetchedAt: fetched, Flagged: flagged})
		}
	}
	if len(prices) == 0 {
		prices = nil
	}
	m.Prices = prices
}

// topMarkets returns the limit open markets with the highest volumeNum
// from both Gamma listings, merged and de-duplicated, with Prices holding
// Gamma's outcomePrices, counting the listings in rep.
func (c *Client) topMarkets(ctx context.Context, limit int, rep *Report) ([]*arena.Market, error) {
	col := &collector{
		byID: map[string]*arena.Market{}, byCond: map[string]*arena.Market{},
		rep: rep, now: c.now().UTC(), c: c,
	}
	if err := c.listMarkets(ctx, col, limit); err != nil {
		return nil, err
	}
	if err := c.listEvents(ctx, col, limit); err != nil {
		return nil, err
	}
	ms := col.list
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Volume != ms[j].Volume {
			return ms[i].Volume > ms[j].Volume
		}
		return idLess(ms[i].SourceID, ms[j].SourceID)
	})
	if len(ms) > limit {
		ms = ms[:limit]
	}
	rep.Kept = len(ms)
	return ms, nil
}

// idLess orders Gamma's numeric string ids numerically, others as strings.
func idLess(a, b string) bool {
	if len(a) != len(b) {
		_, ea := strconv.ParseUint(a, 10, 64)
		_, eb := strconv.ParseUint(b, 10, 64)
		if ea == nil && eb == nil {
			return len(a) < len(b)
		}
	}
	return a < b
}

// collector merges listing entries, de-duplicating by id and conditionId.
type collector struct {
	byID, byCond map[string]*arena.Market
	list         []*arena.Market
	rep          *Report
	now          time.Time
	c            *Client
}

func (col *collector) add(raw json.RawMessage, ev *gammaEventRef, listing string) {
	col.rep.Fetched++
	e, err := decodeMarket(raw, ev, col.now)
	if err != nil {
		reason := skipReason(err)
		col.rep.skip(reason)
		col.c.log().Warn("polymarket: skipping market", "listing", listing, "reason", reason, "err", err)
		return
	}
	if !e.Eligible {
		col.rep.Ineligible++
		return
	}
	m := e.M
	prev := col.byID[m.SourceID]
	if prev == nil && m.ConditionID != "" {
		prev = col.byCond[m.ConditionID]
	}
	if prev != nil {
		col.rep.Duplicates++
		// The /events listing knows the event (slug, tags) better than a
		// bare /markets entry; fill what the first sighting lacked.
		prev.EventID = or(prev.EventID, m.EventID)
		prev.EventSlug = or(prev.EventSlug, m.EventSlug)
		prev.Category = or(prev.Category, m.Category)
		prev.URL = marketURL(prev.EventSlug, prev.Slug)
		return
	}
	col.byID[m.SourceID] = m
	if m.ConditionID != "" {
		col.byCond[m.ConditionID] = m
	}
	col.list = append(col.list, m)
}

// threshold is the volume of the limit-th largest market collected, or 0
// while fewer are known: nothing below it can enter the top list.
func (col *collector) threshold(limit int) float64 {
	if len(col.list) < limit {
		return 0
	}
	vs := make([]float64, len(col.list))
	for i, m := range col.list {
		vs[i] = m.Volume
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(vs)))
	return vs[limit-1]
}

// listMarkets pages through GET /markets ordered by volumeNum descending.
// Once `limit` eligible markets are in hand, later pages hold only smaller
// markets, so paging stops. A page shorter than requested is not taken as
// the end, since Gamma may cap the page size; an empty page is.
func (c *Client) listMarkets(ctx context.Context, col *collector, limit int) error {
	offset := 0
	for page := 0; page < c.maxPages(); page++ {
		q := url.Values{
			"limit": {strconv.Itoa(c.pageSize())}, "offset": {strconv.Itoa(offset)},
			"active": {"true"}, "closed": {"false"}, "order": {"volumeNum"}, "ascending": {"false"},
		}
		var items []json.RawMessage
		if err := c.getJSON(ctx, c.gammaBase(), "/markets", q, &items); err != nil {
			return fmt.Errorf("polymarket: list markets at offset %d: %w", offset, err)
		}
		if len(items) == 0 {
			return nil
		}
		for _, raw := range items {
			col.add(raw, nil, "markets")
		}
		offset += len(items)
		if len(col.list) >= limit {
			return nil
		}
	}
	c.log().Warn("polymarket: stopped paging /markets at the page cap", "pages", c.maxPages(), "markets", len(col.list))
	return nil
}

// listEvents pages through GET /events ordered by event volume descending
// and collects their eligible sub-markets. An event's volume is at least
// that of each of its markets, so once an event's volume falls below the
// current top-`limit` threshold no later event can contribute.
func (c *Client) listEvents(ctx context.Context, col *collector, limit int) error {
	offset := 0
	for page := 0; page < c.maxPages(); page++ {
		q := url.Values{
			"limit": {strconv.Itoa(c.pageSize())}, "offset": {strconv.Itoa(offset)},
			"closed": {"false"}, "order": {"volume"}, "ascending": {"false"},
		}
		var items []json.RawMessage
		if err := c.getJSON(ctx, c.gammaBase(), "/events", q, &items); err != nil {
			return fmt.Errorf("polymarket: list events at offset %d: %w", offset, err)
		}
		if len(items) == 0 {
			return nil
		}
		done := false
		for _, raw := range items {
			ev, err := decodeEvent(raw)
			if err != nil {
				col.rep.skip(skipReason(err))
				c.log().Warn("polymarket: skipping event", "reason", skipReason(err), "err", err)
				continue
			}
			for _, mraw := range ev.Markets {
				col.add(mraw, &ev.gammaEventRef, "events")
			}
			if ev.Volume.Set && ev.Volume.V < col.threshold(limit) {
				done = true
			}
		}
		if done {
			return nil
		}
		offset += len(items)
	}
	c.log().Warn("polymarket: stopped paging /events at the page cap", "pages", c.maxPages(), "markets", len(col.list))
	return nil
}

// Market re-reads one market with GET /markets/{id}. A market Gamma no
// longer serves is an arena.ENOTFOUND error; a malformed one a *SkipError.
func (c *Client) Market(ctx context.Context, id string) (*arena.Market, error) {
	var raw json.RawMessage
	err := c.getJSON(ctx, c.gammaBase(), "/markets/"+url.PathEscape(id), nil, &raw)
	if statusCode(err) == http.StatusNotFound {
		return nil, arena.Errorf(arena.ENOTFOUND, "polymarket: market %s not found upstream", id)
	}
	if err != nil {
		return nil, fmt.Errorf("polymarket: get market %s: %w", id, err)
	}
	// Tolerate a one-element array, as the list endpoint would answer.
	if t := strings.TrimSpace(string(raw)); strings.HasPrefix(t, "[") {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil || len(arr) != 1 {
			return nil, skip(SkipInvalidJSON, id, "expected one market, got %.60s", t)
		}
		raw = arr[0]
	}
	e, err := decodeMarket(raw, nil, c.now().UTC())
	if err != nil {
		return nil, err
	}
	if e.M.SourceID != id {
		return nil, skip(SkipInvalid, id, "asked for market %s, got %s", id, e.M.SourceID)
	}
	return e.M, nil
}

// refresh re-reads known markets. Markets that vanished upstream or now
// decode badly are logged and left as stored; any other failure aborts the
// sync so a flaky source cannot half-update the store.
func (c *Client) refresh(ctx context.Context, known []*arena.Market, rep *Report) ([]*arena.Market, error) {
	out := make([]*arena.Market, len(known))
	var mu sync.Mutex
	idx := make([]int, len(known))
	for i := range idx {
		idx[i] = i
	}
	err := forEach(ctx, c.concurrency(), idx, func(ctx context.Context, i int) error {
		k := known[i]
		m, err := c.Market(ctx, k.SourceID)
		var se *SkipError
		switch {
		case arena.ErrorKind(err) == arena.ENOTFOUND:
			c.log().Warn("polymarket: known market gone upstream", "market", k.SourceID)
			mu.Lock()
			rep.RefreshMissing++
			mu.Unlock()
			return nil
		case errors.As(err, &se):
			c.log().Warn("polymarket: skipping refreshed market", "market", k.SourceID, "reason", se.Reason, "err", err)
			mu.Lock()
			rep.skip(se.Reason)
			mu.Unlock()
			return nil
		case err != nil:
			return err
		}
		// Gamma's single-market answer may lack what the listing had.
		m.Category = or(m.Category, k.Category)
		m.EventID = or(m.EventID, k.EventID)
		m.EventSlug = or(m.EventSlug, k.EventSlug)
		m.URL = or(m.URL, k.URL)
		out[i] = m
		mu.Lock()
		rep.Count(m, k)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(m *arena.Market) bool { return m == nil }), nil
}
