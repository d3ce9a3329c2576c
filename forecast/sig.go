package forecast

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// SignatureLen is the length of r ‖ s ‖ v.
const SignatureLen = 65

// secp256k1 group order n and n/2, big-endian, for the range and low-s
// checks (EIP-2: s ≤ n/2).
var (
	secp256k1N, _     = hex.DecodeString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	secp256k1HalfN, _ = hex.DecodeString("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0")
)

// Sign signs a 32-byte digest and returns r ‖ s ‖ v with v ∈ {27, 28} and
// low s, the form Recover accepts and Solidity's ecrecover expects.
func Sign(key *ecdsa.PrivateKey, digest common.Hash) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, fmt.Errorf("forecast: sign: %w", err)
	}
	sig[64] += 27
	return sig, nil
}

// Recover returns the address that signed digest. It accepts only canonical
// signatures: 65 bytes, v ∈ {27, 28}, 0 < r < n, 0 < s ≤ n/2. Every refusal
// is an *arena.Error with a distinct code (see Codes).
func Recover(digest common.Hash, sig []byte) (common.Address, error) {
	if len(sig) != SignatureLen {
		return common.Address{}, Reject(CodeSignatureMalformed, "signature is %d bytes, want %d (r ‖ s ‖ v)", len(sig), SignatureLen)
	}
	v := sig[64]
	if v != 27 && v != 28 {
		return common.Address{}, Reject(CodeSignatureV, "signature v is %d, want 27 or 28", v)
	}
	r, s := sig[:32], sig[32:64]
	if !inRange(r) || !inRange(s) {
		return common.Address{}, Reject(CodeSignatureInvalid, "signature r or s is zero or not below the curve order")
	}
	if bytes.Compare(s, secp256k1HalfN) > 0 {
		return common.Address{}, Reject(CodeSignatureHighS, "signature s is in the upper half of the curve order (malleable); use s' = n - s and flip v")
	}
	var rsv [SignatureLen]byte
	copy(rsv[:], sig)
	rsv[64] = v - 27
	pub, err := crypto.Ecrecover(digest[:], rsv[:])
	if err != nil || len(pub) != 65 {
		return common.Address{}, Reject(CodeSignatureInvalid, "no public key recovers from this signature")
	}
	return common.BytesToAddress(crypto.Keccak256(pub[1:])[12:]), nil
}

// inRange reports 0 < x < n for a 32-byte big-endian x.
func inRange(x []byte) bool {
	zero := true
	for _, b := range x {
		if b != 0 {
			zero = false
			break
		}
	}
	return !zero && bytes.Compare(x, secp256k1N) < 0
}

// DecodeSignature parses a signature as the API carries it: "0x" followed by
// 130 hex digits (the prefix is optional). It checks only the encoding;
// Recover checks the values.
func DecodeSignature(s string) ([]byte, error) {
	h := s
	if strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X") {
		h = h[2:]
	}
	if len(h) != 2*SignatureLen {
		return nil, Reject(CodeSignatureMalformed, "signature has %d hex digits, want %d", len(h), 2*SignatureLen)
	}
	sig, err := hex.DecodeString(h)
	if err != nil {
		return nil, Reject(CodeSignatureMalformed, "signature is not hex")
	}
	return sig, nil
}

// EncodeSignature formats a signature for the API: 0x and lowercase hex.
func EncodeSignature(sig []byte) string { return "0x" + hex.EncodeToString(sig) }

// ParseAddress accepts a 0x-prefixed address in any case.
func ParseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) || len(s) != 42 {
		return common.Address{}, Reject(CodeAddressInvalid, "agent %q is not a 0x-prefixed 20-byte hex address", s)
	}
	return common.HexToAddress(s), nil
}
