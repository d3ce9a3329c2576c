package forecastbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// ForecastBench sources by kind. Market sources are priced by a crowd or a
// market; dataset sources are questions about a time series' future value.
var (
	MarketSources  = []string{"infer", "manifold", "metaculus", "polymarket"}
	DatasetSources = []string{"acled", "dbnomics", "fred", "wikipedia", "yfinance"}
)

// KindOf returns arena.KindMarket or arena.KindDataset for a ForecastBench
// source, or false for a source this importer does not know.
func KindOf(source string) (string, bool) {
	for _, s := range MarketSources {
		if s == source {
			return arena.KindMarket, true
		}
	}
	for _, s := range DatasetSources {
		if s == source {
			return arena.KindDataset, true
		}
	}
	return "", false
}

// QuestionSet is one published question set, e.g. 2025-10-26-llm.json.
type QuestionSet struct {
	ForecastDueDate time.Time // midnight UTC
	Name            string    // the "question_set" field, e.g. "2025-10-26-llm.json"
	Questions       []Question
}

// Question is one question of a question set. Times are UTC; zero when the
// file says "N/A" (dataset questions have no market open/close).
type Question struct {
	ID                       string
	Source                   string
	Question                 string // dataset questions hold {forecast_due_date} and {resolution_date} placeholders
	ResolutionCriteria       string
	Background               string
	MarketResolutionCriteria string // "" when N/A
	URL                      string
	MarketOpen               time.Time
	MarketClose              time.Time
	FreezeTime               time.Time
	// FreezeValue is the raw freeze_datetime_value: for market sources the
	// market probability, for dataset sources the series value (a number, or
	// text such as "No" or "200m freestyle"). "" when N/A.
	FreezeValue            string
	FreezeValueExplanation string
	SourceIntro            string
	// ResolutionDates are the dates a dataset question resolves on (nil for
	// market questions, which resolve when their market does).
	ResolutionDates []time.Time
}

// Kind returns the question's source kind (the source was validated).
func (q *Question) Kind() string { k, _ := KindOf(q.Source); return k }

// FreezeProbability returns the freeze value of a market-source question as
// a probability; ok is false when the value is missing ("N/A", "", "nan").
// The parser has already rejected values that are not a probability.
func (q *Question) FreezeProbability() (p float64, ok bool) {
	if q.Kind() != arena.KindMarket {
		return 0, false
	}
	p, ok, _ = parseProbability(q.FreezeValue)
	return p, ok
}

// ResolutionSet is one published resolution set, e.g.
// 2025-10-26_resolution_set.json.
type ResolutionSet struct {
	ForecastDueDate time.Time
	QuestionSet     string // the question set it resolves, e.g. "2025-10-26-llm.json"
	Resolutions     []Resolution
}

// Resolution is one row of a resolution set. A combination question (a
// list-valued id) has Combination set and ID empty.
type Resolution struct {
	ID             string
	Combination    []string
	Source         string
	ResolutionDate time.Time
	ResolvedTo     float64
	Resolved       bool
}

// IsCombination reports whether the row is a combination question.
func (r *Resolution) IsCombination() bool { return r.Combination != nil }

