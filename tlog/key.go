package tlog

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
)

// LoadOrCreateKey reads the log's ed25519 key (the 32-byte seed in hex)
// from path, creating it with mode 0600 (and its directory) on first use.
// The key must survive restarts: checkpoints signed by a new key do not
// chain to the old ones for anyone verifying against the published key.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	key, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if key, err = GenerateKey(); err != nil {
		return nil, err
	}
	return key, CreateKey(path, key)
}

// LoadKey reads the log's key from the file at path (its 32-byte seed in
// hex); a missing file is an error wrapping fs.ErrNotExist. The file is
// opened without blocking and must be a regular file (a symbolic link to
// one is followed), so a FIFO or a device there is refused, not waited on.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	b, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// Not "no key": a key would be written through the link.
			target, _ := os.Readlink(path)
			return nil, fmt.Errorf("tlog: key %s is a symbolic link to %s, which does not exist", path, target)
		}
		return nil, err
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

// GenerateKey makes a new log key, held in memory until CreateKey writes
// it, so that a start refused after choosing a key leaves no file behind.
func GenerateKey() (ed25519.PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("tlog: generate key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// CreateKey writes key to a new file at path (mode 0600, its directory
// made if missing); a file already there is an error wrapping
// fs.ErrExist, never replaced. The file appears whole: written and synced
// under a temporary name, then linked into place, so a reader (another
// start) never sees it half written.
func CreateKey(path string, key ed25519.PrivateKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("tlog: key directory: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("tlog: create key %s: %w", path, err)
	}
	tmp := f.Name() // made with mode 0600
	defer os.Remove(tmp)
	_, werr := f.WriteString(hex.EncodeToString(key.Seed()) + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("tlog: write key %s: %w", path, werr)
	}
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("tlog: create key %s: %w", path, err)
	}
	return nil
}

// maxKeyFile bounds a key file: 64 hex digits and a newline.
const maxKeyFile = 1024

// readKeyFile reads a key file, refusing one that is not a regular file
// or is larger than maxKeyFile.
func readKeyFile(path string) ([]byte, error) {
	b, err := safefile.ReadFile(path, maxKeyFile)
	if errors.Is(err, safefile.ErrTooLarge) {
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
// that, any other key is refused (ECONFLICT, see CheckBound).
func BindKey(ctx context.Context, s arena.SettingStore, pub ed25519.PublicKey) error {
	bound, err := s.InitSetting(ctx, KeySetting, hex.EncodeToString(pub))
	if err != nil {
		return err
	}
	return CheckBound(bound, pub)
}

// CheckBound refuses (ECONFLICT, both keys named) a log whose database
// records the key with public half bound (hex; "" for none yet) when pub
// is another key.
func CheckBound(bound string, pub ed25519.PublicKey) error {
	if want := hex.EncodeToString(pub); bound != "" && bound != want {
		return arena.Errorf(arena.ECONFLICT, "tlog: this database's log belongs to the key with public half %s (recorded in the database), not to this key (public half %s): use the key that signed this log", bound, want)
	}
	return nil
}
