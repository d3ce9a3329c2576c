package retrieve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/retry"
)

// DefaultExaURL is Exa's API base.
const DefaultExaURL = "https://api.exa.ai"

// Exa searches the web through Exa's /search endpoint and keeps each
// result's title, URL, publication date and highlights. The query is
// "What is the result of this question <question>"; results published after
// the cutoff plus one day are excluded by the API's endPublishedDate and
// again here, since a provider's filter is not something to trust blindly.
type Exa struct {
	BaseURL    string // default DefaultExaURL
	Key        string
	NumResults int // default 10
	HTTP       *http.Client
	// Attempts bounds tries on 429/5xx/connection errors (default 3).
	// Between them the arena's one convention (package retry): the wait
	// the server asks for (Retry-After, Retry-After-Ms), else equal-jitter
	// backoff from Backoff (default 1s) up to 30 s; a requested wait
	// longer than MaxRetryAfter (default 1 min) ends the retries.
	Attempts      int
	Backoff       time.Duration
	MaxRetryAfter time.Duration
	Now           func() time.Time
}

// Exa's retry bounds (see Exa.Attempts).
const (
	exaMaxBackoff    = 30 * time.Second
	exaMaxRetryAfter = time.Minute
)

// QueryText is the search query sent for a question.
func QueryText(question string) string {
	return "What is the result of this question " + question
}

type exaRequest struct {
	Query            string      `json:"query"`
	NumResults       int         `json:"numResults"`
	EndPublishedDate string      `json:"endPublishedDate,omitempty"`
	Contents         exaContents `json:"contents"`
}

type exaContents struct {
	Highlights bool `json:"highlights"`
}

type exaResponse struct {
	Results []struct {
		Title         string   `json:"title"`
		URL           string   `json:"url"`
		PublishedDate *string  `json:"publishedDate"`
		Highlights    []string `json:"highlights"`
	} `json:"results"`
}

// errStatus is a non-2xx answer from the API, with the wait it asked for
// before another attempt (asked false when none).
type errStatus struct {
	code  int
	body  string
	after time.Duration
	asked bool
}

func (e *errStatus) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, e.body)
}

func (c *Exa) Retrieve(ctx context.Context, q arena.EvidenceQuery) (arena.EvidencePacket, error) {
	if c.Key == "" {
		return arena.EvidencePacket{}, errors.New("retrieve: exa: no API key (set ARENA_EXA_API_KEY or EXA_API_KEY)")
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultExaURL
	}
	n := c.NumResults
	if n <= 0 {
		n = 10
	}
	now := arena.Clock(c.Now)
	req := exaRequest{Query: QueryText(q.Question), NumResults: n, Contents: exaContents{Highlights: true}}
	if !q.Cutoff.IsZero() {
		req.EndPublishedDate = q.Cutoff.Add(arena.EvidenceSlack).UTC().Format(time.RFC3339)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return arena.EvidencePacket{}, err
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	backoff := cmp.Or(c.Backoff, time.Second)
	maxAfter := cmp.Or(c.MaxRetryAfter, exaMaxRetryAfter)
	var raw []byte
	for i := 1; ; i++ {
		raw, err = c.post(ctx, strings.TrimRight(base, "/")+"/search", body, now)
		if err == nil {
			break
		}
		var es *errStatus
		isStatus := errors.As(err, &es)
		if ctx.Err() != nil || isStatus && es.code != http.StatusTooManyRequests && es.code < 500 || i >= attempts {
			return arena.EvidencePacket{}, fmt.Errorf("retrieve: exa search for %s: %w", q.QuestionID, err)
		}
		var after time.Duration
		var asked bool
		if isStatus {
			after, asked = es.after, es.asked
		}
		wait, ok := retry.Wait(after, asked, retry.Backoff(i, backoff, exaMaxBackoff, rand.Int64N), maxAfter)
		if !ok {
			return arena.EvidencePacket{}, fmt.Errorf("retrieve: exa search for %s: the server asks to wait %s, longer than %s: %w", q.QuestionID, after, maxAfter, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return arena.EvidencePacket{}, fmt.Errorf("retrieve: exa search for %s: %w", q.QuestionID, ctx.Err())
		case <-t.C:
		}
	}
	src, err := ParseExaResponse(raw)
	if err != nil {
		return arena.EvidencePacket{}, fmt.Errorf("retrieve: exa search for %s: %w", q.QuestionID, err)
	}
	return arena.EvidencePacket{
		Question:    q.Question,
		Criteria:    q.Criteria,
		RetrievedAt: now().UTC(),
		Query:       req.Query,
		Sources:     Filter(src, q.Cutoff),
	}, nil
}

func (c *Exa) post(ctx context.Context, url string, body []byte, now func() time.Time) ([]byte, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("x-api-key", c.Key)
	resp, err := hc.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 300 {
			msg = msg[:300]
		}
		after, asked := retry.After(resp.Header, now())
		return nil, &errStatus{code: resp.StatusCode, body: msg, after: after, asked: asked}
	}
	return b, nil
}

// ParseExaResponse reads the results of an Exa /search answer. Dates are
// RFC 3339 or plain YYYY-MM-DD; an unreadable date leaves the source undated.
func ParseExaResponse(b []byte) ([]arena.EvidenceSource, error) {
	var r exaResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode search response: %w", err)
	}
	out := make([]arena.EvidenceSource, 0, len(r.Results))
	for _, x := range r.Results {
		s := arena.EvidenceSource{Title: x.Title, URL: x.URL, Highlights: x.Highlights}
		if s.Highlights == nil {
			s.Highlights = []string{}
		}
		if x.PublishedDate != nil {
			if t, ok := parseDate(*x.PublishedDate); ok {
				s.Published = &t
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// ParsePacket decodes a stored evidence packet. Unknown fields are errors
// (a misspelt key would otherwise silently drop evidence); sources and
// highlights are never nil afterwards.
func ParsePacket(b []byte) (arena.EvidencePacket, error) {
	var p arena.EvidencePacket
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return arena.EvidencePacket{}, fmt.Errorf("decode packet: %w", err)
	}
	if d.More() {
		return arena.EvidencePacket{}, errors.New("decode packet: trailing data after the packet")
	}
	if p.Sources == nil {
		p.Sources = []arena.EvidenceSource{}
	}
	for i := range p.Sources {
		if p.Sources[i].Highlights == nil {
			p.Sources[i].Highlights = []string{}
		}
	}
	return p, nil
}