// ParseError locates a problem in an input file.
type ParseError struct {
	File      string // set by the file-level readers
	Line, Col int    // 1-based; 0 when unknown
	Where     string // e.g. "questions[12].freeze_datetime"
	Msg       string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ScanQuestionSet streams a question set, calling fn for each question in
// file order; it returns the set's header (Questions left nil). fn's error
// stops the scan and is returned as is.
func ScanQuestionSet(r io.Reader, fn func(i int, q Question) error) (*QuestionSet, error) {
	set := &QuestionSet{}
	p := newParser(r)
	err := p.scanSet(setLayout{items: "questions", nameKey: "question_set", other: "resolutions", otherKind: "resolution set"},
		func(due time.Time, name string) { set.ForecastDueDate, set.Name = due, name },
		func(i int, raw json.RawMessage, at int64) error {
			q, err := p.question(i, raw, at)
			if err != nil {
				return err
			}
			return fn(i, q)
		})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// ReadQuestionSet parses a whole question set.
func ReadQuestionSet(r io.Reader) (*QuestionSet, error) {
	var qs []Question
	set, err := ScanQuestionSet(r, func(_ int, q Question) error { qs = append(qs, q); return nil })
	if err != nil {
		return nil, err
	}
	set.Questions = qs
	return set, nil
}

// ScanResolutionSet streams a resolution set, calling fn for each row
// (combination rows included, marked by IsCombination).
func ScanResolutionSet(r io.Reader, fn func(i int, res Resolution) error) (*ResolutionSet, error) {
	set := &ResolutionSet{}
	p := newParser(r)
	err := p.scanSet(setLayout{items: "resolutions", nameKey: "question_set", other: "questions", otherKind: "question set"},
		func(due time.Time, name string) { set.ForecastDueDate, set.QuestionSet = due, name },
		func(i int, raw json.RawMessage, at int64) error {
			res, err := p.resolution(i, raw, at)
			if err != nil {
				return err
			}
			return fn(i, res)
		})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// setLayout names the keys of a question or resolution set file.
type setLayout struct {
	items     string // the array of questions or resolutions
	nameKey   string // the header field naming the question set
	other     string // the other kind's array key, seen when files are swapped
	otherKind kindHint
}

// scanSet walks a set file: header fields go to header (the due date is
// required), each array element to elem; unknown header fields are ignored.
func (p *parser) scanSet(l setLayout, header func(due time.Time, name string), elem func(i int, raw json.RawMessage, at int64) error) error {
	var due time.Time
	var name string
	var haveDue bool
	var looksLike kindHint
	err := p.object(l.items, func(key string, raw json.RawMessage, at int64) error {
		var err error
		switch key {
		case "forecast_due_date":
			due, err = p.date(raw, at, "forecast_due_date")
			haveDue = true
		case l.nameKey:
			name, err = p.str(raw, at, l.nameKey)
		case l.other:
			looksLike = l.otherKind
		}
		return err
	}, elem)
	if err != nil {
		return err
	}
	if !haveDue {
		return &ParseError{Msg: "missing forecast_due_date"}
	}
	if !p.sawArray {
		return &ParseError{Msg: "missing " + l.items + looksLike.hint()}
	}
	header(due, name)
	return nil
}

// ReadResolutionSet parses a whole resolution set.
func ReadResolutionSet(r io.Reader) (*ResolutionSet, error) {
	var rows []Resolution
	set, err := ScanResolutionSet(r, func(_ int, res Resolution) error { rows = append(rows, res); return nil })
	if err != nil {
		return nil, err
	}
	set.Resolutions = rows
	return set, nil
}

// kindHint names the other kind of file when a file was given as the
// wrong kind, the commonest mistake on the command line.
type kindHint string

func (k kindHint) hint() string {
	if k == "" {
		return ""
	}
	return " (this looks like a " + string(k) + ")"
}

// parser walks one JSON document and turns byte offsets into line:col.
type parser struct {
	src      *lineReader
	dec      *json.Decoder
	sawArray bool
}

func newParser(r io.Reader) *parser {
	lr := &lineReader{r: r}
	return &parser{src: lr, dec: json.NewDecoder(lr)}
}

func (p *parser) errAt(off int64, where, format string, args ...any) *ParseError {
	line, col := p.src.position(off)
	return &ParseError{Line: line, Col: col, Where: where, Msg: fmt.Sprintf(format, args...)}
}

// jsonErr converts a decoder error into a ParseError; base is the offset of
// the value being unmarshalled (json.Unmarshal reports relative offsets).
func (p *parser) jsonErr(err error, base int64, where string) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return p.errAt(base+se.Offset, where, "invalid JSON: %v", se)
	case errors.As(err, &te):
		f := te.Field
		if f != "" {
			where += "." + f
		}
		return p.errAt(base+te.Offset, where, "want %s, got %s", jsonType(te.Type), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return p.errAt(p.dec.InputOffset(), where, "unexpected end of file")
	}
	return p.errAt(p.dec.InputOffset(), where, "%v", err)
}

// object walks the top-level object: every key but arrayKey goes to header,
// each element of arrayKey's array to elem with its start offset.
func (p *parser) object(arrayKey string, header func(key string, raw json.RawMessage, at int64) error,
	elem func(i int, raw json.RawMessage, at int64) error) error {
	tok, err := p.dec.Token()
	if err != nil {
		return p.jsonErr(err, 0, "")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errAt(p.dec.InputOffset(), "", "want a JSON object at the top level")
	}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return p.jsonErr(err, 0, "")
		}
		key, _ := tok.(string) // object keys are always strings
		if seen[key] {
			return p.errAt(p.dec.InputOffset(), key, "duplicate key")
		}
		seen[key] = true
		if key != arrayKey {
			raw, at, err := p.value(key)
			if err != nil {
				return err
			}
			if err := header(key, raw, at); err != nil {
				return err
			}
			continue
		}
		tok, err = p.dec.Token()
		if err != nil {
			return p.jsonErr(err, 0, key)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return p.errAt(p.dec.InputOffset(), key, "want an array, got %s", describe(tok))
		}
		p.sawArray = true
		for i := 0; p.dec.More(); i++ {
			raw, at, err := p.value(fmt.Sprintf("%s[%d]", key, i))
			if err != nil {
				return err
			}
			if err := elem(i, raw, at); err != nil {
				return err
			}
		}
		if _, err := p.dec.Token(); err != nil { // ']'
			return p.jsonErr(err, 0, key)
		}
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return p.jsonErr(err, 0, "")
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return p.errAt(p.dec.InputOffset(), "", "unexpected data after the top-level object")
	}
	return nil
}

