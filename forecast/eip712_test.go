package forecast

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/forecast-arena/arena"
)

func vectorMessages(v vectors) (Commit, Reveal) {
	c := Commit{RoundID: v.RoundID, CommitHash: v.CommitHash, ReasoningHash: v.ReasoningHash,
		Agent: v.Address, Nonce: 0, Deadline: v.Deadline}
	r := Reveal{RoundID: v.RoundID, Predictions: v.Predictions, Salt: v.Salt,
		Agent: v.Address, Nonce: 1, Deadline: v.Deadline}
	return c, r
}

// TestDigestsMatchEthers checks separators, digests and signatures against
// ethers v6. RFC 6979 makes signatures deterministic, so they must be
// byte-identical.
func TestDigestsMatchEthers(t *testing.T) {
	v := loadVectors(t)
	key, err := ParseKey(v.Key)
	if err != nil {
		t.Fatal(err)
	}
	if key.Address() != v.Address {
		t.Fatalf("key address %s, ethers %s", key.Address().Hex(), v.Address.Hex())
	}
	c, r := vectorMessages(v)
	for _, dv := range v.Domains {
		d := Domain{ChainID: dv.ChainID, Contract: dv.Contract}
		if got := d.Separator(); got != dv.Separator {
			t.Errorf("chain %d: separator %s, ethers %s", d.ChainID, got.Hex(), dv.Separator.Hex())
		}
		if got := d.CommitDigest(c); got != dv.CommitDigest {
			t.Errorf("chain %d: commit digest %s, ethers %s", d.ChainID, got.Hex(), dv.CommitDigest.Hex())
		}
		if got := d.RevealDigest(r); got != dv.RevealDigest {
			t.Errorf("chain %d: reveal digest %s, ethers %s", d.ChainID, got.Hex(), dv.RevealDigest.Hex())
		}
		cs, err := key.SignCommit(d, c)
		if err != nil {
			t.Fatal(err)
		}
		if EncodeSignature(cs) != dv.CommitSignature {
			t.Errorf("chain %d: commit signature %s, ethers %s", d.ChainID, EncodeSignature(cs), dv.CommitSignature)
		}
		rsig, err := key.SignReveal(d, r)
		if err != nil {
			t.Fatal(err)
		}
		if EncodeSignature(rsig) != dv.RevealSignature {
			t.Errorf("chain %d: reveal signature %s, ethers %s", d.ChainID, EncodeSignature(rsig), dv.RevealSignature)
		}
		// Signatures made by ethers verify here.
		esig, err := DecodeSignature(dv.CommitSignature)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.VerifyCommit(c, esig); err != nil {
			t.Errorf("chain %d: ethers commit signature rejected: %v", d.ChainID, err)
		}
		esig, _ = DecodeSignature(dv.RevealSignature)
		if err := d.VerifyReveal(r, esig); err != nil {
			t.Errorf("chain %d: ethers reveal signature rejected: %v", d.ChainID, err)
		}
	}
}

// TestEIP712MailExample checks the primitives against the example in the
// EIP-712 specification (domain "Ether Mail", chainId 1).
func TestEIP712MailExample(t *testing.T) {
	kh := func(s string) common.Hash { return crypto.Keccak256Hash([]byte(s)) }
	sep := separator(kh("Ether Mail"), kh("1"), 1, common.HexToAddress("0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"))
	if want := common.HexToHash("0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f"); sep != want {
		t.Fatalf("separator %s, EIP-712 example %s", sep.Hex(), want.Hex())
	}
	personType := kh("Person(string name,address wallet)")
	person := func(name, wallet string) common.Hash {
		a := common.HexToAddress(wallet)
		return crypto.Keccak256Hash(personType[:], kh(name).Bytes(), common.LeftPadBytes(a[:], 32))
	}
	mailType := kh("Mail(Person from,Person to,string contents)Person(string name,address wallet)")
	mail := crypto.Keccak256Hash(mailType[:],
		person("Cow", "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826").Bytes(),
		person("Bob", "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB").Bytes(),
		kh("Hello, Bob!").Bytes())
	if want := common.HexToHash("0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e"); mail != want {
		t.Fatalf("hashStruct(mail) %s, EIP-712 example %s", mail.Hex(), want.Hex())
	}
	if want := common.HexToHash("0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"); typedDigest(sep, mail) != want {
		t.Fatalf("digest %s, EIP-712 example %s", typedDigest(sep, mail).Hex(), want.Hex())
	}
}

