package participant

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/forecast-arena/arena/forecast"
)

// roundState is what the participant must never lose: the predictions and
// salt behind a commit. It is written (fsynced, atomically renamed) before
// the commit is sent, so a crash at any point can be resumed.
type roundState struct {
	RoundID       uint64   `json:"round_id"`
	Predictions   []uint16 `json:"predictions"`
	Salt          string   `json:"salt"`
	Reasoning     []string `json:"reasoning,omitempty"`
	CommitHash    string   `json:"commit_hash"`
	ReasoningHash string   `json:"reasoning_hash,omitempty"`
	Committed     bool     `json:"committed"`
	Revealed      bool     `json:"revealed"`
	ReasoningSent bool     `json:"reasoning_sent"`
	// ReasoningGivenUp: the server refused the reasoning for good (a 4xx
	// other than already stored); why.
	ReasoningGivenUp string `json:"reasoning_given_up,omitempty"`
	// The round as the server described it when the commit was prepared:
	// a later run that finds another round under this id (another server,
	// a reset database) abandons instead of revealing into it. Empty in
	// state files written before they were recorded.
	MarketIDs      []int64   `json:"market_ids,omitempty"`
	CommitDeadline time.Time `json:"commit_deadline,omitzero"`
	// Abandoned: the round can no longer be committed or revealed.
	Abandoned string `json:"abandoned,omitempty"`
}

func (s *roundState) done() bool {
	return s.Abandoned != "" || (s.Revealed && (len(s.Reasoning) == 0 || s.ReasoningSent || s.ReasoningGivenUp != ""))
}

// sameRound reports whether the server's round r is the one this state was
// prepared for (true when the state predates the check).
func (s *roundState) sameRound(r *forecast.RoundJSON) bool {
	if len(s.MarketIDs) == 0 {
		return true
	}
	if !s.CommitDeadline.Equal(r.CommitDeadline) || len(s.MarketIDs) != len(r.Markets) {
		return false
	}
	for i, m := range r.Markets {
		if m.MarketID != s.MarketIDs[i] {
			return false
		}
	}
	return true
}

// serverDir is the subdirectory of root holding one server's rounds: round
// ids are per server, so two servers (or a server and its reset database,
// which has another verifying contract only if reconfigured) must never
// share round files. Keyed by a hash of the server URL and EIP-712 domain.
func serverDir(root, server string, dom forecast.Domain) stateDir {
	u := strings.TrimRight(strings.TrimSpace(server), "/")
	if pu, err := url.Parse(u); err == nil {
		pu.Scheme, pu.Host = strings.ToLower(pu.Scheme), strings.ToLower(pu.Host)
		u = pu.String()
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s\n%d\n%s", u, dom.ChainID, strings.ToLower(dom.Contract.Hex())))
	return stateDir(filepath.Join(root, "server-"+hex.EncodeToString(h[:8])))
}

// migrateLegacy moves round files written at the root by earlier versions
// (one state dir per server was assumed) into d, the current server's.
func migrateLegacy(root string, d stateDir, log *slog.Logger) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("participant: list state: %w", err)
	}
	for _, e := range entries {
		if !isRoundFile(e.Name()) {
			continue
		}
		dst := filepath.Join(string(d), e.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(root, e.Name()), dst); err != nil {
			return fmt.Errorf("participant: migrate state: %w", err)
		}
		log.Info("moved state file into the server's state directory", "file", e.Name(), "dir", string(d))
	}
	return nil
}

func isRoundFile(name string) bool {
	var id uint64
	_, err := fmt.Sscanf(name, "round-%d.json", &id)
	return err == nil && strings.HasSuffix(name, ".json")
}

type stateDir string

func (d stateDir) path(id uint64) string {
	return filepath.Join(string(d), fmt.Sprintf("round-%d.json", id))
}

func (d stateDir) load(id uint64) (*roundState, bool, error) {
	b, err := os.ReadFile(d.path(id))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("participant: read state of round %d: %w", id, err)
	}
	var s roundState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, false, fmt.Errorf("participant: corrupt state file %s: %w", d.path(id), err)
	}
	return &s, true, nil
}

// save writes the state durably: a synced temporary file in the same
// directory renamed over the old one, then the directory synced where the
// system allows it, so a crash leaves the old state or the new, never part
// of one, and never loses the rename.
func (d stateDir) save(s *roundState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(string(d), d.path(s.RoundID), b); err != nil {
		return fmt.Errorf("participant: save state: %w", err)
	}
	return nil
}

// writeAtomic replaces path, in dir, with b: written to a temporary file
// beside it, synced, renamed over path, and the rename made durable by
// syncing dir (syncDir: a no-op where directories cannot be synced).
func writeAtomic(dir, path string, b []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()      // created readable by its owner only, as a salt must be
	defer os.Remove(tmp) // gone after the rename; left behind by a failure otherwise
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// pending lists rounds with unfinished work, oldest first. A file that
// cannot be read is skipped (and never overwritten: its salt may still be
// recovered by hand) so it does not hold up the other rounds; skipped
// lists those errors.
func (d stateDir) pending() (out []*roundState, skipped []error, err error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return nil, nil, fmt.Errorf("participant: list state: %w", err)
	}
	for _, e := range entries {
		if !isRoundFile(e.Name()) {
			continue
		}
		var id uint64
		fmt.Sscanf(e.Name(), "round-%d.json", &id)
		s, ok, err := d.load(id)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		if ok && !s.done() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RoundID < out[j].RoundID })
	return out, skipped, nil
}

// lock takes an exclusive lock on the state directory so overlapping cron
// runs never race; the second run fails fast with a clear error.
func (d stateDir) lock() (func(), error) {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return nil, fmt.Errorf("participant: state dir: %w", err)
	}
	l := flock.New(filepath.Join(string(d), "lock"))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("participant: lock: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("participant: another run holds %s", l.Path())
	}
	return func() { l.Unlock() }, nil
}
