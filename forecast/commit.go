package forecast

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// MaxBps is the largest probability in basis points (1.0).
const MaxBps = 10000

// MaxReasoningBytes caps the canonical JSON of an agent's reasoning.
const MaxReasoningBytes = 64 << 10

// CommitHash is the commitment an agent publishes before the deadline:
//
//	keccak256(uint256 roundId ‖ address agent ‖ uint16 p_1 … p_k ‖ bytes32 salt)
//
// tightly packed (Solidity abi.encodePacked), big-endian: 32 + 20 + 2k + 32
// bytes. Binding the agent's address stops another address from replaying a
// copied commit.
func CommitHash(roundID uint64, agent common.Address, preds []uint16, salt [32]byte) common.Hash {
	buf := make([]byte, 0, 32+20+2*len(preds)+32)
	buf = appendUint256(buf, roundID)
	buf = append(buf, agent[:]...)
	buf = appendUint16s(buf, preds)
	buf = append(buf, salt[:]...)
	return crypto.Keccak256Hash(buf)
}

// CompatCommitHash is the commitment of the deployed Foresight Arena
// contracts: the same packing as CommitHash without the address,
// keccak256(uint256 roundId ‖ uint16 p_1 … p_k ‖ bytes32 salt).
func CompatCommitHash(roundID uint64, preds []uint16, salt [32]byte) common.Hash {
	buf := make([]byte, 0, 32+2*len(preds)+32)
	buf = appendUint256(buf, roundID)
	buf = appendUint16s(buf, preds)
	buf = append(buf, salt[:]...)
	return crypto.Keccak256Hash(buf)
}

// PredictionsHash is keccak256 of the predictions as tightly packed
// big-endian uint16s (2k bytes); it is what a signed Reveal carries.
func PredictionsHash(preds []uint16) common.Hash {
	return crypto.Keccak256Hash(appendUint16s(make([]byte, 0, 2*len(preds)), preds))
}

// NewSalt returns 32 bytes from crypto/rand.
func NewSalt() ([32]byte, error) {
	var s [32]byte
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("forecast: read salt: %w", err)
	}
	return s, nil
}

func appendUint256(buf []byte, v uint64) []byte {
	var w [32]byte
	binary.BigEndian.PutUint64(w[24:], v)
	return append(buf, w[:]...)
}

func appendUint16s(buf []byte, preds []uint16) []byte {
	for _, p := range preds {
		buf = binary.BigEndian.AppendUint16(buf, p)
	}
	return buf
}

// CanonicalReasoning is the canonical JSON of an agent's per-market
// reasoning, the bytes ReasoningHash hashes. It is a JSON array of
// exactly k strings, reasons[i] explaining prediction i ("" for none), with
// no whitespace, each string serialized as RFC 8785 (JCS) / ECMAScript
// JSON.stringify do:
//
//   - `"` and `\` are escaped as \" and \\;
//   - U+0008, U+0009, U+000A, U+000C, U+000D as \b, \t, \n, \f, \r;
//   - every other code point below U+0020 as \u00xx with lowercase hex;
//   - everything else (including "/", "<", "&", U+007F, U+2028, U+2029 and
//     all non-ASCII) as its literal UTF-8 bytes.
//
// So JavaScript's JSON.stringify(reasons) and Python's
// json.dumps(reasons, ensure_ascii=False, separators=(",", ":")) produce the
// same bytes. Strings must be valid UTF-8; invalid input is rejected rather
// than silently replaced.
func CanonicalReasoning(reasons []string) ([]byte, error) {
	n := 2
	for _, r := range reasons {
		n += len(r) + 3
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, r := range reasons {
		if !utf8.ValidString(r) {
			return nil, Reject(CodeReasoningMalformed, "reasoning for market %d is not valid UTF-8", i)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJCSString(buf, r)
	}
	return append(buf, ']'), nil
}

const hexDigits = "0123456789abcdef"

func appendJCSString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c >= 0x20:
			buf = append(buf, c) // bytes of multi-byte UTF-8 are all ≥ 0x80
		case c == '\b':
			buf = append(buf, '\\', 'b')
		case c == '\t':
			buf = append(buf, '\\', 't')
		case c == '\n':
			buf = append(buf, '\\', 'n')
		case c == '\f':
			buf = append(buf, '\\', 'f')
		case c == '\r':
			buf = append(buf, '\\', 'r')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return append(buf, '"')
}

// ReasoningHash is keccak256(CanonicalReasoning(reasons)). A commit without
// reasoning carries the zero hash instead.
func ReasoningHash(reasons []string) (common.Hash, error) {
	b, err := CanonicalReasoning(reasons)
	if err != nil {
		return common.Hash{}, err
	}
	return crypto.Keccak256Hash(b), nil
}

// ParseReasoning decodes an uploaded reasoning document: a JSON array of
// exactly k strings in valid UTF-8, in any JSON formatting (the hash is taken
// over the canonical re-encoding, so senders need not reproduce it byte for
// byte). It returns the strings and their canonical encoding.
func ParseReasoning(data []byte, k int) ([]string, []byte, error) {
	if len(data) > 4*MaxReasoningBytes {
		// A sender may escape more than the canonical form does, so the raw
		// upload gets slack, but not an unbounded amount to decode.
		return nil, nil, Reject(CodeReasoningTooLarge, "reasoning upload of %d bytes exceeds the limit", len(data))
	}
	// encoding/json replaces invalid UTF-8 with U+FFFD; that would make the
	// hash differ from what the agent computed, so refuse it up front.
	if !utf8.Valid(data) {
		return nil, nil, Reject(CodeReasoningMalformed, "reasoning is not valid UTF-8")
	}
	var reasons []string
	if err := json.Unmarshal(data, &reasons); err != nil || reasons == nil {
		return nil, nil, Reject(CodeReasoningMalformed, "reasoning must be a JSON array of strings")
	}
	if len(reasons) != k {
		return nil, nil, Reject(CodeReasoningMalformed, "reasoning has %d entries, the round has %d markets", len(reasons), k)
	}
	canon, err := CanonicalReasoning(reasons)
	if err != nil {
		return nil, nil, err
	}
	if len(canon) > MaxReasoningBytes {
		return nil, nil, Reject(CodeReasoningTooLarge, "canonical reasoning is %d bytes, the limit is %d", len(canon), MaxReasoningBytes)
	}
	return reasons, canon, nil
}
