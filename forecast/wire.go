package forecast

import (
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Wire types of the forecast track's HTTP API (/api/v1), shared by the
// server (web) and the reference participant, so both ends agree by
// construction. Hex values are 0x-prefixed; addresses are accepted in any
// case and returned checksummed; times are RFC 3339.

// RoundJSON is GET /api/v1/rounds/{id} and an element of GET /api/v1/rounds.
type RoundJSON struct {
	ID             uint64            `json:"id"`
	Status         string            `json:"status"` // open|revealing|scoring|scored
	CommitDeadline time.Time         `json:"commit_deadline"`
	RevealStart    time.Time         `json:"reveal_start"`
	RevealDeadline time.Time         `json:"reveal_deadline"`
	Markets        []RoundMarketJSON `json:"markets"`
	Benchmarks     []*float64        `json:"benchmarks,omitempty"` // after the commit deadline; null = no benchmark
	Outcomes       []*string         `json:"outcomes,omitempty"`   // after trigger: "YES"|"NO"|"VOID", null = unresolved
	Domain         *DomainJSON       `json:"domain,omitempty"`
}

// RoundMarketJSON is one market of a round, referenced by index.
type RoundMarketJSON struct {
	Index     int       `json:"index"`
	MarketID  int64     `json:"market_id"`
	Question  string    `json:"question"`
	Category  string    `json:"category"`
	Venue     string    `json:"venue"` // where the question trades: polymarket, kalshi, manifold, metaculus (sim offline)
	CloseTime time.Time `json:"close_time"`
	Price     *float64  `json:"price"` // latest known YES price when the round was listed
}

// DomainJSON is GET /api/v1/domain: what agents sign under.
type DomainJSON struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	ChainID           uint64 `json:"chain_id"`
	VerifyingContract string `json:"verifying_contract"`
}

// NonceJSON is GET /api/v1/agents/{address}/nonce.
type NonceJSON struct {
	Nonce uint64 `json:"nonce"`
}

// CommitRequest is POST /api/v1/rounds/{id}/commits.
type CommitRequest struct {
	Agent         string `json:"agent"`
	CommitHash    string `json:"commit_hash"`
	ReasoningHash string `json:"reasoning_hash,omitempty"`
	Nonce         uint64 `json:"nonce"`
	Deadline      uint64 `json:"deadline"`
	Signature     string `json:"signature"`
	// Optional: the domain the agent signed under; a mismatch is rejected
	// with domain_mismatch instead of the less helpful signer_mismatch.
	ChainID           *uint64         `json:"chain_id,omitempty"`
	VerifyingContract *common.Address `json:"verifying_contract,omitempty"`
}

// RevealRequest is POST /api/v1/rounds/{id}/reveals.
type RevealRequest struct {
	Agent             string          `json:"agent"`
	Predictions       []uint16        `json:"predictions"`
	Salt              string          `json:"salt"`
	Nonce             uint64          `json:"nonce"`
	Deadline          uint64          `json:"deadline"`
	Signature         string          `json:"signature"`
	ChainID           *uint64         `json:"chain_id,omitempty"`
	VerifyingContract *common.Address `json:"verifying_contract,omitempty"`
}

// SubmissionJSON is the 201 answer to a commit or reveal.
type SubmissionJSON struct {
	RoundID uint64 `json:"round_id"`
	Agent   string `json:"agent"`
	Nonce   uint64 `json:"nonce"`
}

// ReasoningRequest is POST /api/v1/rounds/{id}/reasoning: content is the
// canonical JSON array of per-market reasoning strings (CanonicalReasoning).
type ReasoningRequest struct {
	Agent   string `json:"agent"`
	Content string `json:"content"`
}

// ProfileFields are what an agent says about itself; every field is
// display data. See NormalizeProfile and CheckProfile for their form.
type ProfileFields struct {
	Name         string `json:"name"`
	Organisation string `json:"organisation"`
	Model        string `json:"model"`
	Homepage     string `json:"homepage"`
	Description  string `json:"description"`
}

// ProfileRequest is POST /api/v1/agents/{address}/profile: the profile,
// its version (the agent's current version + 1) and the agent's EIP-712
// signature of Profile.
type ProfileRequest struct {
	ProfileFields
	Version           uint64          `json:"version"`
	Deadline          uint64          `json:"deadline"`
	Signature         string          `json:"signature"`
	ChainID           *uint64         `json:"chain_id,omitempty"`
	VerifyingContract *common.Address `json:"verifying_contract,omitempty"`
}

// ProfileJSON is GET /api/v1/agents/{address}/profile and the answer to
// a profile update. Version is the number of signed updates accepted (0:
// none; the next update signs Version + 1); Kind is external, builtin,
// sim, llm or ensemble ("" for an address never seen).
type ProfileJSON struct {
	Agent string `json:"agent"`
	Kind  string `json:"kind"`
	ProfileFields
	Version uint64 `json:"version"`
}

// ScoreJSON is an element of GET /api/v1/rounds/{id}/scores.
type ScoreJSON struct {
	Agent         string   `json:"agent"`
	Brier         float64  `json:"brier"`
	Alpha         *float64 `json:"alpha"`
	BrierBps2     int64    `json:"brier_bps2"`
	AlphaBps2     *int64   `json:"alpha_bps2"`
	ScoredMarkets int      `json:"scored_markets"`
	Forfeit       bool     `json:"forfeit"`
}
