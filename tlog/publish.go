package tlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
)

// MemCheckpoints is an arena.CheckpointStore in memory, for tests and for tools
// that publish once.
type MemCheckpoints struct {
	mu   sync.Mutex
	size uint64
	note []byte
}

// LatestCheckpoint implements arena.CheckpointStore.
func (m *MemCheckpoints) LatestCheckpoint(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.note), nil
}

// SaveCheckpoint implements arena.CheckpointStore.
func (m *MemCheckpoints) SaveCheckpoint(_ context.Context, c arena.SignedCheckpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.note != nil && c.Size < m.size {
		return arena.Errorf(arena.ECONFLICT, "tlog: checkpoint %d is older than the saved %d", c.Size, m.size)
	}
	if m.note != nil && c.Size == m.size && c.Text != NoteText(m.note) {
		return arena.Errorf(arena.ECONFLICT, "tlog: another checkpoint of size %d is saved", c.Size)
	}
	m.size, m.note = c.Size, bytes.Clone(c.Note)
	return nil
}

// NoteText is the signed text of a note: what precedes its last blank
// line, which its signature lines follow.
func NoteText(n []byte) string {
	if i := bytes.LastIndex(n, []byte("\n\n")); i >= 0 {
		return string(n[:i+1])
	}
	return string(n)
}

// Cosigner collects witness cosignatures on the log's checkpoints (the
// witness package's Client is one).
type Cosigner interface {
	// Cosign returns signed, a checkpoint note c signed by the log, with
	// the cosignatures it collected appended, and an error naming the
	// witnesses that did not cosign: the note comes back with the
	// others' cosignatures even then. It asks only the witnesses whose
	// cosignature signed lacks. prove returns the consistency proof to c
	// from an older size.
	Cosign(ctx context.Context, signed []byte, c Checkpoint, prove func(oldSize uint64) ([][]byte, error)) ([]byte, error)
}

// DefaultInterval is how long after an append at most a checkpoint that
// covers it is published, by default.
const DefaultInterval = 10 * time.Second

// Publisher publishes the log as C2SP specifies: signed checkpoints
// (tlog-checkpoint), with witness cosignatures when it has a Cosigner
// (tlog-witness, tlog-cosignature), and the hash tiles and entry bundles
// clients prove entries and checkpoints with (tlog-tiles).
type Publisher struct {
	Log   *Log
	Store arena.CheckpointStore
	// Cosigner, when set, collects cosignatures before a checkpoint is
	// saved, for at most half the Interval.
	Cosigner Cosigner
	// Interval bounds the time from an append to a checkpoint that
	// covers it (DefaultInterval when zero): Run looks for new entries
	// four times per interval.
	Interval time.Duration
	// Sealed, when set, says whether any of a bundle's entries must not
	// be published yet (see Log.Tile).
	Sealed func(context.Context, []arena.LogEntry) (bool, error)
	Logger *slog.Logger

	origin   string
	vkey     string
	signer   note.Signer
	verifier note.Verifier
	mu       sync.Mutex // one Publish at a time
}

// NewPublisher returns the publisher of l's checkpoints under origin,
// signed with l's key and kept in store.
func NewPublisher(l *Log, origin string, store arena.CheckpointStore) (*Publisher, error) {
	signer, err := NoteSigner(origin, l.Key)
	if err != nil {
		return nil, err
	}
	vkey, err := VerifierKey(origin, l.PublicKey())
	if err != nil {
		return nil, err
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	return &Publisher{Log: l, Store: store, origin: origin, vkey: vkey, signer: signer, verifier: verifier}, nil
}

// Origin is the log's origin, the first line of its checkpoints.
func (p *Publisher) Origin() string { return p.origin }

// VerifierKey is the log's note verifier key, which clients and
// witnesses check checkpoints with.
func (p *Publisher) VerifierKey() string { return p.vkey }

func (p *Publisher) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return DefaultInterval
}

