package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/tlog"
)

// Published exports live in the database (arena.ExportStore), one per
// checkpoint, so that every server of an arena serves each of them. Each
// file is cut into parts after lines chosen by their content alone, and a
// part is stored once under its SHA-256. The tables grow at their end and
// change a few rows near it (a round triggered, a sealed entry opened), so
// the export of the next checkpoint cuts the same parts up to there and
// stores only the parts from the first changed line on.

// Bounds of a part: it ends after the first line, past minPart bytes,
// whose FNV hash is 0 modulo cutEvery, or at the first line past maxPart.
// With rows of a few hundred bytes a part holds about 60 KiB.
const (
	minPart  = 32 << 10
	maxPart  = 1 << 20
	cutEvery = 64
)

// Manifest is what the store keeps of one published export: its files in
// index order, each with the hashes of its parts.
type Manifest struct {
	Size  uint64         `json:"tree_size"` // the checkpoint's
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one file of a published export.
type ManifestFile struct {
	IndexEntry
	Parts []string `json:"parts"`
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
	Bytes    int64 // the export's files, in all
	Parts    int   // its parts
	NewBytes int64 // the bytes of the parts it was the first to store
	NewParts int
	Manifest int  // the bytes of its manifest, stored for it alone
	Stored   bool // false when another server published this checkpoint's export first
}

// Publisher stores exports in an arena.ExportStore. It remembers the
// parts stored, so that a part shared with an earlier export is neither
// sent nor stored again; one Publisher serves one process.
type Publisher struct {
	Store arena.ExportStore

	mu    sync.Mutex
	known map[string]bool // parts stored, loaded on first use
}

// Publish stores the export of src carrying the checkpoint note (which
// must be the log's, signed, of a prefix of the log: see
// Options.Checkpoint) as the export of the checkpoint's size, in JSON
// Lines. An export of that size stored already (by another server) is
// kept. Parts go in before the manifest, so that a manifest stored names
// parts stored.
func (p *Publisher) Publish(ctx context.Context, src Source, note []byte) (PublishStats, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var st PublishStats
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(note)))
	if err != nil {
		return st, arena.Errorf(arena.EINVALID, "export: checkpoint: %w", err)
	}
	if _, _, err := p.Store.ExportManifest(ctx, c.Size, false); err == nil {
		return st, nil
	} else if arena.ErrorKind(err) != arena.ENOTFOUND {
		return st, err
	}
	if p.known == nil {
		hs, err := p.Store.ExportPartHashes(ctx)
		if err != nil {
			return st, err
		}
		p.known = make(map[string]bool, len(hs))
		for _, h := range hs {
			p.known[h] = true
		}
	}
	m := Manifest{Size: c.Size}
	parts := map[string][]string{}
	sink := func(name string, write func(io.Writer) error) (IndexEntry, error) {
		cw := &partWriter{ctx: ctx, p: p, st: &st}
		hw := newHashWriter(cw)
		if err := write(hw); err != nil {
			return IndexEntry{}, err
		}
		if err := cw.flush(); err != nil {
			return IndexEntry{}, err
		}
		parts[name] = cw.hashes
		return hw.entry(name), nil
	}
	_, files, err := write(ctx, src, Options{Format: JSONL, Checkpoint: note}, sink)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		m.Files = append(m.Files, ManifestFile{IndexEntry: f, Parts: parts[f.Name]})
		st.Bytes += f.Size
	}
	b, err := json.Marshal(m)
	if err != nil {
		return st, err
	}
	st.Manifest = len(b)
	if st.Stored, err = p.Store.SaveExportManifest(ctx, c.Size, b); err != nil {
		return st, err
	}
	return st, nil
}

// partWriter cuts what is written to it into parts and stores each part
// the store lacks.
type partWriter struct {
	ctx    context.Context
	p      *Publisher
	st     *PublishStats
	buf    []byte // the part being filled
	line   int    // where its last, unfinished line starts
	hashes []string
}

func (w *partWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.buf = append(w.buf, b...)
			break
		}
		w.buf = append(w.buf, b[:i+1]...)
		b = b[i+1:]
		h := fnv.New32a()
		h.Write(w.buf[w.line:])
		w.line = len(w.buf)
		if len(w.buf) >= maxPart || len(w.buf) >= minPart && h.Sum32()%cutEvery == 0 {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// flush ends the part being filled, if it holds anything.
func (w *partWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	sum := sha256.Sum256(w.buf)
	h := hex.EncodeToString(sum[:])
	w.hashes = append(w.hashes, h)
	w.st.Parts++
	if !w.p.known[h] {
		if err := w.p.Store.SaveExportPart(w.ctx, h, w.buf); err != nil {
			return err
		}
		w.p.known[h] = true
		w.st.NewParts++
		w.st.NewBytes += int64(len(w.buf))
	}
	w.buf, w.line = w.buf[:0], 0
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
		var (
			size   uint64
			latest = which == "latest"
			err    error
		)
		if !latest {
			if size, err = strconv.ParseUint(which, 10, 64); err != nil || which != strconv.FormatUint(size, 10) {
				http.Error(w, "no such export: want latest or a checkpoint's tree size", http.StatusNotFound)
				return
			}
		}
		got, b, err := store.ExportManifest(r.Context(), size, latest)
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			http.Error(w, "no export published for that checkpoint", http.StatusNotFound)
			return
		}
		var m *Manifest
		if err == nil {
			m, err = ParseManifest(b)
		}
		if err != nil {
			http.Error(w, "the export is unreadable", http.StatusInternalServerError)
			return
		}
		h.Set("X-Export-Size", strconv.FormatUint(got, 10))
		if latest {
			h.Set("Cache-Control", "no-cache") // a newer export replaces it
		} else {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		if name == IndexFile {
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
			return
		}
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
		// The first part is read before the status goes out, so that a
		// store that fails at once gets a 500, not a short file.
		var first []byte
		if len(f.Parts) > 0 {
			if first, err = store.ExportPart(r.Context(), f.Parts[0]); err != nil {
				http.Error(w, "the export's file is unreadable", http.StatusInternalServerError)
				return
			}
		}
		h.Set("Content-Type", contentType(f.Name))
		h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(first)
		for _, ph := range f.Parts[min(1, len(f.Parts)):] {
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
	})
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
		e, err := dirSink(dir)(f.Name, func(w io.Writer) error {
			for _, h := range f.Parts {
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
