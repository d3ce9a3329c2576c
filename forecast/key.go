package forecast

import (
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Key is an agent's secp256k1 signing key. Its String and fmt verbs show
// only the address, so a key never leaks into logs by accident.
type Key struct {
	priv *ecdsa.PrivateKey
	addr common.Address
}

// GenerateKey makes a new key from crypto/rand.
func GenerateKey() (*Key, error) {
	priv, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("forecast: generate key: %w", err)
	}
	return NewKey(priv), nil
}

// NewKey wraps an existing private key.
func NewKey(priv *ecdsa.PrivateKey) *Key {
	return &Key{priv: priv, addr: crypto.PubkeyToAddress(priv.PublicKey)}
}

// ParseKey reads a private key written as 64 hex digits, with or without
// 0x and surrounding whitespace.
func ParseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
	}
	if len(s) != 64 {
		return nil, fmt.Errorf("forecast: key has %d hex digits, want 64", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("forecast: key is not hex")
	}
	priv, err := crypto.ToECDSA(b) // rejects 0 and values ≥ n
	if err != nil {
		return nil, fmt.Errorf("forecast: invalid key: %w", err)
	}
	return NewKey(priv), nil
}

// maxKeyFile bounds a key file: 64 hex digits and a newline.
const maxKeyFile = 1024

// LoadKey reads a key file written by Save (also go-ethereum's
// crypto.SaveECDSA format). A file others can read is loaded with a warning.
func LoadKey(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("forecast: load key: %w", err)
	}
	if fi.Size() > maxKeyFile {
		return nil, fmt.Errorf("forecast: load key %s: %d bytes is not a key file", path, fi.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("forecast: load key: %w", err)
	}
	defer f.Close()
	// Read at most one byte past the bound: a device or pipe has no size.
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("forecast: load key: %w", err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("forecast: load key %s: more than %d bytes is not a key file", path, maxKeyFile)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("forecast: load key %s: %s", path, strings.TrimPrefix(err.Error(), "forecast: "))
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 { // only a key is worth the warning
		slog.Warn("key file is readable by others; chmod 600 it", "path", path, "mode", fi.Mode().Perm().String())
	}
	return k, nil
}

// Save writes the key as 64 lowercase hex digits and a newline to a new file
// with mode 0600. It refuses to overwrite an existing file (the error wraps
// fs.ErrExist), since that would destroy an identity.
func (k *Key) Save(path string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("forecast: save key: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("forecast: save key: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.WriteString(hex.EncodeToString(crypto.FromECDSA(k.priv)) + "\n"); err != nil {
		return fmt.Errorf("forecast: save key: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("forecast: save key: %w", err)
	}
	return nil
}

// Address is the agent's identity.
func (k *Key) Address() common.Address { return k.addr }

// PrivateKey returns the underlying key.
func (k *Key) PrivateKey() *ecdsa.PrivateKey { return k.priv }

// String shows the address only.
func (k *Key) String() string { return "Key(" + k.addr.Hex() + ")" }

// GoString keeps %#v from printing the private scalar.
func (k *Key) GoString() string { return k.String() }

// SignCommit signs c under d. It does not set c.Agent; callers do.
func (k *Key) SignCommit(d Domain, c Commit) ([]byte, error) {
	return Sign(k.priv, d.CommitDigest(c))
}

// SignReveal signs r under d.
func (k *Key) SignReveal(d Domain, r Reveal) ([]byte, error) {
	return Sign(k.priv, d.RevealDigest(r))
}

// SignProfile signs p under d.
func (k *Key) SignProfile(d Domain, p Profile) ([]byte, error) {
	return Sign(k.priv, d.ProfileDigest(p))
}
