package arena

import (
	"context"
	"time"
)

// EvidencePacket is what a resolver (or a forecaster) is shown about one
// question: the question, its resolution criteria, and the sources a
// retriever found. The same packet is passed verbatim to every model of a
// panel, so their differences come from reasoning, not from information.
type EvidencePacket struct {
	Question    string           `json:"question"`
	Criteria    string           `json:"criteria"`
	RetrievedAt time.Time        `json:"retrieved_at"`
	Query       string           `json:"query"`
	Sources     []EvidenceSource `json:"sources"`
}

// EvidenceSource is one retrieved document. Published is nil when the
// provider did not date it.
type EvidenceSource struct {
	Title      string     `json:"title"`
	URL        string     `json:"url"`
	Published  *time.Time `json:"published"`
	Highlights []string   `json:"highlights"`
}

// EvidenceQuery asks a Retriever for the evidence on one question.
// Cutoff is the resolution date: sources published later than Cutoff plus
// one day are dropped, so the packet holds only what could have been known
// when the question resolved. A zero Cutoff disables the filter.
type EvidenceQuery struct {
	QuestionID string
	Question   string
	Criteria   string
	Cutoff     time.Time
}

// EvidenceSlack is how long after the cutoff a source may be published and
// still count: reports of an outcome usually appear the day after.
const EvidenceSlack = 24 * time.Hour

// Retriever gathers evidence for a question.
type Retriever interface {
	Retrieve(ctx context.Context, q EvidenceQuery) (EvidencePacket, error)
}

// SourceAllowed reports whether a source published at pub may be shown for a
// question with the given cutoff. Undated sources are kept: the provider's
// own date filter has already been applied to them.
func SourceAllowed(pub *time.Time, cutoff time.Time) bool {
	if cutoff.IsZero() || pub == nil {
		return true
	}
	return !pub.After(cutoff.Add(EvidenceSlack))
}
