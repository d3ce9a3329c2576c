package witness_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// signedCheckpoint is c as a note signed by the log key.
func signedCheckpoint(t *testing.T, key ed25519.PrivateKey, c tlog.Checkpoint) []byte {
	t.Helper()
	s, err := tlog.NoteSigner(c.Origin, key)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: string(c.Text())}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func checkpoint(origin string, size uint64) tlog.Checkpoint {
	h := sha256.Sum256([]byte(origin))
	return tlog.Checkpoint{Origin: origin, Size: size, Hash: h[:]}
}

// A cosignature/v1 verifies under the witness's vkey over exactly the
// cosigned checkpoint, and the signer cosigns checkpoints only.
func TestCosignature(t *testing.T) {
	_, logKey, _ := ed25519.GenerateKey(nil)
	_, wKey, _ := ed25519.GenerateKey(nil)
	at := time.Unix(1679315147, 0)
	signer, err := witness.NewSigner("witness.example/w1", wKey, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := witness.VerifierKey("witness.example/w1", wKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v, err := witness.NewVerifier(vkey)
	if err != nil || v.Name() != signer.Name() || v.KeyHash() != signer.KeyHash() {
		t.Fatalf("verifier %v of %q", err, vkey)
	}
	msg := signedCheckpoint(t, logKey, checkpoint("example.com/log", 7))
	n, err := note.Open(msg, note.VerifierList(mustLogVerifier(t, "example.com/log", logKey)))
	if err != nil {
		t.Fatal(err)
	}
	cosigned, err := note.Sign(n, signer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := note.Open(cosigned, note.VerifierList(v))
	if err != nil || len(got.Sigs) != 1 {
		t.Fatalf("cosignature: %v", err)
	}
	raw, _ := base64.StdEncoding.DecodeString(got.Sigs[0].Base64)
	if len(raw) != 4+8+64 || !bytes.Equal(raw[4:12], []byte{0, 0, 0, 0, 0x64, 0x18, 0x50, 0xcb}) {
		t.Fatalf("cosignature bytes %x: want key ID, timestamp 1679315147, signature", raw)
	}
	if _, err := note.Open(bytes.Replace(cosigned, []byte("\n7\n"), []byte("\n8\n"), 1), note.VerifierList(v)); err == nil {
		t.Fatal("a cosignature verified over another size")
	}
	if _, err := note.Sign(&note.Note{Text: "not a checkpoint\n"}, signer); err == nil {
		t.Fatal("cosigned a note that is not a checkpoint")
	}
	logVKey, _ := tlog.VerifierKey("example.com/log", logKey.Public().(ed25519.PublicKey))
	for name, bad := range map[string]string{
		"an Ed25519 (0x01) key":        logVKey,
		"a key ID that does not match": wrongKeyID(vkey),
		"no key":                       "witness.example/w1",
		"a name with a space":          "witness example+00000000+BA==",
	} {
		if _, err := witness.NewVerifier(bad); err == nil {
			t.Errorf("%s: accepted as a cosignature key", name)
		}
	}
}

func mustLogVerifier(t *testing.T, origin string, key ed25519.PrivateKey) note.Verifier {
	t.Helper()
	vkey, err := tlog.VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// filippo.io/torchwood, an independent implementation of
// tlog-cosignature, agrees with ours: same verifier key, and each
// verifies the other's cosignatures.
func TestTorchwoodCosignatures(t *testing.T) {
	_, logKey, _ := ed25519.GenerateKey(nil)
	_, wKey, _ := ed25519.GenerateKey(nil)
	const name = "witness.example/w1"
	tw, err := torchwood.NewCosignatureSigner(name, wKey)
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := witness.NewSigner(name, wKey, nil)
	vkey, _ := witness.VerifierKey(name, wKey.Public().(ed25519.PublicKey))
	if tw.Verifier().String() != vkey {
		t.Fatalf("torchwood's vkey %s, ours %s", tw.Verifier().String(), vkey)
	}
	v, _ := witness.NewVerifier(vkey)
	n := &note.Note{Text: string(checkpoint("example.com/log", 42).Text())}
	for who, pair := range map[string]struct {
		sign   note.Signer
		verify note.Verifier
	}{"ours checked by torchwood": {ours, tw.Verifier()}, "torchwood's checked by ours": {tw, v}} {
		msg, err := note.Sign(n, mustNoteSigner(t, logKey), pair.sign)
		if err != nil {
			t.Fatal(err)
		}
		got, err := note.Open(msg, note.VerifierList(pair.verify))
		if err != nil || len(got.Sigs) != 1 {
			t.Fatalf("%s: %v", who, err)
		}
		if ts, err := torchwood.CosignatureTimestamp(got.Sigs[0]); err != nil || time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
			t.Fatalf("%s: timestamp %d, %v", who, ts, err)
		}
		forged := bytes.Replace(msg, []byte("\n42\n"), []byte("\n43\n"), 1)
		if _, err := note.Open(forged, note.VerifierList(pair.verify)); err == nil {
			t.Fatalf("%s: verified over another checkpoint", who)
		}
	}
}

func mustNoteSigner(t *testing.T, key ed25519.PrivateKey) note.Signer {
	t.Helper()
	s, err := tlog.NoteSigner("example.com/log", key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
