package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/httpclient"
)

// File names of an export besides its tables.
const (
	// CheckpointFile holds the log's C2SP checkpoint note, with its
	// witness cosignatures (Options.Checkpoint).
	CheckpointFile = "checkpoint"
	// IndexFile lists every other file of the export with its size and
	// SHA-256, for a verifier that fetches the export over HTTP (Fetch):
	// it names what to fetch and catches a file changed in transit. It is
	// not authenticated, and Verify does not read it.
	IndexFile = "index.json"
)

// Index is index.json.
type Index struct {
	Files []IndexEntry `json:"files"`
}

// IndexEntry is one file of an export.
type IndexEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// Bounds of an index: a few dozen files, each at most a table's size.
const (
	maxIndexBytes = 64 << 10
	maxIndexFiles = 64
)

// fileName is what an export's file may be called: a plain name in one
// directory, which a fetched index can never turn into another path.
var fileName = regexp.MustCompile(`^[a-z0-9_]{1,64}(\.[a-z0-9]{1,8})?$`)

// ErrIndex is wrapped by the errors about a malformed index.json.
var ErrIndex = errors.New("malformed index.json")

// ParseIndex parses index.json strictly: known fields only, plain unique
// file names (meta.json among them), sizes within MaxTableBytes and
// SHA-256 digests in lowercase hex.
func ParseIndex(b []byte) (*Index, error) {
	if len(b) > maxIndexBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrIndex, maxIndexBytes)
	}
	if err := arena.CheckUniqueKeys(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIndex, err)
	}
	var idx Index
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIndex, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the object", ErrIndex)
	}
	if len(idx.Files) > maxIndexFiles {
		return nil, fmt.Errorf("%w: %d files, more than %d", ErrIndex, len(idx.Files), maxIndexFiles)
	}
	seen := map[string]bool{}
	for _, f := range idx.Files {
		switch {
		case !fileName.MatchString(f.Name) || f.Name == IndexFile:
			return nil, fmt.Errorf("%w: file name %q", ErrIndex, f.Name)
		case seen[f.Name]:
			return nil, fmt.Errorf("%w: %s listed twice", ErrIndex, f.Name)
		case f.Size < 0 || f.Size > MaxTableBytes:
			return nil, fmt.Errorf("%w: %s has size %d", ErrIndex, f.Name, f.Size)
		case !isHex(f.SHA256, "", sha256.Size):
			return nil, fmt.Errorf("%w: %s's sha256 %q is not 64 lowercase hex digits", ErrIndex, f.Name, f.SHA256)
		}
		seen[f.Name] = true
	}
	if !seen["meta.json"] {
		return nil, fmt.Errorf("%w: no meta.json", ErrIndex)
	}
	return &idx, nil
}

func (idx *Index) entry(name string) (IndexEntry, bool) {
	for _, f := range idx.Files {
		if f.Name == name {
			return f, true
		}
	}
	return IndexEntry{}, false
}

