package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/tlog"
)

// What 'arena verify' says when there is nothing to verify or when the
// key it was given is another arena's, rather than a bare failure.

// errNothingToVerify is an arena whose log has no entry: one that has
// run no round and recorded no submission or profile (holding only
// backtests or imported questions) has signed nothing, so it publishes
// no export, and a verification could check nothing.
var errNothingToVerify = errors.New("nothing to verify: the arena's log is empty (no round scored, no submission or profile recorded); backtests and imported questions are not part of its signed record ('arena report' shows them)")

// checkExportDir refuses an --export that is not a directory, before any
// verification.
func checkExportDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--export %s: no such directory: give the directory 'arena export --out' wrote (the demo prints its own)", dir)
	case err != nil:
		return fmt.Errorf("--export: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("--export %s is not a directory: give the directory 'arena export --out' wrote", dir)
	}
	return nil
}

// keySource names the flag the log key came from.
func keySource(vkey, keyHex string) string {
	switch {
	case vkey != "":
		return "--vkey"
	case keyHex != "":
		return "--log-key"
	}
	return "the witness policy's log line"
}

// otherArena explains a verification that failed because the log key
// given (--vkey, or --log-key as flag) is not the one the export's log
// is signed with: the key, or the export, is another arena's. Other
// failures are err.
func otherArena(err error, dir string, o export.VerifyOptions, flag string) error {
	key := o.LogKey
	if key == nil && o.VKey != "" {
		_, key, _ = tlog.ParseVerifierKey(o.VKey)
	}
	var f *export.Failed
	if key == nil || !errors.As(err, &f) {
		return err
	}
	for _, m := range f.Mismatches {
		if m.Table != "meta.json" || m.Column != "log_public_key" {
			continue
		}
		b, rerr := os.ReadFile(filepath.Join(dir, "meta.json"))
		var meta struct {
			Key string `json:"log_public_key"`
		}
		if rerr != nil || json.Unmarshal(b, &meta) != nil || meta.Key == hex.EncodeToString(key) {
			return err
		}
		return fmt.Errorf("this export's log is signed by the key %s (its meta.json), but %s names the key %x: %s is another arena's, or the export is. Give this arena's own key (its verifier key at URL/log/vkey, or the one its demo printed); %d differences in all",
			meta.Key, flag, []byte(key), flag, f.Total)
	}
	return err
}