func TestSignRecoverRoundTrip(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	d := Domain{ChainID: 137, Contract: common.HexToAddress("0x7aB0d11F00000000000000000000000000000001")}
	for i := 0; i < 50; i++ {
		c := Commit{RoundID: uint64(i), CommitHash: crypto.Keccak256Hash([]byte{byte(i)}), Agent: key.Address(), Nonce: uint64(i), Deadline: 1 << 31}
		sig, err := key.SignCommit(d, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
			t.Fatalf("signature %x: want 65 bytes with v 27/28", sig)
		}
		if new(big.Int).SetBytes(sig[32:64]).Cmp(halfN) > 0 {
			t.Fatalf("Sign produced high s")
		}
		got, err := Recover(d.CommitDigest(c), sig)
		if err != nil || got != key.Address() {
			t.Fatalf("Recover = %s, %v; want %s", got.Hex(), err, key.Address().Hex())
		}
		if err := d.VerifyCommit(c, sig); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	curveN = crypto.S256().Params().N
	halfN  = new(big.Int).Rsh(curveN, 1)
)

func TestCurveConstants(t *testing.T) {
	if !bytes.Equal(secp256k1N, common.LeftPadBytes(curveN.Bytes(), 32)) ||
		!bytes.Equal(secp256k1HalfN, common.LeftPadBytes(halfN.Bytes(), 32)) {
		t.Fatal("secp256k1 constants do not match go-ethereum's curve")
	}
}

// malleate returns the high-s twin of a valid signature: s' = n − s, v flipped.
func malleate(sig []byte) []byte {
	out := bytes.Clone(sig)
	s := new(big.Int).SetBytes(sig[32:64])
	copy(out[32:64], common.LeftPadBytes(new(big.Int).Sub(curveN, s).Bytes(), 32))
	out[64] ^= 27 ^ 28
	return out
}

func TestRecoverRejections(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := GenerateKey()
	d := Domain{}
	c := Commit{RoundID: 7, CommitHash: crypto.Keccak256Hash([]byte("x")), Agent: key.Address(), Deadline: 100}
	sig, err := key.SignCommit(d, c)
	if err != nil {
		t.Fatal(err)
	}
	digest := d.CommitDigest(c)

	// The malleable twin recovers the same key, which proves the
	// construction, and Recover refuses it all the same.
	twin := malleate(sig)
	raw := bytes.Clone(twin)
	raw[64] -= 27
	if pub, err := crypto.Ecrecover(digest[:], raw); err != nil || common.BytesToAddress(crypto.Keccak256(pub[1:])[12:]) != key.Address() {
		t.Fatalf("malleated signature should recover the same signer with bare ecrecover: %v", err)
	}

	with := func(f func(s []byte)) []byte { s := bytes.Clone(sig); f(s); return s }
	// An r that is no point's x coordinate (x³ + 7 is not a square mod p):
	// in range, yet nothing recovers.
	p := crypto.S256().Params().P
	var offCurve []byte
	for x := int64(1); offCurve == nil; x++ {
		y2 := new(big.Int).Exp(big.NewInt(x), big.NewInt(3), p)
		if big.Jacobi(y2.Add(y2, big.NewInt(7)), p) == -1 {
			offCurve = common.LeftPadBytes(big.NewInt(x).Bytes(), 32)
		}
	}
	nBytes := common.LeftPadBytes(curveN.Bytes(), 32)
	otherSig, _ := other.SignCommit(d, c)
	chainSig, _ := key.SignCommit(Domain{ChainID: 1}, c)
	contractSig, _ := key.SignCommit(Domain{Contract: common.HexToAddress("0x01")}, c)
	for name, tc := range map[string]struct {
		sig  []byte
		code string
	}{
		"empty":          {nil, CodeSignatureMalformed},
		"64 bytes":       {sig[:64], CodeSignatureMalformed},
		"66 bytes":       {append(bytes.Clone(sig), 0), CodeSignatureMalformed},
		"v = 0":          {with(func(s []byte) { s[64] -= 27 }), CodeSignatureV},
		"v = 1":          {with(func(s []byte) { s[64] = 1 }), CodeSignatureV},
		"v = 29":         {with(func(s []byte) { s[64] = 29 }), CodeSignatureV},
		"high s":         {twin, CodeSignatureHighS},
		"r = 0":          {with(func(s []byte) { clear(s[:32]) }), CodeSignatureInvalid},
		"s = 0":          {with(func(s []byte) { clear(s[32:64]) }), CodeSignatureInvalid},
		"r = n":          {with(func(s []byte) { copy(s[:32], nBytes) }), CodeSignatureInvalid},
		"s = n":          {with(func(s []byte) { copy(s[32:64], nBytes) }), CodeSignatureInvalid},
		"r all ones":     {with(func(s []byte) { copy(s[:32], bytes.Repeat([]byte{0xff}, 32)) }), CodeSignatureInvalid},
		"r off curve":    {with(func(s []byte) { copy(s[:32], offCurve) }), CodeSignatureInvalid},
		"wrong signer":   {otherSig, CodeSignerMismatch},
		"wrong chain":    {chainSig, CodeSignerMismatch},
		"wrong contract": {contractSig, CodeSignerMismatch},
		"tampered s":     {with(func(s []byte) { s[63] ^= 1 }), CodeSignerMismatch},
	} {
		err := d.VerifyCommit(c, tc.sig)
		if arena.ErrorCode(err) != tc.code {
			t.Errorf("%s: err %v (code %s), want %s", name, err, arena.ErrorCode(err), tc.code)
			continue
		}
		if kind := arena.ErrorKind(err); kind != Codes[tc.code] {
			t.Errorf("%s: kind %s, want %s", name, kind, Codes[tc.code])
		}
	}
	// A message field changed after signing is a different digest: the
	// signature then recovers someone else.
	c2 := c
	c2.Nonce++
	if err := d.VerifyCommit(c2, sig); arena.ErrorCode(err) != CodeSignerMismatch {
		t.Errorf("modified message: %v", err)
	}
}

func TestCheckRequest(t *testing.T) {
	d := Domain{ChainID: 31337, Contract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")}
	chain, wrongChain := uint64(31337), uint64(1)
	contract, wrongContract := d.Contract, common.HexToAddress("0x02")
	for _, tc := range []struct {
		chain    *uint64
		contract *common.Address
		ok       bool
	}{
		{nil, nil, true},
		{&chain, nil, true},
		{&chain, &contract, true},
		{nil, &contract, true},
		{&wrongChain, nil, false},
		{nil, &wrongContract, false},
		{&chain, &wrongContract, false},
	} {
		err := d.CheckRequest(tc.chain, tc.contract)
		if (err == nil) != tc.ok || (err != nil && arena.ErrorCode(err) != CodeDomainMismatch) {
			t.Errorf("CheckRequest(%v, %v) = %v", tc.chain, tc.contract, err)
		}
	}
}

func TestDecodeSignature(t *testing.T) {
	sig := bytes.Repeat([]byte{0xab}, 65)
	h := hex.EncodeToString(sig)
	for _, s := range []string{"0x" + h, h, "0X" + h} {
		got, err := DecodeSignature(s)
		if err != nil || !bytes.Equal(got, sig) {
			t.Errorf("DecodeSignature(%q) = %x, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "0x", "0x" + h[:128], "0x" + h + "00", "0x" + h[:128] + "zz", "0x0x" + h[:126]} {
		if _, err := DecodeSignature(s); arena.ErrorCode(err) != CodeSignatureMalformed {
			t.Errorf("DecodeSignature(%q): err %v, want %s", s, err, CodeSignatureMalformed)
		}
	}
	if got := EncodeSignature(sig); got != "0x"+h {
		t.Errorf("EncodeSignature = %s", got)
	}
}

// FuzzRecover feeds arbitrary signatures and digests to the parser and
// recovery: it must never panic, must return an *arena.Error with a
// registered code on failure, and must accept only canonical signatures.
func FuzzRecover(f *testing.F) {
	v := loadVectors(f)
	for _, dv := range v.Domains {
		sig, _ := DecodeSignature(dv.CommitSignature)
		f.Add(dv.CommitDigest[:], sig)
		f.Add(dv.CommitDigest[:], malleate(sig))
		f.Add(dv.RevealDigest[:], sig[:64])
	}
	f.Add(make([]byte, 32), make([]byte, 65))
	f.Add(make([]byte, 32), bytes.Repeat([]byte{0xff}, 65))
	f.Fuzz(func(t *testing.T, digest, sig []byte) {
		var h common.Hash
		copy(h[:], digest)
		addr, err := Recover(h, sig)
		if err != nil {
			code := arena.ErrorCode(err)
			if _, ok := Codes[code]; !ok {
				t.Fatalf("unregistered error %v", err)
			}
			return
		}
		if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) || bytes.Compare(sig[32:64], secp256k1HalfN) > 0 {
			t.Fatalf("accepted non-canonical signature %x", sig)
		}
		if addr == (common.Address{}) {
			t.Fatalf("recovered the zero address")
		}
		// Text form parses back to the same bytes.
		back, err := DecodeSignature(EncodeSignature(sig))
		if err != nil || !bytes.Equal(back, sig) {
			t.Fatalf("hex round trip: %x, %v", back, err)
		}
	})
}

// FuzzDecodeSignature: text parsing never panics and yields 65 bytes or
// signature_malformed.
func FuzzDecodeSignature(f *testing.F) {
	v := loadVectors(f)
	f.Add(v.Domains[0].CommitSignature)
	f.Add(v.Domains[1].RevealSignature[2:])
	f.Add("0x")
	f.Add("0xzz")
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := DecodeSignature(s)
		if err != nil {
			if arena.ErrorCode(err) != CodeSignatureMalformed {
				t.Fatalf("code %s", arena.ErrorCode(err))
			}
			return
		}
		if len(sig) != SignatureLen {
			t.Fatalf("%d bytes", len(sig))
		}
	})
}
