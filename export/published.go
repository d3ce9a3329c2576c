package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// Published exports live in the database (arena.ExportStore), one per
// checkpoint, so that every server of an arena serves each of them. Each
// file is cut into parts after lines chosen by their content, and a part
// is stored once under its SHA-256; a file's parts are listed by a tree of
// nodes stored the same way (see buildTree). A Publisher makes each export
// from the one it made before: a table whose data versions did not move
// keeps its parts and digest without being read, the log's entries are
// encoded from where the previous export stopped (or from the first entry
// a trigger unsealed), and only what changed is stored. Its first export
// (a new process), or one after a pause longer than ReuseFor, reads every
// table.

// Bounds of a part: it ends after the first line, past minPart bytes,
// whose FNV hash is 0 modulo cutEvery, or at the first line past maxPart.
// With rows of a few hundred bytes a part holds about 8 KiB.
const (
	minPart  = 4 << 10
	maxPart  = 256 << 10
	cutEvery = 16
)

// maxTrailing bounds the parts an export's log entries may end with that
// were cut where an earlier export ended rather than by their content:
// past it, the next export encodes them again into parts cut by content.
const maxTrailing = 8

// ReuseFor is how long a Publisher makes an export from its previous one.
// Parts and nodes younger than a grace period of twice this (see
// PruneExports) are never deleted, and neither is the manifest of an
// export that young, so what an export reuses is still stored when its
// manifest is.
const ReuseFor = 30 * time.Minute

