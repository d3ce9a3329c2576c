package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

const marketColumns = `id, source, source_id, kind, origin, question, criteria, background, url, category,
	event_id, type, outcomes, prices, volume, liquidity, open_time, close_time, status, resolution,
	resolved_at, ambiguous, condition_id, token_ids, slug, event_slug, neg_risk, uma_status,
	freeze_time, freeze_value, resolution_date, updated_at, resolved_by`

// marketRow is a market encoded for storage.
type marketRow struct {
	outcomes, tokenIDs string
	prices             sql.NullString
	digest             string
}

func encodeMarket(m *arena.Market) (marketRow, error) {
	var r marketRow
	b, err := json.Marshal(m.Outcomes)
	if err != nil {
		return r, err
	}
	r.outcomes = string(b)
	tok := m.TokenIDs
	if tok == nil {
		tok = []string{}
	}
	if b, err = json.Marshal(tok); err != nil {
		return r, err
	}
	r.tokenIDs = string(b)
	if m.Prices != nil {
		if b, err = json.Marshal(m.Prices); err != nil { // map keys are sorted: stable
			return r, err
		}
		r.prices = sql.NullString{String: string(b), Valid: true}
	}
	r.digest = digest(m, r)
	return r, nil
}

// digest fingerprints every stored field so re-saving an identical market
// is a no-op that reports "unchanged".
func digest(m *arena.Market, r marketRow) string {
	h := sha256.New()
	fv := "null"
	if m.FreezeValue != nil {
		fv = fmt.Sprint(*m.FreezeValue)
	}
	fmt.Fprintf(h, "%q|%q|%q|%q|%q|%q|%q|%q|%q|%q|%q|%s|%v|%v|%d|%d|%q|%q|%d|%v|%q|%s|%q|%q|%v|%q|%d|%s|%d",
		m.Source, m.SourceID, m.Kind, m.Origin, m.Question, m.Criteria, m.Background, m.URL, m.Category,
		m.EventID, m.Type, r.outcomes, r.prices.String, m.Volume, unix(m.OpenTime), unix(m.CloseTime),
		m.Status, m.Resolution, unix(m.ResolvedAt), m.Ambiguous, m.ConditionID, r.tokenIDs, m.Slug,
		m.EventSlug, m.NegRisk, m.UMAStatus, unix(m.FreezeTime), fv, unix(m.ResolutionDate))
	fmt.Fprintf(h, "|%v", m.Liquidity)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// stripNUL removes NUL bytes from text fields: PostgreSQL refuses them in
// TEXT while SQLite keeps them, and one upstream market with a stray
// \u0000 must not fail a whole sync on one engine only.
func stripNUL(m *arena.Market) {
	for _, f := range []*string{&m.Question, &m.Criteria, &m.Background, &m.URL, &m.Category, &m.EventID,
		&m.Origin, &m.ConditionID, &m.Slug, &m.EventSlug, &m.UMAStatus} {
		if strings.IndexByte(*f, 0) >= 0 {
			*f = strings.ReplaceAll(*f, "\x00", "")
		}
	}
}

type existing struct {
	id         int64
	digest     string
	status     arena.MarketStatus
	resolution string
	resolvedAt sql.NullInt64
	flagged    bool // flagged or disputed by an admin: resolved by the oracle alone
}

// SaveMarkets implements arena.MarketStore.
func (d *DB) SaveMarkets(ctx context.Context, markets []*arena.Market) (arena.SaveResult, error) {
	var res arena.SaveResult
	for _, m := range markets {
		if err := m.Validate(); err != nil {
			return res, err
		}
	}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		res = arena.SaveResult{}
		known, err := d.loadExisting(ctx, tx, markets)
		if err != nil {
			return err
		}
		now := d.Now().UnixMicro()
		upd, err := tx.PrepareContext(ctx, d.rebind(`UPDATE markets SET kind=?, origin=?, question=?, criteria=?,
			background=?, url=?, category=?, event_id=?, type=?, outcomes=?, prices=?, volume=?, liquidity=?,
			open_time=?, close_time=?, status=?, resolution=?, resolved_at=?, ambiguous=?, condition_id=?,
			token_ids=?, slug=?, event_slug=?, neg_risk=?, uma_status=?, freeze_time=?, freeze_value=?,
			resolution_date=?, digest=?, updated_at=? WHERE id=?`))
		if err != nil {
			return fmt.Errorf("store: prepare market update: %w", err)
		}
		defer upd.Close()
		seen := map[[2]string]bool{}
		var inserts [][]any
		var inserted []*arena.Market
		for _, m := range markets {
			key := [2]string{m.Source, m.SourceID}
			if seen[key] {
				return arena.Errorf(arena.EINVALID, "store: market %s appears twice in one batch", m)
			}
			seen[key] = true
			ex, found := known[key]
			mm := *m
			stripNUL(&mm)
			switch {
			case found && ex.flagged && ex.resolution == "":
				// Flagged by an admin: whatever the source reports, the market
				// waits for the oracle, as an ambiguous one does.
				mm.Resolution, mm.ResolvedAt, mm.Ambiguous = "", time.Time{}, true
			case found && ex.resolution != "" && (mm.Resolution == "" || ex.flagged):
				// A resolution, once recorded (upstream, oracle or admin), is
				// never cleared by a later sync that no longer reports it, and
				// a flagged or disputed market's comes from the oracle alone.
				mm.Status, mm.Resolution, mm.ResolvedAt, mm.Ambiguous = ex.status, ex.resolution, fromMicros(ex.resolvedAt), false
			}
			r, err := encodeMarket(&mm)
			if err != nil {
				return fmt.Errorf("store: encode market %s: %w", m, err)
			}
			var fv any
			if mm.FreezeValue != nil {
				fv = *mm.FreezeValue
			}
			fields := []any{mm.Kind, mm.Origin, mm.Question, mm.Criteria, mm.Background, mm.URL, mm.Category,
				mm.EventID, string(mm.Type), r.outcomes, r.prices, mm.Volume, mm.Liquidity, micros(mm.OpenTime),
				micros(mm.CloseTime), string(mm.Status), mm.Resolution, micros(mm.ResolvedAt), mm.Ambiguous,
				mm.ConditionID, r.tokenIDs, mm.Slug, mm.EventSlug, mm.NegRisk, mm.UMAStatus,
				micros(mm.FreezeTime), fv, micros(mm.ResolutionDate), r.digest, now}
			switch {
			case !found:
				inserts = append(inserts, append([]any{mm.Source, mm.SourceID}, fields...))
				inserted = append(inserted, m)
			case ex.digest == r.digest:
				m.ID = ex.id
				res.Unchanged++
			default:
				m.ID = ex.id
				if _, err := upd.ExecContext(ctx, append(fields, ex.id)...); err != nil {
					return fmt.Errorf("store: update market %s: %w", m, err)
				}
				res.Updated++
			}
		}
		if err := d.insertMarkets(ctx, tx, inserts, inserted); err != nil {
			return err
		}
		res.Inserted = len(inserted)
		var pts []arena.PricePoint
		for _, m := range markets {
			for _, p := range m.History {
				p.MarketID = m.ID
				pts = append(pts, p)
			}
		}
		n, err := d.addPrices(ctx, tx, pts)
		if err != nil {
			return err
		}
		res.Prices = n
		if res.Inserted+res.Updated+res.Prices > 0 {
			d.touch(tx, arena.DomainMarkets)
		}
		return nil
	})
	if err != nil {
		return arena.SaveResult{}, err
	}
	return res, nil
}

