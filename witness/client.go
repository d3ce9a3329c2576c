package witness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
)

// Remote is a witness a log asks for cosignatures.
type Remote struct {
	Name     string        // how errors name it (a policy's witness name)
	URL      string        // its submission prefix: add-checkpoint is under it
	Verifier note.Verifier // its cosignature verifier (NewVerifier)
}

// Client asks witnesses to cosign the log's checkpoints (a
// tlog.Cosigner). It remembers the size each witness last cosigned, so a
// request carries the right old size and proof; after a restart it sends
// 0 and learns the size from the witness's 409 answer.
type Client struct {
	Witnesses []Remote
	HTTP      *http.Client // http.DefaultClient when nil

	mu    sync.Mutex
	sizes map[string]uint64 // witness URL → size it cosigned last
}

var _ tlog.Cosigner = (*Client)(nil)

// maxAnswer bounds a witness's answer.
const maxAnswer = 1 << 16

// Cosign implements tlog.Cosigner: it asks every witness whose
// cosignature signed lacks, all at once, and appends the cosignatures
// they return, each verified with the witness's key. The error names the
// witnesses that did not cosign and why; a witness answering 422 holds a
// checkpoint this one contradicts, which is evidence of a fork.
func (c *Client) Cosign(ctx context.Context, signed []byte, cp tlog.Checkpoint, prove func(oldSize uint64) ([][]byte, error)) ([]byte, error) {
	lines := make([][]byte, len(c.Witnesses))
	errs := make([]error, len(c.Witnesses))
	var wg sync.WaitGroup
	for i, w := range c.Witnesses {
		has, err := hasCosignature(signed, w.Verifier)
		if has || err != nil {
			errs[i] = err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines[i], errs[i] = c.add(ctx, w, signed, cp, prove)
		}()
	}
	wg.Wait()
	out := bytes.Clone(signed)
	for i, l := range lines {
		out = append(out, l...)
		if errs[i] != nil {
			errs[i] = fmt.Errorf("witness %s (%s): %w", c.Witnesses[i].Name, c.Witnesses[i].URL, errs[i])
		}
	}
	return out, errors.Join(errs...)
}

// hasCosignature reports whether a note carries a valid signature by v.
func hasCosignature(msg []byte, v note.Verifier) (bool, error) {
	_, err := note.Open(msg, note.VerifierList(v))
	var unverified *note.UnverifiedNoteError
	if errors.As(err, &unverified) {
		return false, nil
	}
	return err == nil, err
}

func (c *Client) size(url string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sizes[url]
}

func (c *Client) setSize(url string, size uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sizes == nil {
		c.sizes = map[string]uint64{}
	}
	c.sizes[url] = size
}

// add sends one witness the checkpoint and returns its cosignature line.
// A 409 answer names the size the witness holds: the request is sent
// again from there, twice at most (another server of the log may be
// advancing the witness meanwhile).
func (c *Client) add(ctx context.Context, w Remote, signed []byte, cp tlog.Checkpoint, prove func(uint64) ([][]byte, error)) ([]byte, error) {
	old := c.size(w.URL)
	for range 3 {
		if old > cp.Size {
			return nil, fmt.Errorf("it cosigned size %d, more than this checkpoint's %d: the log lost entries, or another log uses its origin", old, cp.Size)
		}
		proof, err := prove(old)
		if err != nil {
			return nil, fmt.Errorf("consistency proof from %d: %w", old, err)
		}
		status, ctype, body, err := c.post(ctx, w.URL, FormatAddCheckpoint(old, proof, signed))
		if err != nil {
			return nil, err
		}
		switch status {
		case http.StatusOK:
			line, err := cosignature(signed, body, w.Verifier)
			if err != nil {
				return nil, err
			}
			c.setSize(w.URL, cp.Size)
			return line, nil
		case http.StatusConflict:
			mt, _, _ := mime.ParseMediaType(ctype)
			size, err := strconv.ParseUint(strings.TrimSuffix(string(body), "\n"), 10, 64)
			if mt != "text/x.tlog.size" || err != nil {
				return nil, fmt.Errorf("409 without its size: %q", excerpt(body))
			}
			old = size
			c.setSize(w.URL, size)
		case http.StatusUnprocessableEntity:
			return nil, fmt.Errorf("refused as inconsistent with the checkpoint it cosigned last (a fork?): %s", excerpt(body))
		default:
			return nil, fmt.Errorf("%d %s: %s", status, http.StatusText(status), excerpt(body))
		}
	}
	return nil, errors.New("its size kept changing (409 three times)")
}

func (c *Client) post(ctx context.Context, prefix string, body []byte) (status int, ctype string, answer []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(prefix, "/")+"/add-checkpoint", bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, "", nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), answer, nil
}

// cosignature checks a witness's answer, note signature lines, against
// the checkpoint and returns the line of its cosignature.
func cosignature(signed, answer []byte, v note.Verifier) ([]byte, error) {
	if len(answer) == 0 || answer[len(answer)-1] != '\n' || !bytes.HasPrefix(answer, []byte("— ")) {
		return nil, fmt.Errorf("answer is not signature lines: %q", excerpt(answer))
	}
	n, err := note.Open(append(bytes.Clone(signed), answer...), note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("no valid cosignature in the answer: %w", err)
	}
	s := n.Sigs[0]
	return fmt.Appendf(nil, "— %s %s\n", s.Name, s.Base64), nil
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Seen fetches from every witness the latest checkpoint it cosigned for
// the log of origin (GET <prefix>/<hex SHA-256 of origin>/checkpoint, as
// this package's Witness serves it), all at once. A witness that has
// cosigned none, or does not serve its view, gives a nil note; errs
// holds the witnesses that could not be asked.
func (c *Client) Seen(ctx context.Context, origin string) (notes [][]byte, errs error) {
	h := sha256.Sum256([]byte(origin))
	out := make([][]byte, len(c.Witnesses))
	fails := make([]error, len(c.Witnesses))
	var wg sync.WaitGroup
	for i, w := range c.Witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], fails[i] = c.get(ctx, strings.TrimSuffix(w.URL, "/")+"/"+hex.EncodeToString(h[:])+"/checkpoint")
			if fails[i] != nil {
				fails[i] = fmt.Errorf("witness %s (%s): %w", w.Name, w.URL, fails[i])
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(fails...)
}

func (c *Client) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read the answer: %w", err)
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%d %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), excerpt(body))
	}
	return body, nil
}