// Manifest is what the store keeps of one published export: its files in
// index order, each with the tree of its parts.
type Manifest struct {
	Size  uint64         `json:"tree_size"` // the checkpoint's
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one file of a published export.
type ManifestFile struct {
	IndexEntry
	// Root and Depth are the tree of the file's parts (see buildTree).
	Root  string `json:"root,omitempty"`
	Depth int    `json:"depth,omitempty"`
	// Parts lists the parts themselves, as the manifests published
	// before the trees did.
	Parts []string `json:"parts,omitempty"`
}

// parts lists the file's parts in order.
func (f ManifestFile) parts(ctx context.Context, store arena.ExportStore) ([]string, error) {
	if f.Parts != nil {
		return f.Parts, nil
	}
	var out []string
	err := walkTree(ctx, store, f.Root, f.Depth, func(p string) error { out = append(out, p); return nil })
	return out, err
}

// Index is the manifest's index.json.
func (m *Manifest) Index() Index {
	idx := Index{Files: make([]IndexEntry, len(m.Files))}
	for i, f := range m.Files {
		idx.Files[i] = f.IndexEntry
	}
	return idx
}

// PublishStats are what publishing an export cost.
type PublishStats struct {
	Size     uint64 // the checkpoint's
	Bytes    int64  // the export's files, in all
	Parts    int    // its parts
	Read     int    // the tables read (the others kept from the previous export)
	NewBytes int64  // the bytes of the parts and nodes it was the first to store
	NewParts int
	Manifest int  // the bytes of its manifest, stored for it alone
	Stored   bool // false when another server published this checkpoint's export first
}

// A Signer gives the log's checkpoint of exactly size entries, with its
// cosignatures, signing one if none is saved yet (tlog.Publisher's
// PublishAt): ErrLogGrew when a larger one is saved already.
type Signer func(ctx context.Context, size uint64) ([]byte, error)

// Note is the Signer of one checkpoint note: the log must hold exactly
// its entries when the export is read (ErrLogGrew otherwise).
func Note(note []byte) Signer {
	return func(context.Context, uint64) ([]byte, error) { return note, nil }
}

// Publisher stores exports in an arena.ExportStore, each made from the
// previous one; one Publisher serves one process.
type Publisher struct {
	Store arena.ExportStore
	// Now is the clock of ReuseFor (nil: the wall clock).
	Now func() time.Time

	mu   sync.Mutex
	last *made // the export this publisher made and stored last
}

// made is what a Publisher keeps of an export it made: each file's parts,
// digest and tree, and how it was made.
type made struct {
	size  uint64
	at    time.Time
	files map[string]*madeFile
}

type madeFile struct {
	key   string // the data versions its table was read at ("": made every time)
	entry IndexEntry
	tree  *partTree
	// The log's entries only: where each part starts, where the file
	// ends, and the first entry written sealed of each round.
	bounds []bound
	end    bound
	sealed map[uint64]uint64
}

// bound is a place in a file between two lines: the lines and bytes
// before it, and the SHA-256 state over those bytes.
type bound struct {
	line uint64
	size int64
	sha  []byte
	cut  bool // the file's start or a cut by content (not where an export ended)
}

// tableKeys are the data versions each published table is read from: an
// export keeps a table's parts while its versions are the previous
// export's. The log's entries are encoded from where the previous export
// stopped instead.
var tableKeys = map[string][]arena.Domain{
	"rounds":        {arena.DomainRounds, arena.DomainScores},
	"round_markets": {arena.DomainRounds, arena.DomainScores},
	"markets":       {arena.DomainMarkets, arena.DomainRounds},
	"submissions":   {arena.DomainScores}, // a round's, once it is triggered: they no longer change
	"scores":        {arena.DomainScores},
	"agents":        {arena.DomainAgents},
	"leaderboard":   {arena.DomainScores, arena.DomainAgents},
}

// Publish stores the export of the log as it stands, as JSON Lines: it
// reads one state of the store (src.Forecast's snapshot), gets sign's
// checkpoint of exactly the entries the log holds in it, and stores the
// export of that state as the export of the checkpoint's size. An export
// of that size stored already (by another server) is kept. Parts and
// nodes go in before the manifest, so that a manifest stored names parts
// stored.
func (p *Publisher) Publish(ctx context.Context, src Source, sign Signer) (PublishStats, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var st PublishStats
	err := src.Forecast.Snapshot(ctx, func(snap arena.StoreSnapshot, board func(context.Context) (scoring.Board, error)) error {
		size, err := snap.LogSize(ctx)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		st.Size = size
		// Signed first, whether or not the export is stored: a signer
		// that publishes (tlog.Publisher.PublishAt) asks the witnesses
		// missing from a checkpoint published already again.
		note, err := signed(ctx, src.Log, sign, size)
		if err != nil {
			return err
		}
		if _, _, err := p.Store.ExportManifest(ctx, size, false); err == nil {
			return nil
		} else if arena.ErrorKind(err) != arena.ENOTFOUND {
			return err
		}
		vs, err := snap.Versions(ctx)
		if err != nil {
			return err
		}
		b := &building{p: p, ctx: ctx, st: &st, prev: p.reusable(size), now: &made{size: size, files: map[string]*madeFile{}}}
		if b.prev == nil {
			if b.stored, err = p.latestStored(ctx); err != nil {
				return err
			}
		}
		m := Manifest{Size: size}
		meta, err := metaFile(src, JSONL, time.Time{})
		if err != nil {
			return err
		}
		if err := b.small(&m, "meta.json", meta); err != nil {
			return err
		}
		rd := state{st: snap, board: board}
		method := src.Forecast.ScoringMethod().Digest()
		for _, sp := range Specs {
			var f *madeFile
			if sp.Name == "log_entries" {
				f, err = b.log(rd, size)
			} else {
				f, err = b.table(rd, sp.Name, vs.Key(tableKeys[sp.Name]...)+"/"+method)
			}
			if err != nil {
				return err
			}
			root, depth := f.tree.root()
			m.Files = append(m.Files, ManifestFile{IndexEntry: f.entry, Root: root, Depth: depth})
		}
		if err := b.small(&m, CheckpointFile, note); err != nil {
			return err
		}
		for _, f := range m.Files {
			st.Bytes += f.Size
		}
		enc, err := json.Marshal(m)
		if err != nil {
			return err
		}
		st.Manifest = len(enc)
		if st.Stored, err = p.Store.SaveExportManifest(ctx, size, enc); err != nil || !st.Stored {
			// Another server's manifest of this size may name other
			// parts: the next export is made from this publisher's last.
			return err
		}
		b.now.at = p.now()
		p.last = b.now
		return nil
	})
	return st, err
}

func (p *Publisher) now() time.Time { return arena.Clock(p.Now)() }

// reusable is the previous export to make the one of size from: the last
// one this publisher stored, when it is younger than ReuseFor and of
// fewer entries.
func (p *Publisher) reusable(size uint64) *made {
	if p.last == nil || p.last.size > size || p.now().Sub(p.last.at) > ReuseFor {
		return nil
	}
	return p.last
}

// latestStored is, by file name, the parts and nodes of the latest export
// stored: what an export made without a previous one of this publisher's
// need not store again (that export, seconds old, is younger than the
// grace period that keeps what it names).
func (p *Publisher) latestStored(ctx context.Context) (map[string]map[string]bool, error) {
	_, b, err := p.Store.ExportManifest(ctx, 0, true)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, f := range m.Files {
		set := map[string]bool{}
		for _, h := range f.Parts {
			set[h] = true
		}
		if err := treeNodes(ctx, p.Store, f.Root, f.Depth, set); err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(f.Name, "."+JSONL)] = set
	}
	return out, nil
}