// value decodes the next value and returns it with its start offset.
func (p *parser) value(where string) (json.RawMessage, int64, error) {
	before := p.dec.InputOffset()
	p.src.mark(before)
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// The stream decoder's syntax error offsets are not stream
			// offsets (they omit bytes consumed by Token), so re-scan the
			// value's bytes, still buffered, with json.Unmarshal, whose
			// offsets are exact.
			rest := p.src.since(before)
			k := 0
			for k < len(rest) && (rest[k] == ',' || rest[k] == ':' || isSpace(rest[k])) {
				k++
			}
			var v json.RawMessage
			if err2 := json.Unmarshal(rest[k:], &v); errors.As(err2, &se) {
				return nil, 0, p.errAt(before+int64(k)+se.Offset-1, where, "invalid JSON: %v", se)
			}
		}
		return nil, 0, p.jsonErr(err, 0, where)
	}
	return raw, p.dec.InputOffset() - int64(len(raw)), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonType names the JSON type a Go type is decoded from.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return string(v)
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func (p *parser) str(raw json.RawMessage, at int64, where string) (string, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", p.jsonErr(err, at, where)
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

func (p *parser) date(raw json.RawMessage, at int64, where string) (time.Time, error) {
	s, err := p.str(raw, at, where)
	if err != nil {
		return time.Time{}, err
	}
	t, err := parseDate(s)
	if err != nil {
		return time.Time{}, p.errAt(at, where, "%v", err)
	}
	return t, nil
}

// rawQuestion declares the field types: pointers tell missing/null apart,
// and json.Unmarshal rejects values of the wrong JSON type.
type rawQuestion struct {
	ID                       *string         `json:"id"`
	Source                   *string         `json:"source"`
	Question                 *string         `json:"question"`
	ResolutionCriteria       *string         `json:"resolution_criteria"`
	Background               *string         `json:"background"`
	MarketOpen               *string         `json:"market_info_open_datetime"`
	MarketClose              *string         `json:"market_info_close_datetime"`
	MarketResolutionCriteria *string         `json:"market_info_resolution_criteria"`
	URL                      *string         `json:"url"`
	FreezeTime               *string         `json:"freeze_datetime"`
	FreezeValue              *string         `json:"freeze_datetime_value"`
	FreezeValueExplanation   *string         `json:"freeze_datetime_value_explanation"`
	SourceIntro              *string         `json:"source_intro"`
	ResolutionDates          json.RawMessage `json:"resolution_dates"`
}

// idOf names the element in an error message when its id is readable.
func idOf(raw json.RawMessage) string {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &v) != nil || len(v.ID) == 0 || len(v.ID) > 200 || string(v.ID) == "null" {
		return ""
	}
	var id string
	if json.Unmarshal(v.ID, &id) == nil {
		return " (id " + id + ")"
	}
	return " (id " + string(v.ID) + ")"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (p *parser) question(i int, raw json.RawMessage, at int64) (Question, error) {
	where := fmt.Sprintf("questions[%d]", i)
	if len(raw) == 0 || raw[0] != '{' {
		return Question{}, p.errAt(at, where, "want an object")
	}
	var r rawQuestion
	if err := json.Unmarshal(raw, &r); err != nil {
		return Question{}, p.jsonErr(err, at, where+idOf(raw))
	}
	bad := func(field, format string, args ...any) (Question, error) {
		return Question{}, p.errAt(at, where+"."+field, format, args...)
	}
	q := Question{
		ID:                       deref(r.ID),
		Source:                   deref(r.Source),
		Question:                 deref(r.Question),
		ResolutionCriteria:       deref(r.ResolutionCriteria),
		Background:               deref(r.Background),
		MarketResolutionCriteria: na(deref(r.MarketResolutionCriteria)),
		URL:                      na(deref(r.URL)),
		FreezeValue:              na(deref(r.FreezeValue)),
		FreezeValueExplanation:   deref(r.FreezeValueExplanation),
		SourceIntro:              deref(r.SourceIntro),
	}
	if q.ID == "" {
		return bad("id", "missing")
	}
	where = fmt.Sprintf("questions[%d] (id %s)", i, q.ID)
	kind, ok := KindOf(q.Source)
	if !ok {
		return bad("source", "unknown source %q (want one of %s, %s)", q.Source,
			strings.Join(MarketSources, ", "), strings.Join(DatasetSources, ", "))
	}
	if strings.TrimSpace(q.Question) == "" {
		return bad("question", "missing")
	}
	var err error
	if q.MarketOpen, err = parseTime(deref(r.MarketOpen)); err != nil {
		return bad("market_info_open_datetime", "%v", err)
	}
	if q.MarketClose, err = parseTime(deref(r.MarketClose)); err != nil {
		return bad("market_info_close_datetime", "%v", err)
	}
	if q.FreezeTime, err = parseTime(deref(r.FreezeTime)); err != nil {
		return bad("freeze_datetime", "%v", err)
	}
	if q.FreezeTime.IsZero() {
		// The freeze time is what the contamination guard compares with a
		// model's training cutoff; a question without one is unusable.
		return bad("freeze_datetime", "missing")
	}
	if kind == arena.KindMarket {
		if _, _, err := parseProbability(q.FreezeValue); err != nil {
			return bad("freeze_datetime_value", "%v", err)
		}
	}
	if q.ResolutionDates, err = resolutionDates(r.ResolutionDates, kind); err != nil {
		return bad("resolution_dates", "%v", err)
	}
	return q, nil
}

// na maps ForecastBench's missing-value marker to "".
func na(s string) string {
	if s == "N/A" {
		return ""
	}
	return s
}

// resolutionDates accepts "N/A", null, a missing field or [] for market
// questions, and a non-empty list of distinct dates for dataset questions.
func resolutionDates(raw json.RawMessage, kind string) ([]time.Time, error) {
	raw = bytes.TrimSpace(raw)
	var list []string
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if s != "N/A" {
			return nil, fmt.Errorf("want a list of dates or \"N/A\", got %q", s)
		}
	case raw[0] == '[':
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("want a list of date strings")
		}
	default:
		return nil, fmt.Errorf("want a list of dates or \"N/A\"")
	}
	if kind == arena.KindMarket {
		if len(list) > 0 {
			return nil, fmt.Errorf("market questions resolve with their market; got dates %v", list)
		}
		return nil, nil
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("dataset questions need at least one resolution date")
	}
	out := make([]time.Time, 0, len(list))
	seen := map[time.Time]bool{}
	for _, s := range list {
		t, err := parseDate(s)
		if err != nil {
			return nil, err
		}
		if seen[t] {
			return nil, fmt.Errorf("duplicate date %s", s)
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, nil
}

type rawResolution struct {
	ID             json.RawMessage `json:"id"`
	Source         *string         `json:"source"`
	Direction      json.RawMessage `json:"direction"`
	ResolutionDate *string         `json:"resolution_date"`
	ResolvedTo     *float64        `json:"resolved_to"`
	Resolved       *bool           `json:"resolved"`
}

func (p *parser) resolution(i int, raw json.RawMessage, at int64) (Resolution, error) {
	where := fmt.Sprintf("resolutions[%d]", i)
	if len(raw) == 0 || raw[0] != '{' {
		return Resolution{}, p.errAt(at, where, "want an object")
	}
	var r rawResolution
	if err := json.Unmarshal(raw, &r); err != nil {
		return Resolution{}, p.jsonErr(err, at, where+idOf(raw))
	}
	bad := func(field, format string, args ...any) (Resolution, error) {
		return Resolution{}, p.errAt(at, where+"."+field, format, args...)
	}
	var res Resolution
	id := bytes.TrimSpace(r.ID)
	switch {
	case len(id) == 0 || string(id) == "null":
		return bad("id", "missing")
	case id[0] == '"':
		if err := json.Unmarshal(id, &res.ID); err != nil || res.ID == "" {
			return bad("id", "missing")
		}
		where = fmt.Sprintf("resolutions[%d] (id %s)", i, res.ID)
	case id[0] == '[':
		if err := json.Unmarshal(id, &res.Combination); err != nil || len(res.Combination) < 2 {
			return bad("id", "a combination id must be a list of at least two strings")
		}
		for _, c := range res.Combination {
			if c == "" {
				return bad("id", "empty id in combination")
			}
		}
	default:
		return bad("id", "want a string or a list of strings")
	}
	res.Source = deref(r.Source)
	if _, ok := KindOf(res.Source); !ok {
		return bad("source", "unknown source %q", res.Source)
	}
	if dir := bytes.TrimSpace(r.Direction); len(dir) > 0 && string(dir) != "null" {
		var d []float64
		if err := json.Unmarshal(dir, &d); err != nil {
			return bad("direction", "want null or a list of numbers")
		}
	}
	if r.ResolutionDate == nil {
		return bad("resolution_date", "missing")
	}
	t, err := parseDate(*r.ResolutionDate)
	if err != nil {
		return bad("resolution_date", "%v", err)
	}
	res.ResolutionDate = t
	if r.Resolved == nil {
		return bad("resolved", "missing")
	}
	res.Resolved = *r.Resolved
	if r.ResolvedTo == nil {
		return bad("resolved_to", "missing")
	}
	res.ResolvedTo = *r.ResolvedTo
	// For single questions resolved_to is an outcome (0/1) or a market
	// probability; anything outside [0,1] is corrupt. Combination rows are
	// skipped, so only their types are checked.
	if !res.IsCombination() && (res.ResolvedTo < 0 || res.ResolvedTo > 1) {
		return bad("resolved_to", "%v outside [0,1]", res.ResolvedTo)
	}
	return res, nil
}

// parseDate parses the YYYY-MM-DD dates of due dates and resolution dates.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want a date YYYY-MM-DD, got %q", s)
	}
	return t, nil
}