// loadExisting fetches id, digest and resolution of the batch's markets
// already stored, one query per source.
func (d *DB) loadExisting(ctx context.Context, q queryer, markets []*arena.Market) (map[[2]string]existing, error) {
	bySource := map[string]map[string]bool{}
	for _, m := range markets {
		if bySource[m.Source] == nil {
			bySource[m.Source] = map[string]bool{}
		}
		bySource[m.Source][m.SourceID] = true
	}
	out := map[[2]string]existing{}
	for src, ids := range bySource {
		rows, err := q.QueryContext(ctx, d.rebind(`SELECT source_id, id, digest, status, resolution, resolved_at,
			EXISTS (SELECT 1 FROM oracle_flags f WHERE f.market_id = markets.id)
			OR EXISTS (SELECT 1 FROM oracle_disputes x WHERE x.market_id = markets.id) FROM markets WHERE source = ?`), src)
		if err != nil {
			return nil, fmt.Errorf("store: load markets of %s: %w", src, err)
		}
		for rows.Next() {
			var sid string
			var e existing
			if err := rows.Scan(&sid, &e.id, &e.digest, &e.status, &e.resolution, &e.resolvedAt, &e.flagged); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: scan market of %s: %w", src, err)
			}
			if ids[sid] {
				out[[2]string{src, sid}] = e
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const marketInsertColumns = `source, source_id, kind, origin, question, criteria, background, url, category,
	event_id, type, outcomes, prices, volume, liquidity, open_time, close_time, status, resolution, resolved_at,
	ambiguous, condition_id, token_ids, slug, event_slug, neg_risk, uma_status, freeze_time, freeze_value,
	resolution_date, digest, updated_at`

// insertMarkets inserts rows in multi-row statements (one round trip per
// chunk, which matters for imports of tens of thousands of markets) and
// sets the new ids, matched back by source id.
func (d *DB) insertMarkets(ctx context.Context, tx *sql.Tx, rows [][]any, ms []*arena.Market) error {
	const chunk = 200 // 32 columns: well under both engines' parameter limits
	for lo := 0; lo < len(rows); lo += chunk {
		hi := min(lo+chunk, len(rows))
		var args []any
		var vals []string
		for _, r := range rows[lo:hi] {
			vals = append(vals, "("+placeholderList(len(r))+")")
			args = append(args, r...)
		}
		q := `INSERT INTO markets (` + marketInsertColumns + `) VALUES ` + strings.Join(vals, ",") + ` RETURNING id, source, source_id`
		res, err := tx.QueryContext(ctx, d.rebind(q), args...)
		if err != nil {
			return fmt.Errorf("store: insert markets: %w", err)
		}
		ids := map[[2]string]int64{}
		for res.Next() {
			var id int64
			var src, sid string
			if err := res.Scan(&id, &src, &sid); err != nil {
				res.Close()
				return fmt.Errorf("store: insert markets: %w", err)
			}
			ids[[2]string{src, sid}] = id
		}
		if err := res.Close(); err != nil {
			return fmt.Errorf("store: insert markets: %w", err)
		}
		for _, m := range ms[lo:hi] {
			id, ok := ids[[2]string{m.Source, m.SourceID}]
			if !ok {
				return fmt.Errorf("store: insert market %s: no id returned", m)
			}
			m.ID = id
		}
	}
	return nil
}

func scanMarket(sc scanner) (*arena.Market, error) {
	var (
		m                                                   arena.Market
		outcomes, tokenIDs                                  string
		prices                                              sql.NullString
		openT, closeT, resolvedT, freezeT, resDate, updated sql.NullInt64
		fv                                                  sql.NullFloat64
		typ, status                                         string
	)
	err := sc.Scan(&m.ID, &m.Source, &m.SourceID, &m.Kind, &m.Origin, &m.Question, &m.Criteria, &m.Background,
		&m.URL, &m.Category, &m.EventID, &typ, &outcomes, &prices, &m.Volume, &m.Liquidity, &openT, &closeT,
		&status, &m.Resolution, &resolvedT, &m.Ambiguous, &m.ConditionID, &tokenIDs, &m.Slug, &m.EventSlug,
		&m.NegRisk, &m.UMAStatus, &freezeT, &fv, &resDate, &updated, &m.ResolvedBy)
	if err != nil {
		return nil, err
	}
	m.Type, m.Status = arena.MarketType(typ), arena.MarketStatus(status)
	if err := json.Unmarshal([]byte(outcomes), &m.Outcomes); err != nil {
		return nil, fmt.Errorf("store: market %d outcomes: %w", m.ID, err)
	}
	if err := json.Unmarshal([]byte(tokenIDs), &m.TokenIDs); err != nil {
		return nil, fmt.Errorf("store: market %d token ids: %w", m.ID, err)
	}
	if len(m.TokenIDs) == 0 {
		m.TokenIDs = nil
	}
	if prices.Valid {
		if err := json.Unmarshal([]byte(prices.String), &m.Prices); err != nil {
			return nil, fmt.Errorf("store: market %d prices: %w", m.ID, err)
		}
	}
	if fv.Valid {
		v := fv.Float64
		m.FreezeValue = &v
	}
	m.OpenTime, m.CloseTime, m.ResolvedAt = fromMicros(openT), fromMicros(closeT), fromMicros(resolvedT)
	m.FreezeTime, m.ResolutionDate, m.UpdatedAt = fromMicros(freezeT), fromMicros(resDate), fromMicros(updated)
	return &m, nil
}

// Market implements arena.MarketStore.
func (d *DB) Market(ctx context.Context, id int64) (*arena.Market, error) {
	st, err := d.stmt(ctx, `SELECT `+marketColumns+` FROM markets WHERE id = ?`)
	if err != nil {
		return nil, err
	}
	return lookup(st.QueryRowContext(ctx, id), scanMarket, fmt.Sprintf("market %d", id))
}

// MarketsByID implements arena.MarketStore.
func (d *DB) MarketsByID(ctx context.Context, ids []int64) (map[int64]*arena.Market, error) {
	return d.marketsByID(ctx, d.r(), ids)
}

func (d *DB) marketsByID(ctx context.Context, q queryer, ids []int64) (map[int64]*arena.Market, error) {
	out := make(map[int64]*arena.Market, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	ph := placeholderList(len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	ms, err := queryAll(ctx, q, d.rebind(`SELECT `+marketColumns+` FROM markets WHERE id IN (`+ph+`)`), args, scanMarket)
	if err != nil {
		return nil, fmt.Errorf("store: load markets: %w", err)
	}
	for _, m := range ms {
		out[m.ID] = m
	}
	for _, id := range ids {
		if out[id] == nil {
			return nil, arena.Errorf(arena.ENOTFOUND, "market %d not found", id)
		}
	}
	return out, nil
}

// MarketBySource implements arena.MarketStore.
func (d *DB) MarketBySource(ctx context.Context, source, sourceID string) (*arena.Market, error) {
	return lookup(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+marketColumns+` FROM markets WHERE source = ? AND source_id = ?`), source, sourceID),
		scanMarket, fmt.Sprintf("market %s/%s", source, sourceID))
}

// Markets implements arena.MarketStore.
// venueColumn is a market's venue in SQL, as arena.VenueOf has it: its
// source, or a simulated market's origin when it names one.
const venueColumn = `(CASE WHEN source = '` + arena.SourceSim + `' AND origin <> '' THEN origin ELSE source END)`

func (d *DB) Markets(ctx context.Context, f arena.MarketFilter) ([]*arena.Market, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.Type != "" {
		add("type = ?", string(f.Type))
	}
	if !f.ClosesAfter.IsZero() {
		add("close_time > ?", f.ClosesAfter.UnixMicro())
	}
	if f.Traded {
		where = append(where, venueColumn+` NOT IN (`+placeholderList(len(arena.UntradedVenues))+`)`)
		for _, v := range arena.UntradedVenues {
			args = append(args, v)
		}
	}
	q := `SELECT ` + marketColumns + ` FROM markets`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY volume DESC, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	out, err := queryAll(ctx, d.r(), d.rebind(q), args, scanMarket)
	if err != nil {
		return nil, fmt.Errorf("store: list markets: %w", err)
	}
	return out, nil
}

// MarketList implements arena.MarketStore: the page, the total and the
// page's forecaster counts in three queries, whatever the page size.
func (d *DB) MarketList(ctx context.Context, f arena.MarketListFilter) ([]arena.MarketListing, int, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if f.Venue != "" {
		add(venueColumn+" = ?", f.Venue)
	}
	if f.Category != "" {
		add("category = ?", f.Category)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	cond := func() string {
		if len(where) == 0 {
			return ""
		}
		return ` WHERE ` + strings.Join(where, " AND ")
	}
	var total int
	if err := d.r().QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM markets`+cond()), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: count markets: %w", err)
	}
	if f.Before > 0 {
		add("id < ?", f.Before)
	}
	q := `SELECT ` + marketColumns + ` FROM markets` + cond() + ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	ms, err := queryAll(ctx, d.r(), d.rebind(q), args, scanMarket)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list markets: %w", err)
	}
	out := make([]arena.MarketListing, len(ms))
	if len(ms) == 0 {
		return out, total, nil
	}
	ids := make([]any, len(ms))
	at := make(map[int64]int, len(ms))
	for i, m := range ms {
		out[i].Market, ids[i], at[m.ID] = m, m.ID, i
	}
	// A scored forecast exists only once its round is triggered; the join
	// with the revealed submissions leaves out the baselines and forfeits.
	rows, err := d.r().QueryContext(ctx, d.rebind(`SELECT f.market_id, COUNT(DISTINCT f.agent) FROM scored_forecasts f
		JOIN submissions s ON s.round_id = f.round_id AND s.agent = f.agent
		WHERE s.predictions IS NOT NULL AND f.market_id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)
		GROUP BY f.market_id`), ids...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: count forecasters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, 0, fmt.Errorf("store: count forecasters: %w", err)
		}
		out[at[id]].Forecasters = n
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: count forecasters: %w", err)
	}
	return out, total, nil
}

// MarketFacets implements arena.MarketStore.
func (d *DB) MarketFacets(ctx context.Context) (arena.MarketFacets, error) {
	var out arena.MarketFacets
	for _, c := range []struct {
		name, col string
		into      *[]string
	}{{"sources", "source", &out.Sources}, {"categories", "category", &out.Categories}, {"venues", venueColumn, &out.Venues}} {
		vs, err := queryAll(ctx, d.r(), `SELECT DISTINCT `+c.col+` FROM markets WHERE `+c.col+` <> ''`, nil,
			func(sc scanner) (string, error) {
				var v string
				return v, sc.Scan(&v)
			})
		if err != nil {
			return out, fmt.Errorf("store: market %s: %w", c.name, err)
		}
		slices.Sort(vs) // in Go: the engines' text collations differ
		*c.into = append([]string{}, vs...)
	}
	return out, nil
}

// ResolveMarket implements arena.MarketStore.
// A market flagged for the oracle and not yet resolved is a conflict: the
// oracle resolves it.
func (d *DB) ResolveMarket(ctx context.Context, id int64, resolution string, at time.Time, leaves ...*arena.LogLeaf) (bool, error) {
	changed := false
	err := d.tx(ctx, func(tx *sql.Tx) error {
		changed = false
		// The market first: a flag committing meanwhile is then seen.
		if _, err := d.lockMarket(ctx, tx, id); err != nil {
			return err
		}
		var flagged, resolved int
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*), COALESCE(MAX(CASE WHEN m.resolution <> '' THEN 1 ELSE 0 END), 0)
			FROM oracle_flags f JOIN markets m ON m.id = f.market_id WHERE f.market_id = ?`), id).Scan(&flagged, &resolved); err != nil {
			return fmt.Errorf("store: resolve market %d: %w", id, err)
		}
		if flagged > 0 && resolved == 0 {
			return arena.Errorf(arena.ECONFLICT, "market %d is flagged for the oracle; decide it there", id)
		}
		var err error
		if changed, err = d.setResolution(ctx, tx, id, resolution, at, false, arena.ResolvedByOperator); err != nil || !changed {
			return err
		}
		return d.appendLeaves(ctx, tx, at, leaves)
	})
	return changed, err
}