// building is one export being made.
type building struct {
	p      *Publisher
	ctx    context.Context
	st     *PublishStats
	prev   *made                      // what it is made from (nil: every table is read)
	stored map[string]map[string]bool // without prev: the latest export's parts and nodes, by file
	now    *made
}

// had is the parts and nodes of the previous export's file name.
func (b *building) had(name string) map[string]bool {
	if b.prev != nil {
		if f := b.prev.files[name]; f != nil {
			return f.tree.hashes()
		}
		return nil
	}
	return b.stored[name]
}

// put stores a part or a node unless had holds it.
func (b *building) put(had map[string]bool) func(hash string, data []byte) error {
	return func(hash string, data []byte) error {
		if had[hash] {
			return nil
		}
		if err := b.p.Store.SaveExportPart(b.ctx, hash, data); err != nil {
			return err
		}
		b.st.NewParts++
		b.st.NewBytes += int64(len(data))
		return nil
	}
}

// small stores a file of a few lines made anew by every export.
func (b *building) small(m *Manifest, name string, data []byte) error {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if err := b.put(nil)(h, data); err != nil {
		return err
	}
	b.st.Parts++
	m.Files = append(m.Files, ManifestFile{IndexEntry: IndexEntry{Name: name, Size: int64(len(data)), SHA256: h}, Root: h})
	return nil
}

// table makes the file of a table read at the data versions key: the
// previous export's when they are its, else the table read whole.
func (b *building) table(rd state, name, key string) (*madeFile, error) {
	var prev *partTree
	if b.prev != nil {
		if f := b.prev.files[name]; f != nil && f.key == key {
			b.now.files[name] = f
			b.st.Parts += len(f.tree.levels[0])
			return f, nil
		} else if f != nil {
			prev = f.tree
		}
	}
	b.st.Read++
	f := &madeFile{key: key}
	had := b.had(name)
	fw := newFileWriter(bound{cut: true, sha: newSHA()}, b.put(had))
	if _, err := stream(b.ctx, fw, rd, name, JSONL, scope{}); err != nil {
		return nil, err
	}
	keep := 0
	if prev != nil {
		keep = commonPrefix(fw.parts, prev.levels[0])
	}
	return f, b.finish(name, f, fw, prev, keep, had)
}

// log makes the file of the log's first size entries: from where the
// previous export's ended or, when a round whose entries it wrote sealed
// has been triggered since, from the part holding the first of them; and
// from the last part cut by content when it ends with too many parts cut
// where exports ended.
func (b *building) log(rd state, size uint64) (*madeFile, error) {
	const name = "log_entries"
	f := &madeFile{sealed: map[uint64]uint64{}}
	from, keep := bound{cut: true, sha: newSHA()}, 0
	var prev *madeFile
	if b.prev != nil {
		prev = b.prev.files[name]
	}
	if prev != nil {
		first := prev.end.line // the first entry to write again
		for round, at := range prev.sealed {
			if at >= first {
				continue
			}
			open, err := triggeredIn(b.ctx, rd.st, round)
			if err != nil {
				return nil, err
			}
			if open {
				first = at
			}
		}
		if first == prev.end.line && trailing(prev.bounds) < maxTrailing {
			from, keep = prev.end, len(prev.bounds)
		} else {
			keep = len(prev.bounds) - 1
			for keep > 0 && (prev.bounds[keep].line > first || !prev.bounds[keep].cut) {
				keep--
			}
			from = prev.bounds[keep]
		}
		for round, at := range prev.sealed {
			if at < from.line {
				f.sealed[round] = at
			}
		}
	}
	b.st.Read++
	// The parts after the ones kept are new lines: stored, unless a
	// previous export of another publisher (a restart) has them.
	var had map[string]bool
	if prev == nil {
		had = b.stored[name]
	}
	fw := newFileWriter(from, b.put(had))
	var prevTree *partTree
	if prev != nil {
		// Appending to prev's lists leaves them as they were (the next
		// export starts from prev again if this one fails), unless some of
		// their entries are written again.
		fw.parts, fw.bounds, prevTree = prev.tree.levels[0][:keep], prev.bounds[:keep], prev.tree
		if keep < len(prev.bounds) {
			fw.parts, fw.bounds = slices.Clone(fw.parts), slices.Clone(fw.bounds)
		}
	}
	sc := scope{limitLog: true, logSize: size, logFrom: from.line, sealed: func(round, index uint64) {
		if _, ok := f.sealed[round]; !ok {
			f.sealed[round] = index
		}
	}}
	if _, err := stream(b.ctx, fw, rd, name, JSONL, sc); err != nil {
		return nil, err
	}
	return f, b.finish(name, f, fw, prevTree, keep, had)
}

