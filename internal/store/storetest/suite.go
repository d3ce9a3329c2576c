package storetest

import (
	"testing"

	"github.com/forecast-arena/arena/internal/store"
)

// suite is every promise the store keeps, whatever the engine: each test
// gets a fresh, migrated, empty database.
var suite = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"SaveMarketsRoundTrip", testSaveMarketsRoundTrip},
	{"SaveMarketsAtomic", testSaveMarketsAtomic},
	{"MarketsByVenue", testMarketsByVenue},
	{"ResolveMarket", testResolveMarket},
	{"ClaimJobOnce", testClaimJobOnce},
	{"SaveMarketsNULBytes", testSaveMarketsNULBytes},
	{"ClaimJobLease", testClaimJobLease},
	{"MarketsByID", testMarketsByID},
	{"MarketList", testMarketList},
	{"MarketListThousands", testMarketListThousands},
	{"ManyPricePoints", testManyPricePoints},
	{"CohortUniquePerWeek", testCohortUniquePerWeek},
	{"DecisionClaims", testDecisionClaims},
	{"SettleSnapshotsAndCompletion", testSettleSnapshotsAndCompletion},
	{"StaleClaimsRespectMaxAttempts", testStaleClaimsRespectMaxAttempts},
	{"DecisionKeepsSnapshotMark", testDecisionKeepsSnapshotMark},
	{"Settings", testSettings},
	{"OracleResolutions", testOracleResolutions},
	{"OracleFlag", testOracleFlag},
	{"OracleApplyAtomic", testOracleApplyAtomic},
	{"OracleDispute", testOracleDispute},
	{"OracleReResolveRace", testOracleReResolveRace},
	{"OracleInputText", testOracleInputText},
	{"ConcurrentBenchmarks", testConcurrentBenchmarks},
	{"ChainTxs", testChainTxs},
	{"SignedDeadlines", testSignedDeadlines},
	{"Health", testHealth},
	{"RateBuckets", testRateBuckets},
	{"AgentProfiles", testAgentProfiles},
	{"LogCheckpoints", testLogCheckpoints},
	{"LogTiles", testLogTiles},
	{"HumanForecasts", testHumanForecasts},
	{"ExportStore", testExportStore},
	{"Versions", testVersions},
}

// Suite runs the store's conformance suite on databases from open, in the
// style of go-ethereum's dbtest.TestDatabaseSuite: an engine that passes it
// keeps every promise the rest of the program relies on.
func Suite(t *testing.T, open func(t *testing.T) *store.DB) {
	for _, c := range suite {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}
