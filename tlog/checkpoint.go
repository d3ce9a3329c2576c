package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
)

// Checkpoint is a C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint):
// the text of a signed note naming the log (Origin) and its tree at a size.
type Checkpoint struct {
	Origin string
	Size   uint64
	Hash   []byte // RFC 6962 root hash of the first Size leaves
	// Extension is empty or non-empty lines, each ending in a newline.
	// This log writes none; a witness cosigns them as they come.
	Extension string
}

// maxCheckpoint bounds a checkpoint note read from the network.
const maxCheckpoint = 1 << 16

// Text is the checkpoint's note text: origin, size and base64 root hash,
// one a line, then any extension lines.
func (c Checkpoint) Text() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n%s", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash), c.Extension)
}

// ErrCheckpoint is wrapped by the errors about a malformed checkpoint.
var ErrCheckpoint = errors.New("malformed checkpoint")

// ParseCheckpoint parses a checkpoint note's text (signatures excluded):
// exactly the form Text writes, so that a parsed checkpoint re-encodes to
// the bytes its signatures cover.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) > maxCheckpoint {
		return Checkpoint{}, fmt.Errorf("%w: %d bytes", ErrCheckpoint, len(text))
	}
	lines := strings.SplitN(string(text), "\n", 4)
	if len(lines) < 4 {
		return Checkpoint{}, fmt.Errorf("%w: want origin, size and root hash lines, each ending in a newline", ErrCheckpoint)
	}
	if err := CheckOrigin(lines[0]); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || lines[1] != strconv.FormatUint(size, 10) || size > 1<<63-1 {
		return Checkpoint{}, fmt.Errorf("%w: tree size %q is not a decimal without leading zeros", ErrCheckpoint, lines[1])
	}
	hash, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(hash) != sha256.Size {
		return Checkpoint{}, fmt.Errorf("%w: root hash %q is not 32 bytes in base64", ErrCheckpoint, lines[2])
	}
	ext := lines[3]
	for rest := ext; rest != ""; {
		line, after, ok := strings.Cut(rest, "\n")
		if line == "" || !ok {
			return Checkpoint{}, fmt.Errorf("%w: an extension line is empty or lacks its newline", ErrCheckpoint)
		}
		rest = after
	}
	c := Checkpoint{Origin: lines[0], Size: size, Hash: hash, Extension: ext}
	if !bytes.Equal(c.Text(), text) { // e.g. a non-canonical base64 form
		return Checkpoint{}, fmt.Errorf("%w: not in canonical form", ErrCheckpoint)
	}
	return c, nil
}

// CheckOrigin reports whether origin can name a log: checkpoints carry it
// as their first line and the log key's note name is the origin, so it
// must be a valid note key name (non-empty UTF-8, no spaces, no '+') with
// no control characters.
func CheckOrigin(origin string) error {
	switch {
	case origin == "":
		return errors.New("the origin is empty")
	case !utf8.ValidString(origin):
		return fmt.Errorf("origin %q is not UTF-8", origin)
	case strings.IndexFunc(origin, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '+' }) >= 0:
		return fmt.Errorf("origin %q has a space, a control character or a '+'", origin)
	}
	return nil
}

// OriginFromURL is the default origin of the log an arena serves at
// publicURL: the URL without its scheme, followed by "/log", where the
// C2SP endpoints live (tlog-tiles recommends the scheme-less URL prefix).
// A bare host is accepted: "arena.example.com" gives
// "arena.example.com/log".
func OriginFromURL(publicURL string) (string, error) {
	s := strings.TrimSpace(publicURL)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", arena.Errorf(arena.EINVALID, "public URL %q: want a URL such as https://arena.example.com", publicURL)
	}
	origin := strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/") + "/log"
	if err := CheckOrigin(origin); err != nil {
		return "", arena.Errorf(arena.EINVALID, "public URL %q: %v", publicURL, err)
	}
	return origin, nil
}

// VerifierKey is the signed-note verifier key (vkey) of the log key under
// the origin: "<origin>+<key hash>+<base64 of 0x01 and the public key>",
// what C2SP clients and witnesses are configured with.
func VerifierKey(origin string, pub ed25519.PublicKey) (string, error) {
	if err := CheckOrigin(origin); err != nil {
		return "", arena.Errorf(arena.EINVALID, "tlog: %v", err)
	}
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		return "", fmt.Errorf("tlog: %w", err)
	}
	return vkey, nil
}

// NoteSigner signs checkpoints with the log key, the key name being the
// origin. Checkpoints are all the log key signs.
func NoteSigner(origin string, key ed25519.PrivateKey) (note.Signer, error) {
	vkey, err := VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", origin, v.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{1}, key.Seed()...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	return s, nil
}

// OpenCheckpoint verifies a checkpoint note with the log's verifier key
// and returns the checkpoint, whose origin must be the key's name.
// Signatures by other keys (witness cosignatures) are ignored here.
func OpenCheckpoint(msg []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, arena.Errorf(arena.EINVALID, "log verifier key %q: %v", vkey, err)
	}
	c, _, err := openCheckpoint(msg, v)
	return c, err
}

// openCheckpoint opens a checkpoint note signed by v, an Ed25519 log key
// named after the checkpoint's origin.
func openCheckpoint(msg []byte, v note.Verifier) (Checkpoint, *note.Note, error) {
	if len(msg) > maxCheckpoint {
		return Checkpoint{}, nil, arena.Errorf(arena.EINVALID, "checkpoint: %d bytes", len(msg))
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, nil, arena.Errorf(arena.EINVALID, "checkpoint not signed by the log key %s: %w", v.Name(), err)
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, nil, arena.Errorf(arena.EINVALID, "%w", err)
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, nil, arena.Errorf(arena.EINVALID, "checkpoint of origin %q, but the log key is %q's", c.Origin, v.Name())
	}
	return c, n, nil
}

// ParseVerifierKey returns the origin (the key's name) and the Ed25519
// public key of a log's note verifier key, the form VerifierKey writes.
func ParseVerifierKey(vkey string) (string, ed25519.PublicKey, error) {
	if _, err := note.NewVerifier(vkey); err != nil {
		return "", nil, arena.Errorf(arena.EINVALID, "log verifier key %q: %v", vkey, err)
	}
	name, rest, _ := strings.Cut(vkey, "+")
	_, b64, _ := strings.Cut(rest, "+")
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != 1 {
		return "", nil, arena.Errorf(arena.EINVALID, "log verifier key %q: not an Ed25519 key", vkey)
	}
	if err := CheckOrigin(name); err != nil {
		return "", nil, arena.Errorf(arena.EINVALID, "log verifier key %q: %v", vkey, err)
	}
	return name, ed25519.PublicKey(key[1:]), nil
}