// trailing counts the parts after the last one cut by content.
func trailing(bs []bound) int {
	n := 0
	for i := len(bs) - 1; i > 0 && !bs[i].cut; i-- {
		n++
	}
	return n
}

// triggeredIn reports whether round id is triggered in st.
func triggeredIn(ctx context.Context, st arena.ForecastStore, id uint64) (bool, error) {
	r, err := st.Round(ctx, id)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return false, nil
	}
	return err == nil && !r.TriggeredAt.IsZero(), err
}

// finish ends fw's file as f and stores the nodes of its tree that had
// lacks, those over its first keep parts kept from prev's.
func (b *building) finish(name string, f *madeFile, fw *fileWriter, prev *partTree, keep int, had map[string]bool) error {
	if err := fw.flush(false); err != nil {
		return err
	}
	f.bounds, f.end = fw.bounds, fw.at()
	var err error
	if f.tree, err = buildTree(prev, fw.parts, keep, b.put(had)); err != nil {
		return err
	}
	f.entry = IndexEntry{Name: name + "." + JSONL, Size: f.end.size, SHA256: hex.EncodeToString(fw.h.Sum(nil))}
	b.now.files[name] = f
	b.st.Parts += len(fw.parts)
	return nil
}

func newSHA() []byte {
	b, _ := sha256.New().(encoding.BinaryMarshaler).MarshalBinary()
	return b
}

// fileWriter cuts what is written to it into parts after lines chosen by
// their content, stores each (put), and keeps the file's SHA-256 and the
// bound where each part starts.
type fileWriter struct {
	put    func(hash string, data []byte) error
	h      hash.Hash
	size   int64
	lines  uint64
	buf    []byte // the part being filled
	line   int    // where its last, unfinished line starts
	start  bound  // where it starts
	parts  []string
	bounds []bound
}

// newFileWriter continues a file at from.
func newFileWriter(from bound, put func(string, []byte) error) *fileWriter {
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(from.sha); err != nil {
		panic(err) // a state this package marshaled
	}
	return &fileWriter{put: put, h: h, size: from.size, lines: from.line, start: from}
}

// at is the bound after what was written.
func (w *fileWriter) at() bound {
	sha, _ := w.h.(encoding.BinaryMarshaler).MarshalBinary()
	return bound{line: w.lines, size: w.size, sha: sha}
}

func (w *fileWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.add(b)
			break
		}
		w.add(b[:i+1])
		b = b[i+1:]
		w.lines++
		h := fnv.New32a()
		h.Write(w.buf[w.line:])
		w.line = len(w.buf)
		if len(w.buf) >= maxPart || len(w.buf) >= minPart && h.Sum32()%cutEvery == 0 {
			if err := w.flush(true); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// add appends b to the part and the file's digest.
func (w *fileWriter) add(b []byte) {
	w.buf = append(w.buf, b...)
	w.h.Write(b)
	w.size += int64(len(b))
}

// flush ends the part being filled, if it holds anything; cut says the
// next one starts at a cut by content.
func (w *fileWriter) flush(cut bool) error {
	if len(w.buf) == 0 {
		return nil
	}
	sum := sha256.Sum256(w.buf)
	h := hex.EncodeToString(sum[:])
	if err := w.put(h, w.buf); err != nil {
		return err
	}
	w.parts, w.bounds = append(w.parts, h), append(w.bounds, w.start)
	w.buf, w.line = w.buf[:0], 0
	w.start = w.at()
	w.start.cut = cut
	return nil
}

// ParseManifest parses a stored manifest.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("export: manifest: %w", err)
	}
	return &m, nil
}

