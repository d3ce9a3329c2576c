// Package witness implements C2SP transparency-log witnessing for the
// arena's log and for other logs:
//
//   - Witness is a tlog-witness server (https://c2sp.org/tlog-witness): it
//     keeps the latest checkpoint it cosigned for each log it knows,
//     verifies that every new one is signed by the log and consistent with
//     it, refuses rollbacks and forks, and answers with a timestamped
//     Ed25519 cosignature (https://c2sp.org/tlog-cosignature,
//     cosignature/v1). A witness cosigns a log's checkpoints only if they
//     never contradict each other, so a log that shows different trees to
//     different people cannot get both cosigned.
//   - Client is the log's side: it sends each new checkpoint with a
//     consistency proof from the size the witness last cosigned, and
//     collects the cosignatures into the checkpoint the log serves.
//   - Policy is a C2SP tlog-policy (https://c2sp.org/tlog-policy): the logs
//     and witnesses a verifier trusts and the quorum of witnesses (k of n,
//     nested groups) whose cosignatures make a checkpoint acceptable.
package witness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
	"github.com/forecast-arena/arena/tlog"
)

// Log is a log a witness cosigns, or a policy trusts: its origin (its
// checkpoints' first line) and the note verifier of its key.
type Log struct {
	Origin   string
	Verifier note.Verifier
	VKey     string // the verifier key Verifier was made from
	URL      string // optional: where the log is served
}

// The refusals of AddCheckpoint, each answered with the status the
// tlog-witness protocol assigns.
var (
	ErrMalformed    = errors.New("malformed add-checkpoint request")                                  // 400
	ErrUnverified   = errors.New("checkpoint not signed by the log's key")                            // 403
	ErrUnknownLog   = errors.New("unknown log")                                                       // 404
	ErrInconsistent = errors.New("checkpoint inconsistent with the latest one cosigned for this log") // 422
)

// ConflictError is the refusal of a checkpoint sent with an old size that
// is not the size of the latest checkpoint cosigned for its log (409):
// the sender retries with Size and a proof from it.
type ConflictError struct{ Size uint64 }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the latest checkpoint cosigned for this log has size %d", e.Size)
}

// Witness is a tlog-witness server.
type Witness struct {
	signer note.Signer
	vkey   string
	logs   map[string]note.Verifier // origin → log key
	dir    string
	Logger *slog.Logger

	mu     sync.Mutex // held from checking a log's latest checkpoint to saving the next
	latest map[string]cosigned
}

// cosigned is the latest checkpoint a witness cosigned for a log, as a
// note signed by the log and the witness.
type cosigned struct {
	c    tlog.Checkpoint
	note []byte
}

// New returns the witness named name (its note key name, such as
// "witness.example.com/w1") that signs with key, cosigns the given logs
// and keeps its state in dir: one file per log holding the latest
// checkpoint it cosigned, read back here. A state file that its log's key
// does not verify is an error: the configured key changed, and cosigning
// under the new one would forget the history the old one signed.
func New(name string, key ed25519.PrivateKey, logs []Log, dir string) (*Witness, error) {
	signer, err := NewSigner(name, key, nil)
	if err != nil {
		return nil, err
	}
	vkey, err := VerifierKey(name, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("witness: state directory: %w", err)
	}
	w := &Witness{signer: signer, vkey: vkey, logs: map[string]note.Verifier{}, dir: dir, latest: map[string]cosigned{}}
	for _, l := range logs {
		if _, dup := w.logs[l.Origin]; dup {
			return nil, fmt.Errorf("witness: log %q listed twice", l.Origin)
		}
		w.logs[l.Origin] = l.Verifier
		b, err := os.ReadFile(w.statePath(l.Origin))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("witness: state of %s: %w", l.Origin, err)
		}
		n, err := note.Open(b, note.VerifierList(l.Verifier))
		if err != nil {
			return nil, fmt.Errorf("witness: state file %s of %s does not verify under the log's configured key: %w", w.statePath(l.Origin), l.Origin, err)
		}
		c, err := tlog.ParseCheckpoint([]byte(n.Text))
		if err != nil || c.Origin != l.Origin {
			return nil, fmt.Errorf("witness: state file %s: not a checkpoint of %s", w.statePath(l.Origin), l.Origin)
		}
		w.latest[l.Origin] = cosigned{c: c, note: b}
	}
	return w, nil
}

// VerifierKey is the witness's cosignature verifier key, which logs and
// policies name it by.
func (w *Witness) VerifierKey() string { return w.vkey }

// statePath is the file of a log's latest cosigned checkpoint, named by
// the origin's hash (an origin may hold any character but '+' and spaces).
func (w *Witness) statePath(origin string) string {
	h := sha256.Sum256([]byte(origin))
	return filepath.Join(w.dir, hex.EncodeToString(h[:])+".checkpoint")
}

