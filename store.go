package arena

import (
	"context"
	"time"
)

// MarketStore persists markets and their price history. Implemented by
// store.DB on SQLite and PostgreSQL with identical behaviour.
type MarketStore interface {
	// SaveMarkets upserts markets by (Source, SourceID) and appends each
	// market's History, all in one transaction: on error nothing changes.
	// IDs are filled in on the given markets.
	SaveMarkets(ctx context.Context, markets []*Market) (SaveResult, error)
	Market(ctx context.Context, id int64) (*Market, error)
	MarketBySource(ctx context.Context, source, sourceID string) (*Market, error)
	// MarketsByID loads the given markets in one query; a missing id is
	// ENOTFOUND.
	MarketsByID(ctx context.Context, ids []int64) (map[int64]*Market, error)
	// Markets lists markets by volume descending, then id.
	Markets(ctx context.Context, f MarketFilter) ([]*Market, error)
	// MarketList is a page of markets as f selects them, with the number
	// of markets f selects over all pages (the cursor aside).
	MarketList(ctx context.Context, f MarketListFilter) ([]MarketListing, int, error)
	// MarketFacets lists the stored markets' sources and categories.
	MarketFacets(ctx context.Context) (MarketFacets, error)
	// PriceHistory returns a market's stored prices in [from, to] ordered by time.
	PriceHistory(ctx context.Context, marketID int64, outcome string, from, to time.Time) ([]PricePoint, error)
	// ResolveMarket records a resolution (an outcome name or Void) and
	// appends leaves to the log in the same transaction, and reports
	// whether it changed the market: the resolution the market has already
	// is neither written nor logged again.
	ResolveMarket(ctx context.Context, id int64, resolution string, at time.Time, leaves ...*LogLeaf) (bool, error)
}

// JobStore claims scheduled job runs so that any number of replicas run
// each (job, period) exactly once.
type JobStore interface {
	// ClaimJob inserts the unique (name, period) row; it reports false when
	// another runner holds it (a claim left unfinished past its lease may
	// be taken over, see store.JobLease).
	ClaimJob(ctx context.Context, name string, period time.Time, owner string) (bool, error)
	// FinishJob records the outcome of a claimed run.
	FinishJob(ctx context.Context, name string, period time.Time, runErr error) error
}

// SettingStore keeps deployment settings that several commands share
// through the database (a key → value map).
type SettingStore interface {
	// Setting returns the value under key; ok is false when none is stored.
	Setting(ctx context.Context, key string) (value string, ok bool, err error)
	// PutSetting stores value under key, replacing any earlier value.
	PutSetting(ctx context.Context, key, value string) error
	// InitSetting stores value under key unless a value is there already,
	// and returns the stored value.
	InitSetting(ctx context.Context, key, value string) (string, error)
}