func (p *Publisher) logger() *slog.Logger {
	return arena.Logger(p.Logger)
}

// Publish signs, cosigns and saves a checkpoint of the log's current size
// when the log grew since the latest one, and otherwise asks the
// witnesses missing from the latest one again. It returns the latest
// checkpoint. Before signing it checks that the log still has the tree
// the latest checkpoint describes: a log that lost or changed entries
// gets no checkpoint contradicting one already published (ECONFLICT).
// Witnesses that fail are reported in the error, with the checkpoint
// published all the same.
func (p *Publisher) Publish(ctx context.Context) (Checkpoint, error) {
	return p.publish(ctx, 0, false)
}

// PublishAt returns the checkpoint note of the log's first size entries,
// with its cosignatures: the latest one when it is of that size, else one
// signed, cosigned and saved as Publish does. A larger checkpoint saved
// already (another server published further) is ECONFLICT wrapping
// ErrPublishedPast: none of a smaller tree is signed after it.
func (p *Publisher) PublishAt(ctx context.Context, size uint64) ([]byte, error) {
	// A witness that failed leaves the checkpoint saved (Run reports it).
	_, perr := p.publish(ctx, size, true)
	n, err := p.Checkpoint(ctx)
	if err != nil {
		return nil, errors.Join(perr, err)
	}
	c, err := ParseCheckpoint([]byte(NoteText(n)))
	if err != nil {
		return nil, err
	}
	switch {
	case c.Size == size:
		return n, nil
	case c.Size > size:
		return nil, arena.Errorf(arena.ECONFLICT, "tlog: a checkpoint of %d entries is published, not of %d: %w", c.Size, size, ErrPublishedPast)
	case perr != nil:
		return nil, perr
	}
	return nil, fmt.Errorf("tlog: the checkpoint of %d entries was not saved", size)
}

// ErrPublishedPast is wrapped by PublishAt's refusal to sign a checkpoint
// of fewer entries than one published already.
var ErrPublishedPast = errors.New("a larger checkpoint is published")

// publish is Publish of the log's first at entries (with exact; all of
// them without).
func (p *Publisher) publish(ctx context.Context, at uint64, exact bool) (Checkpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The checkpoint first, the size second: another server may append
	// and publish in between, and the log must not look shorter than
	// the checkpoint read.
	latest, err := p.Store.LatestCheckpoint(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: latest checkpoint: %w", err)
	}
	tree, size, err := p.Log.sync(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	if exact {
		if at > size {
			return Checkpoint{}, arena.Errorf(arena.EINVALID, "tlog: no checkpoint of %d entries: the log has %d", at, size)
		}
		size = at
	}
	var prev Checkpoint
	if latest != nil {
		if prev, _, err = openCheckpoint(latest, p.verifier); err != nil {
			return Checkpoint{}, arena.Errorf(arena.ECONFLICT, "tlog: the published checkpoint does not verify under origin %s and the log key (were they changed?): %w", p.origin, err)
		}
		if prev.Size > size {
			return Checkpoint{}, arena.Errorf(arena.ECONFLICT, "tlog: checkpoint %d was published, but the log has %d entries: refusing to sign a smaller tree", prev.Size, size)
		}
		root, err := tree.root(ctx, prev.Size)
		if err != nil {
			return Checkpoint{}, err
		}
		if !Equal(root, prev.Hash) {
			return Checkpoint{}, arena.Errorf(arena.ECONFLICT, "tlog: the log's first %d entries hash to %x, but the published checkpoint says %x: refusing to sign a fork", prev.Size, root, prev.Hash)
		}
		if prev.Size == size {
			return prev, p.cosignAgain(ctx, tree, latest, prev)
		}
	}
	root, err := tree.root(ctx, size)
	if err != nil {
		return Checkpoint{}, err
	}
	c := Checkpoint{Origin: p.origin, Size: size, Hash: root}
	if err := p.Log.beforeSigning(ctx, SignedTree{Size: c.Size, Root: root}); err != nil {
		return Checkpoint{}, err
	}
	signed, err := note.Sign(&note.Note{Text: string(c.Text())}, p.signer)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: sign checkpoint: %w", err)
	}
	signed, cosignErr := p.cosign(ctx, tree, signed, c)
	if err := p.Store.SaveCheckpoint(ctx, arena.SignedCheckpoint{Size: c.Size, Text: NoteText(signed), Note: signed}); err != nil {
		if arena.ErrorKind(err) == arena.ECONFLICT {
			// Another server published a larger checkpoint meanwhile.
			return prev, nil
		}
		return Checkpoint{}, fmt.Errorf("tlog: save checkpoint %d: %w", c.Size, err)
	}
	return c, cosignErr
}