// StoreHandler serves the exports published in store, read-only, under
// its mount point (strip the prefix with http.StripPrefix): GET
// /latest/index.json and /<size>/index.json, the index of the latest
// export and of the export of the checkpoint of size entries, and GET
// /latest/<name> and /<size>/<name> for each file the index lists. Every
// answer names the size of the export it comes from in the header
// X-Export-Size: a client that read the latest index fetches the files
// from /<size>/, which never change, so a newer export published meanwhile
// cannot mix into its download (Fetch does). Errors are plain text: 404
// before the first export.
func StoreHandler(store arena.ExportStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		which, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !ok || strings.Contains(name, "/") {
			http.Error(w, "no such export file: want /exports/latest/<file> or /exports/<size>/<file>", http.StatusNotFound)
			return
		}
		m, ok := exportManifest(w, r, store, which)
		if !ok {
			return
		}
		if name == IndexFile {
			serveIndex(w, r, m)
			return
		}
		serveExportFile(w, r, store, m, name)
	})
}

// exportManifest reads the manifest of the export which names (latest,
// or a checkpoint's tree size) and sets the headers of every answer from
// that export; false when it answered with an error.
func exportManifest(w http.ResponseWriter, r *http.Request, store arena.ExportStore, which string) (*Manifest, bool) {
	h := w.Header()
	var (
		size   uint64
		latest = which == "latest"
		err    error
	)
	if !latest {
		if size, err = strconv.ParseUint(which, 10, 64); err != nil || which != strconv.FormatUint(size, 10) {
			http.Error(w, "no such export: want latest or a checkpoint's tree size", http.StatusNotFound)
			return nil, false
		}
	}
	got, b, err := store.ExportManifest(r.Context(), size, latest)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		http.Error(w, "no export published for that checkpoint", http.StatusNotFound)
		return nil, false
	}
	var m *Manifest
	if err == nil {
		m, err = ParseManifest(b)
	}
	if err != nil {
		http.Error(w, "the export is unreadable", http.StatusInternalServerError)
		return nil, false
	}
	h.Set("X-Export-Size", strconv.FormatUint(got, 10))
	if latest {
		h.Set("Cache-Control", "no-cache") // a newer export replaces it
	} else {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	return m, true
}

// serveIndex answers with the export's index.
func serveIndex(w http.ResponseWriter, r *http.Request, m *Manifest) {
	h := w.Header()
	b, err := json.MarshalIndent(m.Index(), "", "  ")
	if err != nil {
		http.Error(w, "the export is unreadable", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	if r.Method == http.MethodGet {
		w.Write(append(b, '\n'))
	}
}

// serveExportFile answers with the export's file name, from its parts.
func serveExportFile(w http.ResponseWriter, r *http.Request, store arena.ExportStore, m *Manifest, name string) {
	h := w.Header()
	var f *ManifestFile
	for i := range m.Files {
		if m.Files[i].Name == name {
			f = &m.Files[i]
		}
	}
	if f == nil {
		http.Error(w, "no such file in the export", http.StatusNotFound)
		return
	}
	etag := `"` + f.SHA256 + `"`
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// The parts' list and the first part are read before the status
	// goes out, so that a store that fails at once gets a 500, not a
	// short file.
	parts, err := f.parts(r.Context(), store)
	var first []byte
	if err == nil && len(parts) > 0 {
		first, err = store.ExportPart(r.Context(), parts[0])
	}
	if err != nil {
		http.Error(w, "the export's file is unreadable", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", contentType(f.Name))
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(first)
	for _, ph := range parts[min(1, len(parts)):] {
		b, err := store.ExportPart(r.Context(), ph)
		if err != nil {
			// Part of the body is out: abort, so that the client sees
			// a broken transfer, never a short file.
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}

// Mirror writes the published export whose manifest is b into dir, which
// must not exist yet: every file from its parts, each checked against its
// size and SHA-256, and index.json last.
func Mirror(ctx context.Context, store arena.ExportStore, b []byte, dir string) error {
	m, err := ParseManifest(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var files []IndexEntry
	for _, f := range m.Files {
		parts, err := f.parts(ctx, store)
		if err != nil {
			return err
		}
		e, err := dirSink(dir)(f.Name, func(w io.Writer) error {
			for _, h := range parts {
				b, err := store.ExportPart(ctx, h)
				if err != nil {
					return err
				}
				if _, err := w.Write(b); err != nil {
					return fmt.Errorf("export: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if e != f.IndexEntry {
			return fmt.Errorf("export: %s: its parts make %d bytes with SHA-256 %s, not the %d bytes with SHA-256 %s its manifest lists", f.Name, e.Size, e.SHA256, f.Size, f.SHA256)
		}
		files = append(files, e)
	}
	return writeIndex(dir, files)
}