// parseTime parses the datetimes ForecastBench writes: RFC 3339 with an
// offset ("2025-10-16T00:00:00+00:00") and, for Polymarket open times,
// bare dates ("2025-05-01", taken as midnight UTC). "N/A" and "" are zero.
// Times without an offset are rejected rather than guessed.
func parseTime(s string) (time.Time, error) {
	switch s {
	case "", "N/A":
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("want an RFC 3339 time or YYYY-MM-DD, got %q", s)
}

// parseProbability parses a market freeze value: a decimal string in [0,1].
// Missing values ("", "N/A", and Python's "nan") give ok=false; anything
// else that is not a finite probability is an error.
func parseProbability(s string) (p float64, ok bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "n/a", "nan":
		return 0, false, nil
	}
	p, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1 {
		return 0, false, fmt.Errorf("want a probability in [0,1], got %q", s)
	}
	return p, true, nil
}

// Bounds of a question or resolution set, far above real ones (a set of
// 500 questions takes 1.5 MB, the largest published tens of MB), so that
// an endless input (/dev/zero, a pipe) fails soon with a clear error
// instead of exhausting memory. Vars so tests can lower them.
var (
	MaxFileBytes  int64 = 256 << 20
	MaxValueBytes int64 = 16 << 20 // one question or resolution, or a header value
)