// writeIndex writes index.json listing files.
func writeIndex(dir string, files []IndexEntry) error {
	b, err := json.MarshalIndent(Index{Files: files}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, IndexFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// hashWriter counts and hashes what it passes on to w.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func newHashWriter(w io.Writer) *hashWriter { return &hashWriter{w: w, h: sha256.New()} }

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

func (hw *hashWriter) entry(name string) IndexEntry {
	return IndexEntry{Name: name, Size: hw.n, SHA256: hex.EncodeToString(hw.h.Sum(nil))}
}

// Handler serves an export directory written by Write, read-only, at its
// mount point (strip the prefix with http.StripPrefix): GET /index.json,
// and GET /<name> for each file the index lists, nothing else. Each
// request reads the index again, so the directory may be replaced by a
// newer export meanwhile (a symbolic link renamed over the old one); a
// client that read the old index then finds a file whose digest differs
// and fetches again. Errors are plain text: 404 before the first export.
func Handler(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache") // revalidated: a newer export replaces it
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b, err := readFileBounded(filepath.Join(dir, IndexFile), maxIndexBytes)
		if errors.Is(err, fs.ErrNotExist) {
			http.Error(w, "no export published yet", http.StatusNotFound)
			return
		}
		var idx *Index
		if err == nil {
			idx, err = ParseIndex(b)
		}
		if err != nil {
			http.Error(w, "the export's index is unreadable", http.StatusInternalServerError)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == IndexFile {
			h.Set("Content-Type", "application/json")
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
			return
		}
		e, ok := idx.entry(name)
		if !ok {
			http.Error(w, "no such file in the export", http.StatusNotFound)
			return
		}
		f, err := os.Open(filepath.Join(dir, e.Name))
		if err != nil {
			http.Error(w, "the export's file is unreadable", http.StatusInternalServerError)
			return
		}
		defer f.Close()
		h.Set("Content-Type", contentType(e.Name))
		h.Set("ETag", `"`+e.SHA256+`"`)
		http.ServeContent(w, r, e.Name, time.Time{}, f)
	})
}

func contentType(name string) string {
	switch filepath.Ext(name) {
	case ".json":
		return "application/json"
	case ".csv":
		return "text/csv; charset=utf-8"
	}
	return "text/plain; charset=utf-8" // JSON Lines, the checkpoint note
}

// DefaultMaxDownload is the most an export fetched over HTTP may hold in
// all, unless the caller sets another bound (Fetcher.MaxBytes): checked
// against the sizes index.json lists before anything else is downloaded.
const DefaultMaxDownload = 16 << 30

// Fetcher downloads exports served over HTTP.
type Fetcher struct {
	// HTTP is the client; httpclient's, with its timeouts, when nil.
	HTTP *http.Client
	// MaxBytes bounds the files the index lists, in all
	// (DefaultMaxDownload when zero).
	MaxBytes int64
	// Budget, when set, bounds the download of the files the index lists
	// by the time it returns for their total size: a server that keeps
	// each request's pace (see httpclient) but is slower than the budget
	// fails with an *ErrTooSlow.
	Budget func(total int64) time.Duration
}

// ErrTooSlow is the cause of a download that ran past its Budget.
type ErrTooSlow struct {
	Bytes  int64
	Budget time.Duration
}

func (e *ErrTooSlow) Error() string {
	return fmt.Sprintf("the export's %d bytes took longer than the %s allowed for them", e.Bytes, e.Budget)
}

// Fetch downloads the export served at url (a Handler's mount point, such
// as https://arena.example/exports/latest/) into dir: its index, then
// every file the index lists, each checked against its size and SHA-256
// as it is written. It returns the index.
func Fetch(ctx context.Context, hc *http.Client, url, dir string) (*Index, error) {
	return Fetcher{HTTP: hc}.Fetch(ctx, url, dir)
}

// Fetch downloads the export served at url into dir, as the function
// Fetch does, refusing an index that lists more than f.MaxBytes before
// downloading any file. When the server names the export the index
// belongs to (the header X-Export-Size of StoreHandler), the files are
// fetched from that export's own address, so that a newer export
// published meanwhile cannot mix into the download.
func (f Fetcher) Fetch(ctx context.Context, url, dir string) (*Index, error) {
	hc := f.HTTP
	if hc == nil {
		hc = httpclient.New(httpclient.Default)
	}
	limit := f.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxDownload
	}
	base := strings.TrimSuffix(url, "/") + "/"
	var b bytes.Buffer
	_, hdr, err := fetch(ctx, hc, base+IndexFile, &b, maxIndexBytes+1)
	if err != nil {
		return nil, err
	}
	idx, err := ParseIndex(b.Bytes()) // refuses more than maxIndexBytes
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", base+IndexFile, err)
	}
	var total int64
	for _, e := range idx.Files {
		total += e.Size // each at most MaxTableBytes, at most maxIndexFiles of them: no overflow
	}
	if total > limit {
		return nil, &TooLargeError{fmt.Sprintf("export: %s lists %d bytes of files, more than the %d allowed (raise the bound to fetch it)", base+IndexFile, total, limit)}
	}
	if size := hdr.Get("X-Export-Size"); size != "" && strings.HasSuffix(base, "/latest/") {
		if n, err := strconv.ParseUint(size, 10, 64); err == nil {
			base = strings.TrimSuffix(base, "latest/") + strconv.FormatUint(n, 10) + "/"
		}
	}
	if f.Budget != nil {
		budget := f.Budget(total)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, budget, &ErrTooSlow{Bytes: total, Budget: budget})
		defer cancel()
	}
	for _, e := range idx.Files {
		if err := fetchFile(ctx, hc, base, dir, e); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

func fetchFile(ctx context.Context, hc *http.Client, base, dir string, e IndexEntry) (err error) {
	f, err := os.OpenFile(filepath.Join(dir, e.Name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: %w", cerr)
		}
	}()
	h := sha256.New()
	// One byte more than the index lists is enough to tell it is wrong.
	n, _, err := fetch(ctx, hc, base+e.Name, io.MultiWriter(f, h), e.Size+1)
	if err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != e.Size || sum != e.SHA256 {
		return fmt.Errorf("export: %s: not the %d bytes with SHA-256 %s the index lists (changed in transit, or replaced by a newer export meanwhile: fetch again)",
			base+e.Name, e.Size, e.SHA256)
	}
	return nil
}

// fetch copies at most limit bytes of the body of a GET of url to w and
// returns how many, and the response's headers; a status other than 200
// is an error.
func fetch(ctx context.Context, hc *http.Client, url string, w io.Writer, limit int64) (int64, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("export: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("export: %w", stalled(ctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		if resp.StatusCode == http.StatusNotFound {
			return 0, nil, arena.Errorf(arena.ENOTFOUND, "export: GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(msg))
		}
		return 0, nil, fmt.Errorf("export: GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(msg))
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit))
	if err != nil {
		return n, nil, fmt.Errorf("export: GET %s: %w", url, stalled(ctx, err))
	}
	return n, resp.Header, nil
}

// stalled names the deadline that ended a request, when one did.
func stalled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}
