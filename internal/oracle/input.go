package oracle

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
)

// EvalQuestion is a question with its known answer.
type EvalQuestion struct {
	Question
	Truth arena.OracleDecision // YES or NO
}

// csvColumns are the KalshiBench columns, in any order; others are ignored.
var csvColumns = []string{"id", "question", "description", "category", "close_time", "ground_truth", "series_ticker"}

// Bounds of a questions file, far above real ones (KalshiBench's 300
// questions take 100 KB), so an endless input fails soon and clearly.
const (
	MaxQuestionsBytes = 64 << 20
	MaxQuestionsLine  = 1 << 20
)

// ReadQuestionsCSV reads KalshiBench-style questions: a header naming at
// least id, question, description, category, close_time, ground_truth and
// series_ticker, then one question a row. ground_truth is yes or no in any
// case; close_time is RFC 3339 or YYYY-MM-DD (empty: no date filter).
// Errors name the line; duplicate ids are errors. An input larger than
// MaxQuestionsBytes, or with a line longer than MaxQuestionsLine, is
// refused as soon as the read gets there.
func ReadQuestionsCSV(r io.Reader) ([]EvalQuestion, error) {
	return readQuestionsCSV(r, MaxQuestionsBytes)
}

// readQuestionsCSV is ReadQuestionsCSV with a bound of maxBytes in all,
// which tests lower: reaching the real bound takes seconds.
func readQuestionsCSV(r io.Reader, maxBytes int64) ([]EvalQuestion, error) {
	cr := csv.NewReader(newBoundedReader(r, maxBytes))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("questions: empty file (want a header %s)", strings.Join(csvColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("questions: line 1: header lacks column %q (want %s)", c, strings.Join(csvColumns, ","))
		}
	}
	var out []EvalQuestion
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("questions: %w", err)
		}
		// FieldPos panics after a failed Read, so it comes after the check.
		line, _ := cr.FieldPos(0)
		get := func(c string) string {
			i := col[c]
			if i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		if len(rec) < len(head) {
			return nil, fmt.Errorf("questions: line %d: %d fields, header has %d", line, len(rec), len(head))
		}
		id := get("id")
		if id == "" {
			return nil, fmt.Errorf("questions: line %d: empty id", line)
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("questions: line %d: duplicate id %q (first on line %d)", line, id, prev)
		}
		seen[id] = line
		q := EvalQuestion{Question: Question{ID: id, Text: get("question"), Criteria: get("description"), Category: get("category"), Series: get("series_ticker")}}
		if q.Text == "" {
			return nil, fmt.Errorf("questions: line %d: empty question", line)
		}
		switch strings.ToLower(get("ground_truth")) {
		case "yes":
			q.Truth = arena.OracleYes
		case "no":
			q.Truth = arena.OracleNo
		default:
			return nil, fmt.Errorf("questions: line %d: ground_truth %q: want yes or no", line, get("ground_truth"))
		}
		if ct := get("close_time"); ct != "" {
			t, ok := parseTime(ct)
			if !ok {
				return nil, fmt.Errorf("questions: line %d: close_time %q: want RFC 3339 or YYYY-MM-DD", line, ct)
			}
			q.Cutoff = t
		}
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("questions: no rows after the header")
	}
	return out, nil
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// FromMarkets turns resolved binary market questions (Yes or No, not VOID;
// dataset questions are left out: their answer is a series value, not an
// event to verify) into
// evaluation questions, ordered by source id: the question, its criteria,
// the category (or the origin when there is none), the event as the series,
// and the resolution time as the cutoff.
func FromMarkets(ms []*arena.Market) []EvalQuestion {
	var out []EvalQuestion
	for _, m := range ms {
		if m.Kind == arena.KindDataset || m.Status != arena.StatusResolved || !m.IsBinary() || (m.Resolution != arena.Yes && m.Resolution != arena.No) || m.Question == "" {
			continue
		}
		q := EvalQuestion{Question: QuestionOf(m), Truth: arena.OracleNo}
		if m.Resolution == arena.Yes {
			q.Truth = arena.OracleYes
		}
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b EvalQuestion) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// QuestionOf describes a market for the oracle. The id is the market's
// source:source id, stable across stores.
func QuestionOf(m *arena.Market) Question {
	cat := m.Category
	if cat == "" {
		cat = m.Origin
	}
	cutoff := m.ResolvedAt
	if cutoff.IsZero() {
		cutoff = m.ResolutionDate
	}
	if cutoff.IsZero() {
		cutoff = m.CloseTime
	}
	return Question{ID: m.Source + ":" + m.SourceID, Text: m.Question, Criteria: m.Criteria, Category: cat, Series: m.EventID, Cutoff: cutoff}
}

// boundedReader fails a read that goes past max bytes in all or
// MaxQuestionsLine in one line.
type boundedReader struct{ b safefile.Bounded }

func newBoundedReader(r io.Reader, max int64) *boundedReader {
	return &boundedReader{safefile.Bounded{R: r, Max: max, MaxLine: MaxQuestionsLine}}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.b.Read(p)
	if le := (*safefile.LimitError)(nil); errors.As(err, &le) {
		if le.Line > 0 {
			return n, arena.Errorf(arena.EINVALID, "line %d is longer than %d MiB, the limit of a line", le.Line, le.Max>>20)
		}
		return n, arena.Errorf(arena.EINVALID, "larger than %d MiB, the limit of a questions file", le.Max>>20)
	}
	return n, err
}
