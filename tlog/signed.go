package tlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
)

// SignedTree is a tree the log key signed: its size and root hash.
type SignedTree struct {
	Size uint64
	Root []byte
}

// SignedState keeps the largest tree the log key has signed, somewhere a
// restore of the database does not roll back (a file beside the key, see
// StateFile). The database's own record of its checkpoints
// goes back with a restored backup; without this the log would sign,
// under the same key, a second root for a size it already published.
type SignedState interface {
	// LastSigned returns the largest tree recorded: Size 0 in the record
	// of a key that has signed nothing yet, an error wrapping ErrNoRecord
	// when there is no record at all (a lost record is not "nothing
	// signed").
	LastSigned() (SignedTree, error)
	// RecordSigned records t, durably, unless a larger tree is recorded.
	RecordSigned(t SignedTree) error
}

// ErrNoRecord is wrapped by the errors of a SignedState that holds no
// record at all, as when its file is missing.
var ErrNoRecord = errors.New("no record of the trees the log key signed")

// ErrFork is wrapped by the errors refusing to sign a tree that
// contradicts one the log key already signed.
var ErrFork = errors.New("the log key already signed a different tree")

// CheckSigned reports whether the log holds the tree recorded in its
// SignedState: at least as many entries, and the same root at the
// recorded size. It fails with ECONFLICT wrapping ErrFork otherwise:
// whatever this log signed next would fork the log the key published.
func (l *Log) CheckSigned(ctx context.Context) error {
	if l.Signed == nil {
		return nil
	}
	last, err := l.Signed.LastSigned()
	if err != nil || last.Size == 0 {
		return err
	}
	return l.consistentWith(ctx, last, "the log key signed")
}

// consistentWith reports whether the log holds tree t, which the log key
// (or a witness of it) signed according to by.
func (l *Log) consistentWith(ctx context.Context, t SignedTree, by string) error {
	tree, n, err := l.sync(ctx)
	if err != nil {
		return err
	}
	if n < t.Size {
		return arena.Errorf(arena.ECONFLICT, "tlog: %s a tree of %d entries (root %x), but this database's log has only %d: %w (an older backup restored, or another database given this key?)", by, t.Size, t.Root, n, ErrFork)
	}
	root, err := tree.root(ctx, t.Size)
	if err != nil {
		return err
	}
	if !Equal(root, t.Root) {
		return arena.Errorf(arena.ECONFLICT, "tlog: %s a tree of %d entries with root %x, but this database's first %d entries hash to %x: %w (an older backup restored and appended to, or another database given this key?)", by, t.Size, t.Root, t.Size, root, ErrFork)
	}
	return nil
}

// beforeSigning checks that the log still holds the tree recorded as
// signed, then records t, the tree about to be signed: a signature leaves
// this process only once its tree is on record.
func (l *Log) beforeSigning(ctx context.Context, t SignedTree) error {
	if l.Signed == nil {
		return nil
	}
	if err := l.CheckSigned(ctx); err != nil {
		return err
	}
	if err := l.Signed.RecordSigned(t); err != nil {
		return fmt.Errorf("tlog: record the tree of size %d before signing it: %w", t.Size, err)
	}
	return nil
}

// StateFile is a SignedState kept in a file, locked while it is read and
// replaced so that processes sharing it (servers of one database on one
// host) never record a smaller tree over a larger one. Its text is three
// lines: a header, the size and the hex root. The file is created once,
// by Create; RecordSigned and LastSigned refuse a missing one
// (ErrNoRecord), and anything at its path but a regular file (a symbolic
// link, dangling or not, a FIFO, a device, a directory) is refused
// without being opened for long: nothing at that path can make the log
// sign unchecked or block it.
type StateFile struct {
	Path string
}

var _ SignedState = StateFile{}

// StatePath is the state file of the log signed with the key file at
// keyPath: beside it, so every database the key signs shares it.
func StatePath(keyPath string) string { return keyPath + ".signed" }

const stateHeader = "forecast-arena signed tree v1"

// maxStateFile bounds a state file: a header, a size and a hex hash.
const maxStateFile = 1024

// emptyRoot is the RFC 6962 root of the empty tree, SHA-256 of nothing:
// the root a record of size 0 holds.
var emptyRoot = func() []byte { h := sha256.Sum256(nil); return h[:] }()

// LastSigned implements SignedState.
func (s StateFile) LastSigned() (SignedTree, error) {
	lock, err := s.lockRecord()
	if err != nil {
		return SignedTree{}, err
	}
	defer lock.Unlock()
	return s.read()
}

// RecordSigned implements SignedState: the file is replaced whole (see
// package safefile for what that guarantees on each system), so a crash
// leaves the old tree or the new one. A missing record is an error
// wrapping ErrNoRecord: the record is made by Create, never again by a
// signature, so that one deleted behind a running server stops it from
// signing rather than starting afresh.
func (s StateFile) RecordSigned(t SignedTree) error {
	lock, err := s.lockRecord()
	if err != nil {
		return err
	}
	defer lock.Unlock()
	last, err := s.read()
	if err != nil {
		return err
	}
	if t.Size == 0 || t.Size <= last.Size {
		return nil
	}
	return s.write(t)
}