// cosign collects cosignatures on signed, for half the interval at most.
func (p *Publisher) cosign(ctx context.Context, tree *Tree, signed []byte, c Checkpoint) ([]byte, error) {
	if p.Cosigner == nil {
		return signed, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.interval()/2)
	defer cancel()
	prove := func(old uint64) ([][]byte, error) {
		return tree.consistencyProof(ctx, old, c.Size)
	}
	out, err := p.Cosigner.Cosign(ctx, signed, c, prove)
	if out == nil {
		out = signed
	}
	return out, err
}

// cosignAgain asks the witnesses missing from the latest checkpoint
// (down or unreachable when it was signed) and saves what they add.
func (p *Publisher) cosignAgain(ctx context.Context, tree *Tree, latest []byte, c Checkpoint) error {
	out, err := p.cosign(ctx, tree, latest, c)
	if !bytes.Equal(out, latest) {
		if serr := p.Store.SaveCheckpoint(ctx, arena.SignedCheckpoint{Size: c.Size, Text: NoteText(out), Note: out}); serr != nil && arena.ErrorKind(serr) != arena.ECONFLICT {
			return errors.Join(err, fmt.Errorf("tlog: save checkpoint %d: %w", c.Size, serr))
		}
	}
	return err
}

// Run publishes until ctx ends: a checkpoint at most an Interval after
// each append. Failures are logged, each once until it changes.
func (p *Publisher) Run(ctx context.Context) {
	tick := time.NewTicker(p.interval() / 4)
	defer tick.Stop()
	var last string
	for {
		_, err := p.Publish(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && err.Error() != last:
			p.logger().ErrorContext(ctx, "tamper-evident log: publishing the checkpoint", "origin", p.origin, "err", err)
		case err == nil && last != "":
			p.logger().InfoContext(ctx, "tamper-evident log: checkpoint published again without errors", "origin", p.origin)
		}
		last = ""
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Checkpoint returns the latest published checkpoint note, with the
// cosignatures collected; ENOTFOUND before the first.
func (p *Publisher) Checkpoint(ctx context.Context) ([]byte, error) {
	n, err := p.Store.LatestCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("tlog: latest checkpoint: %w", err)
	}
	if n == nil {
		return nil, arena.Errorf(arena.ENOTFOUND, "tlog: no checkpoint published yet")
	}
	return n, nil
}

// Cache lifetimes of the published resources: the checkpoint changes
// with every append; a full tile or bundle never changes; a partial one
// is replaced by a wider one soon.
const (
	cacheCheckpoint = "public, max-age=2"
	cacheFull       = "public, max-age=31536000, immutable"
	cachePartial    = "public, max-age=60"
)

// Handler serves the log's C2SP endpoints relative to the log's prefix
// (mount it with http.StripPrefix): GET /checkpoint, GET /vkey, GET
// /tile/<L>/<N>[.p/<W>] and GET /tile/entries/<N>[.p/<W>]. Errors are
// plain text with the status their kind maps to.
func (p *Publisher) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /checkpoint", func(w http.ResponseWriter, r *http.Request) {
		n, err := p.Checkpoint(r.Context())
		if err != nil {
			p.fail(w, r, err)
			return
		}
		write(w, "text/plain; charset=utf-8", cacheCheckpoint, n)
	})
	mux.HandleFunc("GET /vkey", func(w http.ResponseWriter, r *http.Request) {
		write(w, "text/plain; charset=utf-8", "public, max-age=300", []byte(p.vkey+"\n"))
	})
	mux.HandleFunc("GET /tile/", func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/")
		data, full, err := p.Log.Tile(r.Context(), path, p.Sealed)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		cache := cachePartial
		if full {
			cache = cacheFull
		}
		if strings.HasPrefix(path, "tile/entries/") && acceptsGzip(r) {
			// Entry bundles are JSON and compress well; tlog-tiles asks
			// for HTTP compression (hash tiles do not compress).
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			data = buf.Bytes()
		}
		w.Header().Set("Vary", "Accept-Encoding")
		write(w, "application/octet-stream", cache, data)
	})
	return mux
}

