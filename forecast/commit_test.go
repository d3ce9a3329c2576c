package forecast

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/forecast-arena/arena"
)

// vectors are produced by testdata/vectors.js with ethers v6, an
// implementation independent of this package and of go-ethereum.
type vectors struct {
	Key                string         `json:"key"`
	Address            common.Address `json:"address"`
	RoundID            uint64         `json:"round_id"`
	Predictions        []uint16       `json:"predictions"`
	Salt               common.Hash    `json:"salt"`
	CommitHash         common.Hash    `json:"commit_hash"`
	PredictionsHash    common.Hash    `json:"predictions_hash"`
	Reasons            []string       `json:"reasons"`
	CanonicalReasoning string         `json:"canonical_reasoning"`
	ReasoningHash      common.Hash    `json:"reasoning_hash"`
	CompatCommitHash   common.Hash    `json:"compat_commit_hash"`
	Deadline           uint64         `json:"deadline"`
	Domains            []struct {
		ChainID         uint64         `json:"chain_id"`
		Contract        common.Address `json:"verifying_contract"`
		Separator       common.Hash    `json:"separator"`
		CommitDigest    common.Hash    `json:"commit_digest"`
		CommitSignature string         `json:"commit_signature"`
		RevealDigest    common.Hash    `json:"reveal_digest"`
		RevealSignature string         `json:"reveal_signature"`
	} `json:"domains"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Domains) != 2 || len(v.Predictions) != 7 {
		t.Fatalf("vectors file incomplete: %+v", v)
	}
	return v
}

func TestCompatCommitHashSpecVector(t *testing.T) {
	// Foresight-compatible vector: roundId = 1, predictions = [7500, 3000], salt = 0x00…01.
	var salt [32]byte
	salt[31] = 1
	want := common.HexToHash("0x64ae6dbf6bb178fe94aeaf851583af73f26bc2d59aa9a124e1de0570cccf09f5")
	if got := CompatCommitHash(1, []uint16{7500, 3000}, salt); got != want {
		t.Fatalf("CompatCommitHash = %s, want %s", got.Hex(), want.Hex())
	}
	// The preimage is 68 bytes: 32 + 2·2 + 32.
	pre := make([]byte, 0, 68)
	pre = appendUint256(pre, 1)
	pre = appendUint16s(pre, []uint16{7500, 3000})
	pre = append(pre, salt[:]...)
	if len(pre) != 68 || crypto.Keccak256Hash(pre) != want {
		t.Fatalf("preimage %d bytes %x does not hash to the vector", len(pre), pre)
	}
}

func TestHashesMatchEthers(t *testing.T) {
	v := loadVectors(t)
	if got := CompatCommitHash(1, []uint16{7500, 3000}, common.BigToHash(common.Big1)); got != v.CompatCommitHash {
		t.Errorf("compat commit hash %s, ethers %s", got.Hex(), v.CompatCommitHash.Hex())
	}
	if got := CommitHash(v.RoundID, v.Address, v.Predictions, v.Salt); got != v.CommitHash {
		t.Errorf("commit hash %s, ethers %s", got.Hex(), v.CommitHash.Hex())
	}
	if got := PredictionsHash(v.Predictions); got != v.PredictionsHash {
		t.Errorf("predictions hash %s, ethers %s", got.Hex(), v.PredictionsHash.Hex())
	}
	canon, err := CanonicalReasoning(v.Reasons)
	if err != nil {
		t.Fatal(err)
	}
	if string(canon) != v.CanonicalReasoning {
		t.Errorf("canonical reasoning\n got %q\nwant %q (JSON.stringify)", canon, v.CanonicalReasoning)
	}
	if h, err := ReasoningHash(v.Reasons); err != nil || h != v.ReasoningHash {
		t.Errorf("reasoning hash %s, %v; ethers %s", h.Hex(), err, v.ReasoningHash.Hex())
	}
}

func TestCommitHashBindsEveryInput(t *testing.T) {
	v := loadVectors(t)
	base := CommitHash(v.RoundID, v.Address, v.Predictions, v.Salt)
	other := v.Predictions[:6:6]
	other = append(other, v.Predictions[6]-1)
	salt2 := v.Salt
	salt2[0] ^= 1
	for name, h := range map[string]common.Hash{
		"round":       CommitHash(v.RoundID+1, v.Address, v.Predictions, v.Salt),
		"agent":       CommitHash(v.RoundID, common.HexToAddress("0x01"), v.Predictions, v.Salt),
		"predictions": CommitHash(v.RoundID, v.Address, other, v.Salt),
		"salt":        CommitHash(v.RoundID, v.Address, v.Predictions, salt2),
		"compat":      CompatCommitHash(v.RoundID, v.Predictions, v.Salt),
	} {
		if h == base {
			t.Errorf("changing %s does not change the commit hash", name)
		}
	}
}

func TestNewSalt(t *testing.T) {
	a, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == ([32]byte{}) {
		t.Fatalf("salts %x and %x are not random", a, b)
	}
}

func TestCanonicalReasoning(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, `[]`},
		{[]string{}, `[]`},
		{[]string{""}, `[""]`},
		{[]string{"a", "b"}, `["a","b"]`},
		{[]string{"<&>'/"}, `["<&>'/"]`}, // no HTML escaping, no escaped slash
		{[]string{"\x00\x1f\x7f"}, `["\u0000\u001f` + "\x7f" + `"]`},
		{[]string{"\b\t\n\f\r"}, `["\b\t\n\f\r"]`},
		{[]string{"\u2028\u2029é🎲"}, "[\"\u2028\u2029é🎲\"]"},
		{[]string{`"\`}, `["\"\\"]`},
	} {
		got, err := CanonicalReasoning(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("CanonicalReasoning(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := CanonicalReasoning([]string{"ok", "bad \xff"}); arena.ErrorCode(err) != CodeReasoningMalformed {
		t.Errorf("invalid UTF-8: err %v, want %s", err, CodeReasoningMalformed)
	}
}

func TestParseReasoning(t *testing.T) {
	reasons, canon, err := ParseReasoning([]byte("[ \"a\" ,\n \"\\u00e9\\/\" ]"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 2 || reasons[1] != "é/" || string(canon) != `["a","é/"]` {
		t.Fatalf("got %q %s", reasons, canon)
	}
	big := `["` + strings.Repeat("x", MaxReasoningBytes) + `"]`
	for name, tc := range map[string]struct {
		in   string
		k    int
		code string
	}{
		"object":        {`{"a":"b"}`, 1, CodeReasoningMalformed},
		"null":          {`null`, 0, CodeReasoningMalformed},
		"numbers":       {`[1,2]`, 2, CodeReasoningMalformed},
		"count":         {`["a"]`, 2, CodeReasoningMalformed},
		"invalid utf-8": {"[\"\xff\"]", 1, CodeReasoningMalformed},
		"trailing":      {`["a"] x`, 1, CodeReasoningMalformed},
		"too large":     {big, 1, CodeReasoningTooLarge},
		"huge upload":   {strings.Repeat(" ", 4*MaxReasoningBytes+1) + `[""]`, 1, CodeReasoningTooLarge},
	} {
		_, _, err := ParseReasoning([]byte(tc.in), tc.k)
		if arena.ErrorCode(err) != tc.code {
			t.Errorf("%s: err %v, want code %s", name, err, tc.code)
		}
	}
}

// FuzzCanonicalReasoning checks that the canonical form is valid JSON that
// decodes to the same strings, is stable under ParseReasoning, and equals
// encoding/json's output modulo the escapes that differ by design.
func FuzzCanonicalReasoning(f *testing.F) {
	f.Add("plain", "")
	f.Add("Polls \"tighten\" <b>&</b> / ok", "line1\nline2\ttab\x01\x1f\x7f")
	f.Add("émoji 🎲 \u2028 sep", "\b\f\r\\")
	f.Add("\xff\xfe", "\xc3")
	f.Fuzz(func(t *testing.T, a, b string) {
		in := []string{a, b}
		canon, err := CanonicalReasoning(in)
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			if arena.ErrorCode(err) != CodeReasoningMalformed {
				t.Fatalf("invalid UTF-8 accepted: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var back []string
		if err := json.Unmarshal(canon, &back); err != nil {
			t.Fatalf("canonical form %q is not JSON: %v", canon, err)
		}
		if len(back) != 2 || back[0] != a || back[1] != b {
			t.Fatalf("round trip %q -> %q", in, back)
		}
		if len(canon) <= MaxReasoningBytes {
			_, again, err := ParseReasoning(canon, 2)
			if err != nil || !bytes.Equal(again, canon) {
				t.Fatalf("ParseReasoning(canonical) = %q, %v", again, err)
			}
		}
	})
}
