package witness

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
)

// algCosignature is the signed-note signature type of timestamped
// Ed25519 checkpoint cosignatures (C2SP tlog-cosignature, cosignature/v1).
const algCosignature = 0x04

// keyHash is the note key ID of a key: the first four bytes of
// SHA-256(name ‖ "\n" ‖ signature type ‖ public key).
func keyHash(name string, alg byte, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{alg})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// cosignedMessage is what a cosignature/v1 signature covers: a header
// line, the timestamp line, then the checkpoint's note text.
func cosignedMessage(t uint64, text []byte) []byte {
	return append(fmt.Appendf(nil, "cosignature/v1\ntime %d\n", t), text...)
}

// VerifierKey is a cosigner's verifier key, "<name>+<key ID>+<base64 of
// 0x04 and the Ed25519 public key>", as logs and policies name witnesses.
func VerifierKey(name string, pub ed25519.PublicKey) (string, error) {
	if err := tlog.CheckOrigin(name); err != nil { // the same rule as note key names
		return "", fmt.Errorf("witness: name: %w", err)
	}
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("witness: public key of %d bytes", len(pub))
	}
	return fmt.Sprintf("%s+%08x+%s", name, keyHash(name, algCosignature, pub), base64.StdEncoding.EncodeToString(append([]byte{algCosignature}, pub...))), nil
}

// errVKey is wrapped by the errors of NewVerifier.
var errVKey = errors.New("not a cosignature/v1 verifier key (name+keyID+base64 of 0x04 and an Ed25519 key)")

// NewVerifier returns the note verifier of the cosigner with the given
// verifier key: it accepts a cosignature/v1 on a note's text.
func NewVerifier(vkey string) (note.Verifier, error) {
	name, pub, err := parseVKey(vkey, algCosignature)
	if err != nil {
		return nil, err
	}
	return &cosigner{name: name, hash: keyHash(name, algCosignature, pub), pub: pub}, nil
}

// parseVKey parses a vkey of signature type alg with an Ed25519 key.
func parseVKey(vkey string, alg byte) (string, ed25519.PublicKey, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	hash, err := strconv.ParseUint(hash16, 16, 32)
	key, kerr := base64.StdEncoding.Strict().DecodeString(key64)
	if err != nil || kerr != nil || len(hash16) != 8 || tlog.CheckOrigin(name) != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != alg {
		return "", nil, fmt.Errorf("witness: %q: %w", vkey, errVKey)
	}
	pub := ed25519.PublicKey(key[1:])
	if uint32(hash) != keyHash(name, alg, pub) {
		return "", nil, fmt.Errorf("witness: %q: the key ID does not match the name and key", vkey)
	}
	return name, pub, nil
}

// cosigner verifies (and, with a private key, makes) cosignature/v1
// signatures: an 8-byte big-endian timestamp followed by an Ed25519
// signature of cosignedMessage.
type cosigner struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
	key  ed25519.PrivateKey
	now  func() time.Time
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return c.hash }

func (c *cosigner) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	return t <= math.MaxInt64 && ed25519.Verify(c.pub, cosignedMessage(t, msg), sig[8:])
}

// Sign cosigns a checkpoint, and only a checkpoint: the statement made is
// about a log's tree.
func (c *cosigner) Sign(msg []byte) ([]byte, error) {
	if _, err := tlog.ParseCheckpoint(msg); err != nil {
		return nil, fmt.Errorf("witness: cosign: %w", err)
	}
	t := c.now().Unix()
	if t <= 0 {
		return nil, fmt.Errorf("witness: cosign: clock reads %d", t)
	}
	sig := binary.BigEndian.AppendUint64(nil, uint64(t))
	return append(sig, ed25519.Sign(c.key, cosignedMessage(uint64(t), msg))...), nil
}

// NewSigner returns the cosignature/v1 signer of a witness named name
// with the given key, timestamping with now (time.Now when nil).
func NewSigner(name string, key ed25519.PrivateKey, now func() time.Time) (note.Signer, error) {
	pub := key.Public().(ed25519.PublicKey)
	if _, err := VerifierKey(name, pub); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &cosigner{name: name, hash: keyHash(name, algCosignature, pub), pub: pub, key: key, now: now}, nil
}