func write(w http.ResponseWriter, contentType, cache string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(body)
}

// acceptsGzip reports whether a request's Accept-Encoding lets the answer
// be gzip-compressed (RFC 9110, section 12.5.3): gzip (or its alias
// x-gzip) listed with a weight above 0, else "*" listed so. A coding
// listed with weight 0 is refused ("gzip;q=0", "gzip; Q=0.000"), a
// coding left unlisted is not acceptable, and an element whose weight is
// not a qvalue is ignored: compressed bytes go only to a client that
// asked for them.
func acceptsGzip(r *http.Request) bool {
	gzipQ, anyQ := -1, -1 // weights in thousandths; -1 when not listed
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, elem := range strings.Split(v, ",") {
			coding, q, ok := parseCoding(elem)
			switch {
			case !ok:
			case coding == "gzip" || coding == "x-gzip":
				gzipQ = max(gzipQ, q)
			case coding == "*":
				anyQ = max(anyQ, q)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// parseCoding parses one element of an Accept-Encoding list: a coding,
// lower-cased, and its weight in thousandths (1000 without a "q"
// parameter); ok is false for an empty or malformed element.
func parseCoding(elem string) (coding string, q int, ok bool) {
	parts := strings.Split(elem, ";")
	coding = strings.ToLower(strings.TrimSpace(parts[0]))
	if coding == "" || strings.ContainsAny(coding, " \t\"") {
		return "", 0, false
	}
	q = 1000
	for _, p := range parts[1:] {
		name, value, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found {
			return "", 0, false
		}
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			if q, ok = parseQValue(strings.TrimSpace(value)); !ok {
				return "", 0, false
			}
		}
	}
	return coding, q, true
}

// parseQValue parses a weight, "0" to "1" with at most three decimals
// (qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )), in
// thousandths.
func parseQValue(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole, frac, dot := strings.Cut(s, ".")
	if len(whole) != 1 || (dot && len(frac) > 3) {
		return 0, false
	}
	n := 0
	for i := range 3 {
		d := 0
		if i < len(frac) {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false
			}
			d = int(frac[i] - '0')
		}
		n = n*10 + d
	}
	if whole == "1" {
		if n != 0 {
			return 0, false
		}
		return 1000, true
	}
	return n, true
}

// fail answers an error as plain text: 400 for a malformed request, 404
// for what the log does not have (yet), 500 (logged) otherwise.
func (p *Publisher) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, "internal error"
	switch arena.ErrorKind(err) {
	case arena.EINVALID:
		status, msg = http.StatusBadRequest, err.Error()
	case arena.ENOTFOUND:
		status, msg = http.StatusNotFound, err.Error()
	default:
		p.logger().ErrorContext(r.Context(), "tamper-evident log endpoint", "path", r.URL.Path, "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}