// lineReader records where lines start so byte offsets can be reported as
// line:col, and keeps the bytes read since the last mark (the value being
// decoded) to locate syntax errors exactly. It fails a read past
// MaxFileBytes, or past MaxValueBytes since the mark.
type lineReader struct {
	r io.Reader
	n int64
	// newlines has bit i set when byte i is a newline: an eighth of the
	// input at most, where a list of line starts could take eight times
	// the input of a file of empty lines.
	newlines []uint64
	keep     []byte // bytes from offset keepAt on
	keepAt   int64
	markAt   int64 // the last mark
}

func (l *lineReader) Read(b []byte) (int, error) {
	switch {
	case l.n > MaxFileBytes:
		return 0, fmt.Errorf("larger than %s, the limit of a ForecastBench file", arena.SizeText(MaxFileBytes))
	case l.n-l.markAt > MaxValueBytes:
		return 0, fmt.Errorf("a value longer than %s, the limit of one question, resolution or header value", arena.SizeText(MaxValueBytes))
	}
	n, err := l.r.Read(b)
	for words := (l.n + int64(n) + 63) / 64; int64(len(l.newlines)) < words; {
		l.newlines = append(l.newlines, 0)
	}
	for i, c := range b[:n] {
		if c == '\n' {
			off := l.n + int64(i)
			l.newlines[off/64] |= 1 << (off % 64)
		}
	}
	l.keep = append(l.keep, b[:n]...)
	l.n += int64(n)
	return n, err
}

