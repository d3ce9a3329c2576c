package chain

import (
	"encoding/hex"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
)

// ConditionID is the conditional-tokens condition a market is mirrored
// with: Polymarket's own condition id when the market has one (so the
// arena reads the real outcome on Polygon), otherwise a stable identifier
// derived from the market's source and source id (simulated and imported
// markets, whose outcomes only a MockConditionalTokens can report).
func ConditionID(m *arena.Market) common.Hash {
	if s := strings.TrimPrefix(strings.TrimPrefix(m.ConditionID, "0x"), "0X"); len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return common.BytesToHash(b)
		}
	}
	return crypto.Keccak256Hash([]byte("forecast-arena/market/" + m.Source + "/" + m.SourceID))
}

// NoBenchmark is the RoundManager's value for a market without a
// benchmark price (type(uint16).max).
const NoBenchmark = 0xffff
