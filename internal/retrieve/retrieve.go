// Package retrieve implements arena.Retriever: the question's own text
// ("question"), a directory of prepared packets ("dir:PATH"), and the Exa
// web-search API ("exa"), plus a durable cache keyed by provider and
// question id so reruns see the same evidence and can run offline.
package retrieve

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
)

// Question is the default retriever: the packet holds only the question and
// its criteria, with no search.
type Question struct {
	Now func() time.Time
}

func (r Question) Retrieve(_ context.Context, q arena.EvidenceQuery) (arena.EvidencePacket, error) {
	now := arena.Clock(r.Now)
	return arena.EvidencePacket{
		Question:    q.Question,
		Criteria:    q.Criteria,
		RetrievedAt: now().UTC(),
		Sources:     []arena.EvidenceSource{},
	}, nil
}

// Dir reads one JSON packet per question id from Dir/<id>.json (the id
// path-escaped, so "a/b" is a%2Fb.json). A missing file is an error: the
// caller asked for prepared evidence and none exists. The date filter is
// applied again here, and an empty question or criteria is filled from the
// query.
type Dir struct {
	Dir string
}

// FileName returns the file name a packet for id is stored under.
func FileName(id string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", fmt.Errorf("retrieve: question id %q cannot name a file", id)
	}
	return url.PathEscape(id) + ".json", nil
}

// maxPacketBytes bounds a packet file, as Exa's answers are bounded.
const maxPacketBytes = 16 << 20

// readPacket reads a packet file, refusing one larger than maxPacketBytes
// or not a regular file.
func readPacket(path string) ([]byte, error) {
	return safefile.ReadFile(path, maxPacketBytes)
}

func (r Dir) Retrieve(_ context.Context, q arena.EvidenceQuery) (arena.EvidencePacket, error) {
	name, err := FileName(q.QuestionID)
	if err != nil {
		return arena.EvidencePacket{}, err
	}
	p := filepath.Join(r.Dir, name)
	b, err := readPacket(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return arena.EvidencePacket{}, fmt.Errorf("retrieve: no evidence packet for question %s (%s)", q.QuestionID, p)
		}
		return arena.EvidencePacket{}, fmt.Errorf("retrieve: load packet %s: %w", q.QuestionID, err)
	}
	pk, err := ParsePacket(b)
	if err != nil {
		return arena.EvidencePacket{}, fmt.Errorf("retrieve: packet %s: %w", p, err)
	}
	if pk.Question == "" {
		pk.Question = q.Question
	}
	if pk.Criteria == "" {
		pk.Criteria = q.Criteria
	}
	pk.Sources = Filter(pk.Sources, q.Cutoff)
	return pk, nil
}

// Filter drops the sources published after cutoff plus one day, keeping
// order; it never returns nil.
func Filter(src []arena.EvidenceSource, cutoff time.Time) []arena.EvidenceSource {
	out := make([]arena.EvidenceSource, 0, len(src))
	for _, s := range src {
		if arena.SourceAllowed(s.Published, cutoff) {
			out = append(out, s)
		}
	}
	return out
}

// Options configure New.
type Options struct {
	// ExaBaseURL overrides the Exa endpoint (tests, proxies).
	ExaBaseURL string
	// ExaKey is the Exa API key (configured as ARENA_EXA_API_KEY or
	// EXA_API_KEY); without it "exa" retrieves nothing.
	ExaKey string
	Now    func() time.Time
}

// New builds a retriever from its command-line name: "question", "dir:PATH",
// or "exa" (alias "search"). It returns the provider name used for caching.
func New(spec string, o Options) (arena.Retriever, string, error) {
	switch {
	case spec == "" || spec == "question":
		return Question{Now: o.Now}, "question", nil
	case strings.HasPrefix(spec, "dir:"):
		d := strings.TrimPrefix(spec, "dir:")
		if d == "" {
			return nil, "", fmt.Errorf("retrieve: dir: needs a path")
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, "", fmt.Errorf("retrieve: evidence directory %q does not exist", d)
		}
		return Dir{Dir: d}, "dir", nil
	case spec == "exa" || spec == "search":
		return &Exa{BaseURL: o.ExaBaseURL, Key: o.ExaKey, Now: o.Now}, "exa", nil
	default:
		return nil, "", fmt.Errorf("retrieve: unknown evidence provider %q (want question, dir:PATH or exa)", spec)
	}
}