// mark starts a value at off and drops kept bytes before it. It compacts
// only when the dead prefix outweighs the live bytes, so marking every
// element stays linear.
func (l *lineReader) mark(off int64) {
	l.markAt = off
	d := off - l.keepAt
	if d <= 0 || d > int64(len(l.keep)) || d < int64(len(l.keep))-d {
		return
	}
	l.keep = l.keep[:copy(l.keep, l.keep[d:])]
	l.keepAt = off
}

// since returns the kept bytes from off on.
func (l *lineReader) since(off int64) []byte {
	d := off - l.keepAt
	if d < 0 || d > int64(len(l.keep)) {
		return nil
	}
	return l.keep[d:]
}

// position turns an offset into a line and column: the line is one more
// than the newlines before off, and starts after the last of them.
func (l *lineReader) position(off int64) (line, col int) {
	line, start := 1, int64(0)
	for w := int64(0); w < int64(len(l.newlines)) && w <= off/64; w++ {
		word := l.newlines[w]
		if w == off/64 {
			word &= 1<<(off%64) - 1 // the newlines before off
		}
		if word != 0 {
			line += bits.OnesCount64(word)
			start = w*64 + int64(63-bits.LeadingZeros64(word)) + 1
		}
	}
	return line, int(off-start) + 1
}