// setResolution resolves a market inside tx, recording who resolved it
// (see arena.Market.ResolvedBy), and reports whether it changed: the
// resolution the market has already is not written again. Unless replace
// is set, a market already resolved otherwise is a conflict.
func (d *DB) setResolution(ctx context.Context, tx *sql.Tx, id int64, resolution string, at time.Time, replace bool, by string) (bool, error) {
	// Locked, so that of two resolutions racing on PostgreSQL the second
	// reads the first's once it commits, and finds it in force.
	m, err := d.lockMarket(ctx, tx, id)
	if err != nil {
		return false, err
	}
	name, ok := m.ResolutionName(resolution)
	if !ok {
		return false, arena.Errorf(arena.EINVALID, "market %d: %q is not an outcome (want one of %v or %s)", id, resolution, m.Outcomes, arena.Void)
	}
	resolution = name
	if m.Resolution == resolution {
		return false, nil
	}
	if !replace && m.Resolution != "" {
		return false, arena.Errorf(arena.ECONFLICT, "market %d already resolved to %s (to correct it, dispute it through the oracle)", id, m.Resolution)
	}
	m.Status, m.Resolution, m.ResolvedAt, m.Ambiguous = arena.StatusResolved, resolution, at.UTC(), false
	r, err := encodeMarket(m)
	if err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, d.rebind(`UPDATE markets SET status = ?, resolution = ?, resolved_at = ?, ambiguous = ?, digest = ?, updated_at = ?, resolved_by = ? WHERE id = ?`),
		string(m.Status), m.Resolution, micros(m.ResolvedAt), false, r.digest, d.Now().UnixMicro(), by, id)
	if err != nil {
		return false, fmt.Errorf("store: resolve market %d: %w", id, err)
	}
	d.touch(tx, arena.DomainMarkets)
	return true, nil
}