// Create makes the record, holding t (Size 0 for a key that has signed
// nothing), and fails when anything is at its path already.
func (s StateFile) Create(t SignedTree) error {
	if t.Size == 0 {
		t.Root = emptyRoot
	}
	if len(t.Root) != sha256.Size {
		return fmt.Errorf("tlog: record a tree of size %d: root of %d bytes", t.Size, len(t.Root))
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("tlog: create %s: %w", s.Path, err)
	}
	lock, err := s.lock()
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if _, err := os.Lstat(s.Path); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = fs.ErrExist
		}
		return fmt.Errorf("tlog: create %s: %w", s.Path, err)
	}
	return s.write(t)
}

func (s StateFile) write(t SignedTree) error {
	text := fmt.Sprintf("%s\n%d\n%x\n", stateHeader, t.Size, t.Root)
	if err := safefile.WriteFile(s.Path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("tlog: write %s: %w", s.Path, err)
	}
	return nil
}

// lockRecord takes the lock of a record that exists: a missing record
// is ErrNoRecord, with no lock file made beside nothing.
func (s StateFile) lockRecord() (*flock.Flock, error) {
	if _, err := os.Lstat(s.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, missing(err)
	}
	return s.lock()
}

// lock takes the record's lock file, opened without following a
// symbolic link or waiting on a FIFO.
func (s StateFile) lock() (*flock.Flock, error) {
	path := s.Path + ".lock"
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, arena.Errorf(arena.EINVALID, "tlog: lock %s: %v: remove it (the arena makes the lock file itself)", path, &safefile.NotRegularError{Path: path, Kind: safefile.Kind(fi.Mode())})
	}
	lock := flock.New(path, flock.SetFlag(safefile.LockFlags))
	if err := lock.Lock(); err != nil {
		return nil, fmt.Errorf("tlog: lock %s: %w", path, err)
	}
	return lock, nil
}

// read parses the state file.
func (s StateFile) read() (SignedTree, error) {
	f, err := safefile.OpenRegularNoFollow(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return SignedTree{}, missing(err)
	}
	var nr *safefile.NotRegularError
	if errors.As(err, &nr) {
		return SignedTree{}, arena.Errorf(arena.EINVALID, "tlog: %s is %s, not the record of the trees the log key signed (a regular file): %w", s.Path, nr.Kind, ErrNoRecord)
	}
	if err != nil {
		return SignedTree{}, fmt.Errorf("tlog: read %s: %w", s.Path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return SignedTree{}, fmt.Errorf("tlog: read %s: %w", s.Path, err)
	}
	t, err := parseState(b)
	if err != nil {
		return SignedTree{}, arena.Errorf(arena.EINVALID, "tlog: %s is not a signed-tree state file (%v): it records the largest tree the log key signed; see docs/operations.md before replacing it", s.Path, err)
	}
	return t, nil
}

// missing is the error of a record that does not exist: it wraps both
// ErrNoRecord and err (an fs.ErrNotExist naming the path).
func missing(err error) error {
	return fmt.Errorf("tlog: %w (%w)", ErrNoRecord, err)
}

func parseState(b []byte) (SignedTree, error) {
	if len(b) > maxStateFile {
		return SignedTree{}, fmt.Errorf("more than %d bytes", maxStateFile)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 4 || lines[0] != stateHeader || lines[3] != "" {
		return SignedTree{}, errors.New("want a header, a size and a root hash, one a line")
	}
	size, err := strconv.ParseUint(lines[1], 10, 63)
	if err != nil || lines[1] != strconv.FormatUint(size, 10) {
		return SignedTree{}, fmt.Errorf("size %q", lines[1])
	}
	root, err := hex.DecodeString(lines[2])
	if err != nil || len(root) != sha256.Size || lines[2] != hex.EncodeToString(root) {
		return SignedTree{}, fmt.Errorf("root hash %q", lines[2])
	}
	if size == 0 && !Equal(root, emptyRoot) {
		return SignedTree{}, fmt.Errorf("size 0 with root %s, not the empty tree's", lines[2])
	}
	return SignedTree{Size: size, Root: root}, nil
}

// CheckSeen checks a checkpoint note someone else holds, such as the
// latest one a witness cosigned. When it carries the log key's signature
// under this publisher's origin, its tree is recorded as signed (it was,
// whatever this database says) and the log must hold it: ECONFLICT
// wrapping ErrFork otherwise. A note of another origin or key is none of
// this log's business and ignored.
func (p *Publisher) CheckSeen(ctx context.Context, msg []byte, by string) error {
	c, _, err := openCheckpoint(msg, p.verifier)
	if err != nil {
		return nil
	}
	t := SignedTree{Size: c.Size, Root: c.Hash}
	if p.Log.Signed != nil {
		if err := p.Log.Signed.RecordSigned(t); err != nil {
			return fmt.Errorf("tlog: record the checkpoint %s: %w", by, err)
		}
	}
	return p.Log.consistentWith(ctx, t, by+" holds a checkpoint signed by the log key of")
}
