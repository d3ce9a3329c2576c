package chain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/forecast-arena/arena/forecast"
)

// apitypesHash is go-ethereum's generic EIP-712 digest of td, read from
// the JSON a wallet would be given (eth_signTypedData_v4), so the check
// covers that JSON as well as the hashing. It lives here, not in package
// forecast, because this package links go-ethereum whole anyway.
func apitypesHash(t *testing.T, td forecast.TypedData) []byte {
	t.Helper()
	b, err := json.Marshal(td)
	if err != nil {
		t.Fatal(err)
	}
	var g apitypes.TypedData
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("go-ethereum cannot read the typed data %s: %v", b, err)
	}
	h, _, err := apitypes.TypedDataAndHash(g)
	if err != nil {
		t.Fatalf("typed data %s: %v", b, err)
	}
	return h
}

// forecast's hand-built EIP-712 digests equal go-ethereum's generic
// encoder's over random messages and domains.
func TestDigestsMatchApitypes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() (h common.Hash) {
		for i := range h {
			h[i] = byte(rng.UintN(256))
		}
		return h
	}
	u64 := func() uint64 {
		switch rng.UintN(3) {
		case 0:
			return rng.Uint64N(10)
		case 1:
			return ^uint64(0) - rng.Uint64N(10)
		}
		return rng.Uint64()
	}
	for i := 0; i < 200; i++ {
		d := forecast.Domain{ChainID: u64(), Contract: common.BytesToAddress(word().Bytes())}
		if i%4 == 0 {
			d = forecast.Domain{}
		}
		c := forecast.Commit{RoundID: u64(), CommitHash: word(), ReasoningHash: word(),
			Agent: common.BytesToAddress(word().Bytes()), Nonce: u64(), Deadline: u64()}
		if i%3 == 0 {
			c.ReasoningHash = common.Hash{}
		}
		preds := make([]uint16, rng.IntN(12))
		for j := range preds {
			preds[j] = uint16(rng.UintN(forecast.MaxBps + 1))
		}
		r := forecast.Reveal{RoundID: u64(), Predictions: preds, Salt: word(),
			Agent: common.BytesToAddress(word().Bytes()), Nonce: u64(), Deadline: u64()}
		if got, want := d.CommitDigest(c), apitypesHash(t, d.CommitTypedData(c)); !bytes.Equal(got[:], want) {
			t.Fatalf("commit %d: digest %s, apitypes %x", i, got.Hex(), want)
		}
		if got, want := d.RevealDigest(r), apitypesHash(t, d.RevealTypedData(r)); !bytes.Equal(got[:], want) {
			t.Fatalf("reveal %d: digest %s, apitypes %x", i, got.Hex(), want)
		}
		text := func() string {
			return string([]rune("αx <\"é😀 ")[:rng.IntN(8)]) + strings.Repeat("y", rng.IntN(80))
		}
		p := forecast.Profile{Agent: common.BytesToAddress(word().Bytes()), ProfileFields: forecast.ProfileFields{Name: text(), Organisation: text(),
			Model: text(), Homepage: text(), Description: text()}, Version: u64(), Deadline: u64()}
		if got, want := d.ProfileDigest(p), apitypesHash(t, d.ProfileTypedData(p)); !bytes.Equal(got[:], want) {
			t.Fatalf("profile %d: digest %s, apitypes %x", i, got.Hex(), want)
		}
	}
}
