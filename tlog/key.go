package tlog

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forecast-arena/arena"
)

// LoadOrCreateKey reads the log's ed25519 key (the 32-byte seed in hex)
// from path, creating it with mode 0600 (and its directory) on first use.
// The key must survive restarts: checkpoints signed by a new key do not
// chain to the old ones for anyone verifying against the published key.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("tlog: generate key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("tlog: key directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("tlog: create key %s: %w", path, err)
		}
		_, werr := f.WriteString(hex.EncodeToString(seed) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, fmt.Errorf("tlog: write key %s: %w", path, werr)
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	if err != nil {
		return nil, fmt.Errorf("tlog: read key %s: %w", path, err)
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("tlog: key %s: %w", path, errNoKey)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// maxKeyFile bounds a key file: 64 hex digits and a newline.
const maxKeyFile = 1024

// readKeyFile reads a key file, refusing one larger than maxKeyFile (a
// device or pipe has no size to check first).
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err == nil && len(b) > maxKeyFile {
		err = fmt.Errorf("more than %d bytes: %w", maxKeyFile, errNoKey)
	}
	return b, err
}

// ParsePublicKey parses a hex ed25519 public key.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("tlog: public key %q is not 32 hex bytes", s)
	}
	return ed25519.PublicKey(b), nil
}

// KeySetting is the database setting that records the public half of the
// key that signs its log (hex), so that the log is never signed by
// another key, such as one that belongs to another database.
const KeySetting = "tlog.public_key"

// KeyFile is the name of the default key file of the log of the SQLite
// database file db: the database's own name (arena.db.log.key), so that
// two databases in one directory never share a key.
func KeyFile(db string) string { return filepath.Base(db) + ".log.key" }

// BindKey records pub in s as the key of its log, the first time; after
// that, any other key is refused (ECONFLICT) with both keys named.
func BindKey(ctx context.Context, s arena.SettingStore, pub ed25519.PublicKey) error {
	want := hex.EncodeToString(pub)
	bound, err := s.InitSetting(ctx, KeySetting, want)
	if err != nil {
		return err
	}
	if bound != want {
		return arena.Errorf(arena.ECONFLICT, "tlog: this database's log belongs to the key with public half %s (recorded in the database), not to this key (public half %s): use the key that signed this log", bound, want)
	}
	return nil
}
