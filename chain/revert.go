package chain

import (
	"encoding/hex"
	"errors"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/forecast"
)

// errorCodes maps the contracts' custom errors to the off-chain rejection
// codes where a rule exists on both sides; the rest get a snake_case form
// of their name.
var errorCodes = map[string]string{
	"SignatureMalformed": forecast.CodeSignatureMalformed,
	"SignatureV":         forecast.CodeSignatureV,
	"SignatureInvalid":   forecast.CodeSignatureInvalid,
	"SignatureHighS":     forecast.CodeSignatureHighS,
	"SignerMismatch":     forecast.CodeSignerMismatch,
	"RoundNotFound":      forecast.CodeRoundNotFound,
	"RoundInvalidated":   forecast.CodeRoundInvalidated,
	"DeadlineExpired":    forecast.CodeDeadlineExpired,
	"DeadlineTooFar":     forecast.CodeDeadlineTooFar,
	"PredictionCount":    forecast.CodePredictionCount,
	"PredictionRange":    forecast.CodePredictionRange,
	"CommitClosed":       forecast.CodeCommitClosed,
	"RevealNotOpen":      forecast.CodeRevealNotOpen,
	"RevealClosed":       forecast.CodeRevealClosed,
	"AlreadyCommitted":   forecast.CodeAlreadyCommitted,
	"NotCommitted":       forecast.CodeNotCommitted,
	"AlreadyRevealed":    forecast.CodeAlreadyRevealed,
	"NonceInvalid":       forecast.CodeNonceInvalid,
	"CommitMismatch":     forecast.CodeCommitMismatch,
	"TriggerNotAllowed":  forecast.CodeTriggerNotAllowed,
	"NoResolvedMarkets":  forecast.CodeNoResolvedMarkets,
}

var (
	selectorsOnce sync.Once
	selectors     map[[4]byte]string // error selector → code
)

func loadSelectors() {
	selectors = map[[4]byte]string{}
	for _, meta := range []string{bindings.PredictionArenaMetaData.ABI, bindings.RoundManagerMetaData.ABI, bindings.MockConditionalTokensMetaData.ABI} {
		parsed, err := abi.JSON(strings.NewReader(meta))
		if err != nil {
			panic("chain: generated ABI does not parse: " + err.Error())
		}
		for name, e := range parsed.Errors {
			var sel [4]byte
			copy(sel[:], e.ID[:4])
			code, ok := errorCodes[name]
			if !ok {
				code = snake(name)
			}
			selectors[sel] = code
		}
	}
}

// RevertCode returns the rejection code of a contract call or gas
// estimation that reverted with one of the contracts' custom errors, and
// "" when err carries no such revert.
func RevertCode(err error) string {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return ""
	}
	s, ok := de.ErrorData().(string)
	if !ok {
		return ""
	}
	data, derr := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if derr != nil || len(data) < 4 {
		return ""
	}
	selectorsOnce.Do(loadSelectors)
	return selectors[[4]byte(data[:4])]
}

// snake turns "BatchSize" into "batch_size".
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