// AddCheckpoint cosigns msg, a checkpoint note, if it is signed by its
// log and consistent with the latest checkpoint cosigned for that log:
// oldSize must be that checkpoint's size (ConflictError otherwise) and
// proof the consistency proof from it. The new checkpoint is saved before
// its cosignature lines are returned. Refusals wrap ErrMalformed,
// ErrUnverified, ErrUnknownLog or ErrInconsistent, or are a ConflictError.
func (w *Witness) AddCheckpoint(oldSize uint64, proof [][]byte, msg []byte) ([]byte, error) {
	origin, _, _ := bytes.Cut(msg, []byte("\n"))
	v, ok := w.logs[string(origin)]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownLog, origin)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		if errors.As(err, &unverified) || errors.As(err, &invalid) {
			return nil, fmt.Errorf("%w: %v", ErrUnverified, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	c, err := tlog.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if oldSize > c.Size {
		return nil, fmt.Errorf("%w: old size %d is larger than the checkpoint's %d", ErrMalformed, oldSize, c.Size)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	prev, seen := w.latest[c.Origin]
	if oldSize != prev.c.Size { // a log never cosigned has size 0
		return nil, &ConflictError{Size: prev.c.Size}
	}
	empty := sha256.Sum256(nil)
	switch {
	case c.Size == 0 && !bytes.Equal(c.Hash, empty[:]):
		return nil, fmt.Errorf("%w: a tree of size 0 has the empty root", ErrInconsistent)
	case oldSize == 0 && len(proof) > 0:
		return nil, fmt.Errorf("%w: a proof from size 0 must be empty", ErrInconsistent)
	case seen && oldSize == c.Size && !bytes.Equal(prev.c.Hash, c.Hash):
		return nil, fmt.Errorf("%w: size %d was cosigned with another root hash (a fork)", ErrInconsistent, c.Size)
	case oldSize > 0 && oldSize < c.Size:
		if tlog.VerifyConsistency(oldSize, c.Size, proof, prev.c.Hash, c.Hash) != nil {
			return nil, fmt.Errorf("%w: the consistency proof %d → %d does not verify", ErrInconsistent, oldSize, c.Size)
		}
	}
	// Keep the log's signatures and this witness's, not the others'
	// (unverified here) cosignatures.
	n.UnverifiedSigs = nil
	out, err := note.Sign(n, w.signer)
	if err != nil {
		return nil, fmt.Errorf("witness: cosign %s at %d: %w", c.Origin, c.Size, err)
	}
	if err := save(w.statePath(c.Origin), out); err != nil {
		return nil, fmt.Errorf("witness: save the checkpoint of %s: %w", c.Origin, err)
	}
	w.latest[c.Origin] = cosigned{c: c, note: out}
	// The cosignature is the last line note.Sign wrote.
	i := bytes.LastIndex(out[:len(out)-1], []byte("\n"))
	return out[i+1:], nil
}

// Latest returns the latest checkpoint the witness cosigned for origin, a
// note with the log's signature and the witness's cosignature; nil when
// it has cosigned none.
func (w *Witness) Latest(origin string) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.latest[origin].note)
}

// save replaces a state file whole and makes the rename durable: a
// witness that forgot a checkpoint after a crash could cosign a rollback.
// The file is synced before the rename; the directory is synced after
// it (on Windows, where the rename is not documented as atomic, see
// package safefile: the witness is for Unix systems; the package builds
// elsewhere so that its clients and tests do).
func save(path string, data []byte) error {
	if err := safefile.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// maxRequest bounds an add-checkpoint body: 63 proof lines and a
// checkpoint with the signatures a note may carry.
const maxRequest = 1 << 17

// Handler serves the witness's endpoints relative to its URL prefix: POST
// /add-checkpoint (tlog-witness) and GET /<hex SHA-256 of an origin>/checkpoint,
// the latest checkpoint it cosigned for that log.
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", w.serveAdd)
	mux.HandleFunc("GET /{origin}/checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		for origin := range w.logs {
			if h := sha256.Sum256([]byte(origin)); hex.EncodeToString(h[:]) == r.PathValue("origin") {
				if n := w.Latest(origin); n != nil {
					rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
					rw.Write(n)
					return
				}
			}
		}
		http.Error(rw, "no checkpoint cosigned for that log", http.StatusNotFound)
	})
	return mux
}

func (w *Witness) serveAdd(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxRequest))
	if err != nil {
		http.Error(rw, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	old, proof, msg, err := ParseAddCheckpoint(body)
	if err == nil {
		var sigs []byte
		if sigs, err = w.AddCheckpoint(old, proof, msg); err == nil {
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			rw.Write(sigs)
			return
		}
	}
	var conflict *ConflictError
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(http.StatusConflict)
		fmt.Fprintf(rw, "%d\n", conflict.Size)
		return
	case errors.Is(err, ErrMalformed):
		status = http.StatusBadRequest
	case errors.Is(err, ErrUnverified):
		status = http.StatusForbidden
	case errors.Is(err, ErrUnknownLog):
		status = http.StatusNotFound
	case errors.Is(err, ErrInconsistent):
		status = http.StatusUnprocessableEntity
		// A signed checkpoint that contradicts a cosigned one is
		// evidence against the log: keep it in the witness's log.
		w.logger().WarnContext(r.Context(), "witness: inconsistent checkpoint refused", "err", err, "checkpoint", string(msg))
	default:
		w.logger().ErrorContext(r.Context(), "witness: add-checkpoint", "err", err)
		http.Error(rw, "internal error", status)
		return
	}
	http.Error(rw, err.Error(), status)
}

func (w *Witness) logger() *slog.Logger {
	return arena.Logger(w.Logger)
}
