package participant

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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
	// Abandoned: the round can no longer be committed or revealed.
	Abandoned string `json:"abandoned,omitempty"`
}

func (s *roundState) done() bool {
	return s.Abandoned != "" || (s.Revealed && (len(s.Reasoning) == 0 || s.ReasoningSent))
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

// save writes the state durably: temp file, fsync, rename, fsync dir.
func (d stateDir) save(s *roundState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	final := d.path(s.RoundID)
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("participant: save state: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("participant: save state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("participant: save state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("participant: save state: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("participant: save state: %w", err)
	}
	dir, err := os.Open(string(d))
	if err != nil {
		return fmt.Errorf("participant: save state: %w", err)
	}
	defer dir.Close()
	return dir.Sync()
}

// pending lists rounds with unfinished work, oldest first.
func (d stateDir) pending() ([]*roundState, error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return nil, fmt.Errorf("participant: list state: %w", err)
	}
	var out []*roundState
	for _, e := range entries {
		var id uint64
		if _, err := fmt.Sscanf(e.Name(), "round-%d.json", &id); err != nil || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		s, ok, err := d.load(id)
		if err != nil {
			return nil, err
		}
		if ok && !s.done() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RoundID < out[j].RoundID })
	return out, nil
}

// lock takes an exclusive lock on the state directory so overlapping cron
// runs never race; the second run fails fast with a clear error.
func (d stateDir) lock() (func(), error) {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return nil, fmt.Errorf("participant: state dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(string(d), "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("participant: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("participant: another run holds %s", f.Name())
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
