package forecastbench

import (
	"io"
	"strings"
	"testing"
	"time"
)

// Fixtures in the published shape (fields and value styles copied from the
// 2025-10-26 set: RFC 3339 with +00:00, a bare date for a Polymarket open
// time, "N/A" markers, numbers as strings in freeze_datetime_value).
const marketQ = `{
            "id": "K8qazyZJ3tXyuLlzkkyk",
            "source": "manifold",
            "question": "Will San Diego FC make the playoffs in 2025?",
            "resolution_criteria": "Resolves to the outcome of the question found at https://manifold.markets/x.",
            "background": "",
            "market_info_open_datetime": "2023-11-16T18:37:14+00:00",
            "market_info_close_datetime": "2026-01-01T04:59:00+00:00",
            "market_info_resolution_criteria": "N/A",
            "url": "https://manifold.markets/UniversalFC/will-san-diego-fc-make-the-playoffs",
            "freeze_datetime": "2025-10-16T00:00:00+00:00",
            "freeze_datetime_value": "0.979920031255855",
            "freeze_datetime_value_explanation": "The market value.",
            "source_intro": "We would like you to predict the outcome of a prediction market.",
            "resolution_dates": "N/A"
        }`

const polyQ = `{
            "id": "0x3e6cb7ad03e2687d0befe8706bb9ac276b3d74c0a8c7e02bf3c6b796e25601c0",
            "source": "polymarket",
            "question": "Will the Kansas City Chiefs win the AFC West?",
            "resolution_criteria": "Resolves to the outcome of the question found at https://polymarket.com/market/x.",
            "background": "This market will resolve to Yes if ...",
            "market_info_open_datetime": "2025-05-01",
            "market_info_close_datetime": "2026-01-06T12:00:00+00:00",
            "market_info_resolution_criteria": "N/A",
            "url": "https://polymarket.com/market/will-the-kansas-city-chiefs-win-the-afc-west-1",
            "freeze_datetime": "2025-10-16T00:00:00+00:00",
            "freeze_datetime_value": "0.42",
            "freeze_datetime_value_explanation": "The market price.",
            "source_intro": "We would like you to predict the outcome of a prediction market.",
            "resolution_dates": "N/A"
        }`

const datasetQ = `{
            "id": "DAAA",
            "source": "fred",
            "question": "Will Moody's Seasoned Aaa Corporate Bond Yield have increased by {resolution_date} as compared to its value on {forecast_due_date}?",
            "resolution_criteria": "Resolves to the value found at https://fred.stlouisfed.org/series/DAAA once the data is published.",
            "background": "The notes from the release: N/A.",
            "market_info_open_datetime": "N/A",
            "market_info_close_datetime": "N/A",
            "market_info_resolution_criteria": "N/A",
            "url": "https://fred.stlouisfed.org/series/DAAA",
            "freeze_datetime": "2025-10-16T00:00:00+00:00",
            "freeze_datetime_value": "5.13",
            "freeze_datetime_value_explanation": "The latest value released.",
            "source_intro": "FRED is a database.",
            "resolution_dates": ["2025-11-02", "2025-11-25", "2026-01-24"]
        }`

func questionSet(due string, qs ...string) string {
	return "{\n    \"forecast_due_date\": \"" + due + "\",\n    \"question_set\": \"" + due + "-llm.json\",\n    \"questions\": [\n        " +
		strings.Join(qs, ",\n        ") + "\n    ]\n}\n"
}

func row(id, source, date, to string, resolved bool) string {
	r := "false"
	if resolved {
		r = "true"
	}
	if !strings.HasPrefix(id, "[") {
		id = `"` + id + `"`
	}
	dir := "null"
	if strings.HasPrefix(id, "[") {
		dir = "[1, -1]"
	}
	return `{"id": ` + id + `, "source": "` + source + `", "direction": ` + dir + `, "resolution_date": "` + date +
		`", "resolved_to": ` + to + `, "resolved": ` + r + `}`
}

func resolutionSet(due string, rows ...string) string {
	return "{\n    \"forecast_due_date\": \"" + due + "\",\n    \"question_set\": \"" + due + "-llm.json\",\n    \"resolutions\": [\n        " +
		strings.Join(rows, ",\n        ") + "\n    ]\n}\n"
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestReadQuestionSet(t *testing.T) {
	set, err := ReadQuestionSet(strings.NewReader(questionSet("2025-10-26", marketQ, polyQ, datasetQ)))
	if err != nil {
		t.Fatal(err)
	}
	if !set.ForecastDueDate.Equal(date("2025-10-26")) || set.Name != "2025-10-26-llm.json" || len(set.Questions) != 3 {
		t.Fatalf("header: %+v", set)
	}
	m, p, d := set.Questions[0], set.Questions[1], set.Questions[2]
	if m.ID != "K8qazyZJ3tXyuLlzkkyk" || m.Source != "manifold" || m.Kind() != "market" || m.URL == "" || m.MarketResolutionCriteria != "" {
		t.Errorf("market question: %+v", m)
	}
	if want := time.Date(2023, 11, 16, 18, 37, 14, 0, time.UTC); !m.MarketOpen.Equal(want) || m.MarketOpen.Location() != time.UTC {
		t.Errorf("open time %v", m.MarketOpen)
	}
	if fp, ok := m.FreezeProbability(); !ok || fp != 0.979920031255855 {
		t.Errorf("freeze probability %v %v", fp, ok)
	}
	if m.ResolutionDates != nil {
		t.Errorf("market question has resolution dates %v", m.ResolutionDates)
	}
	if !p.MarketOpen.Equal(date("2025-05-01")) { // bare date form
		t.Errorf("polymarket open %v", p.MarketOpen)
	}
	if d.Kind() != "dataset" || !d.MarketOpen.IsZero() || !d.MarketClose.IsZero() || d.FreezeValue != "5.13" {
		t.Errorf("dataset question: %+v", d)
	}
	if _, ok := d.FreezeProbability(); ok {
		t.Error("a dataset freeze value is not a probability")
	}
	if len(d.ResolutionDates) != 3 || !d.ResolutionDates[2].Equal(date("2026-01-24")) {
		t.Errorf("resolution dates %v", d.ResolutionDates)
	}
}

func TestScanQuestionSetStreams(t *testing.T) {
	var ids []string
	set, err := ScanQuestionSet(strings.NewReader(questionSet("2025-10-26", marketQ, datasetQ)), func(i int, q Question) error {
		ids = append(ids, q.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if set.Questions != nil || strings.Join(ids, ",") != "K8qazyZJ3tXyuLlzkkyk,DAAA" {
		t.Fatalf("ids %v, questions %v", ids, set.Questions)
	}
}

func TestFreezeValueMissingMarkers(t *testing.T) {
	for _, v := range []string{"N/A", "", "nan", "NaN"} {
		q := strings.Replace(marketQ, `"0.979920031255855"`, `"`+v+`"`, 1)
		set, err := ReadQuestionSet(strings.NewReader(questionSet("2025-10-26", q)))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if _, ok := set.Questions[0].FreezeProbability(); ok {
			t.Errorf("%q gave a freeze probability", v)
		}
	}
}

func TestQuestionSetErrors(t *testing.T) {
	sub := func(old, new string) string {
		if !strings.Contains(marketQ, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return questionSet("2025-10-26", datasetQ, strings.Replace(marketQ, old, new, 1))
	}
	subD := func(old, new string) string {
		return questionSet("2025-10-26", marketQ, strings.Replace(datasetQ, old, new, 1))
	}
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "unexpected end of file"},
		{"not json", "hello", "invalid JSON"},
		{"top-level array", "[]", "want a JSON object"},
		{"truncated", questionSet("2025-10-26", marketQ)[:200], "unexpected end of file"},
		{"trailing data", questionSet("2025-10-26", marketQ) + "{}", "unexpected data after"},
		{"no due date", `{"questions": []}`, "missing forecast_due_date"},
		{"no questions", `{"forecast_due_date": "2025-10-26"}`, "missing questions"},
		{"a resolution set", resolutionSet("2025-10-26"), "missing questions (this looks like a resolution set)"},
		{"questions null", `{"forecast_due_date": "2025-10-26", "questions": null}`, "want an array, got null"},
		{"bad due date", `{"forecast_due_date": "26/10/2025", "questions": []}`, `want a date YYYY-MM-DD, got "26/10/2025"`},
		{"due date number", `{"forecast_due_date": 20251026, "questions": []}`, "forecast_due_date: want string, got number"},
		{"duplicate key", `{"forecast_due_date": "2025-10-26", "forecast_due_date": "2025-10-27", "questions": []}`, "duplicate key"},
		{"question not object", `{"forecast_due_date": "2025-10-26", "questions": [42]}`, "questions[0]: want an object"},
		{"id number", sub(`"id": "K8qazyZJ3tXyuLlzkkyk"`, `"id": 17`), "questions[1] (id 17).id: want string, got number"},
		{"id missing", sub(`"id": "K8qazyZJ3tXyuLlzkkyk",`, ``), "questions[1].id: missing"},
		{"unknown source", sub(`"source": "manifold"`, `"source": "gjopen"`), `unknown source "gjopen"`},
		{"empty question", sub(`"question": "Will San Diego FC make the playoffs in 2025?"`, `"question": " "`), "question: missing"},
		{"freeze value number", sub(`"freeze_datetime_value": "0.979920031255855"`, `"freeze_datetime_value": 0.97`), "freeze_datetime_value: want string, got number"},
		{"freeze value above 1", sub(`"0.979920031255855"`, `"1.5"`), "want a probability in [0,1]"},
		{"freeze value text", sub(`"0.979920031255855"`, `"Yes"`), "want a probability in [0,1]"},
		{"freeze value inf", sub(`"0.979920031255855"`, `"Inf"`), "want a probability in [0,1]"},
		{"freeze time missing", sub(`"freeze_datetime": "2025-10-16T00:00:00+00:00"`, `"freeze_datetime": "N/A"`), "freeze_datetime: missing"},
		{"freeze time without offset", sub(`"2025-10-16T00:00:00+00:00"`, `"2025-10-16T00:00:00"`), "want an RFC 3339 time"},
		{"close time garbage", sub(`"2026-01-01T04:59:00+00:00"`, `"soon"`), "market_info_close_datetime: want an RFC 3339"},
		{"market with dates", sub(`"resolution_dates": "N/A"`, `"resolution_dates": ["2025-11-02"]`), "market questions resolve with their market"},
		{"dataset N/A dates", subD(`["2025-11-02", "2025-11-25", "2026-01-24"]`, `"N/A"`), "dataset questions need at least one resolution date"},
		{"dataset bad date", subD(`"2025-11-25"`, `"2025-11-31"`), `want a date YYYY-MM-DD, got "2025-11-31"`},
		{"dataset dup date", subD(`"2025-11-25"`, `"2025-11-02"`), "duplicate date 2025-11-02"},
		{"dataset dates numbers", subD(`["2025-11-02", "2025-11-25", "2026-01-24"]`, `[20251102]`), "want a list of date strings"},
		{"NaN literal", subD(`"freeze_datetime_value": "5.13"`, `"freeze_datetime_value": NaN`), "invalid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadQuestionSet(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("accepted bad input")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

func TestErrorPosition(t *testing.T) {
	in := questionSet("2025-10-26", datasetQ, strings.Replace(marketQ, `"id": "K8qazyZJ3tXyuLlzkkyk"`, `"id": 17`, 1))
	_, err := ReadQuestionSet(strings.NewReader(in))
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("error %T %v", err, err)
	}
	// The bad id is on the first line of the second question.
	wantLine := strings.Count(in[:strings.Index(in, `"id": 17`)], "\n") + 1
	if pe.Line != wantLine {
		t.Errorf("line %d, want %d (%v)", pe.Line, wantLine, pe)
	}
	// Syntax errors point at the offending byte.
	in = questionSet("2025-10-26", datasetQ, strings.Replace(marketQ, `"background": "",`, `"background": "" oops`, 1))
	_, err = ReadQuestionSet(strings.NewReader(in))
	pe, ok = err.(*ParseError)
	if !ok {
		t.Fatalf("error %T %v", err, err)
	}
	off := strings.Index(in, "oops")
	wantLine = strings.Count(in[:off], "\n") + 1
	wantCol := off - strings.LastIndex(in[:off], "\n")
	if pe.Line != wantLine || pe.Col != wantCol {
		t.Errorf("at %d:%d, want %d:%d (%v)", pe.Line, pe.Col, wantLine, wantCol, pe)
	}
	// Positions after runs of empty lines, across words of the newline set.
	for _, blank := range []int{0, 1, 63, 64, 65, 200} {
		in := strings.Repeat("\n", blank) + `{"forecast_due_date": 5}`
		_, err := ReadQuestionSet(strings.NewReader(in))
		if pe, ok := err.(*ParseError); !ok || pe.Line != blank+1 || pe.Col != 24 {
			t.Errorf("after %d empty lines: %v, want at %d:24", blank, err, blank+1)
		}
	}
}

func TestReadResolutionSet(t *testing.T) {
	in := resolutionSet("2025-10-26",
		row("afeef9ddc9b6c6d1", "acled", "2025-11-02", "0.0", true),
		row("0x3e6c", "polymarket", "2025-11-30", "0.0013000000000000002", false),
		row("7994", "metaculus", "2025-11-30", "1", true),
		row(`["a", "b"]`, "fred", "2025-11-02", "1.0", true),
	)
	set, err := ReadResolutionSet(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !set.ForecastDueDate.Equal(date("2025-10-26")) || set.QuestionSet != "2025-10-26-llm.json" || len(set.Resolutions) != 4 {
		t.Fatalf("header %+v", set)
	}
	r := set.Resolutions
	if r[0].ID != "afeef9ddc9b6c6d1" || !r[0].Resolved || r[0].ResolvedTo != 0 || !r[0].ResolutionDate.Equal(date("2025-11-02")) {
		t.Errorf("row 0 %+v", r[0])
	}
	if r[1].Resolved || r[1].ResolvedTo != 0.0013000000000000002 {
		t.Errorf("row 1 %+v", r[1])
	}
	if r[2].ResolvedTo != 1 {
		t.Errorf("integer resolved_to: %+v", r[2])
	}
	if !r[3].IsCombination() || r[3].ID != "" || strings.Join(r[3].Combination, ",") != "a,b" {
		t.Errorf("combination row %+v", r[3])
	}
}

func TestResolutionSetErrors(t *testing.T) {
	good := row("x1", "fred", "2025-11-02", "1.0", true)
	with := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return resolutionSet("2025-10-26", good, strings.Replace(good, old, new, 1))
	}
	cases := []struct{ name, in, want string }{
		{"no resolutions", `{"forecast_due_date": "2025-10-26"}`, "missing resolutions"},
		{"no due date", `{"resolutions": []}`, "missing forecast_due_date"},
		{"resolutions object", `{"forecast_due_date": "2025-10-26", "resolutions": {}}`, "want an array, got {"},
		{"resolved_to string", with(`"resolved_to": 1.0`, `"resolved_to": "1"`), "resolutions[1] (id x1).resolved_to: want number, got string"},
		{"resolved_to null", with(`"resolved_to": 1.0`, `"resolved_to": null`), "resolved_to: missing"},
		{"resolved_to NaN", with(`"resolved_to": 1.0`, `"resolved_to": NaN`), "invalid JSON"},
		{"resolved_to above 1", with(`"resolved_to": 1.0`, `"resolved_to": 2`), "2 outside [0,1]"},
		{"resolved_to negative", with(`"resolved_to": 1.0`, `"resolved_to": -0.5`), "outside [0,1]"},
		{"resolved string", with(`"resolved": true`, `"resolved": "true"`), "resolved: want boolean, got string"},
		{"resolved missing", with(`, "resolved": true`, ``), "resolved: missing"},
		{"id number", with(`"id": "x1"`, `"id": 12`), "id: want a string or a list of strings"},
		{"id empty", with(`"id": "x1"`, `"id": ""`), "id: missing"},
		{"id missing", with(`"id": "x1", `, ``), "id: missing"},
		{"combination of one", with(`"id": "x1"`, `"id": ["x1"]`), "at least two strings"},
		{"combination of numbers", with(`"id": "x1"`, `"id": [1, 2]`), "at least two strings"},
		{"unknown source", with(`"source": "fred"`, `"source": "kalshi"`), `unknown source "kalshi"`},
		{"bad date", with(`"2025-11-02"`, `"2025-11-02T00:00:00Z"`), `want a date YYYY-MM-DD`},
		{"date missing", with(`"resolution_date": "2025-11-02", `, ``), "resolution_date: missing"},
		{"direction string", with(`"direction": null`, `"direction": "up"`), "direction: want null or a list of numbers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadResolutionSet(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("accepted bad input")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{"N/A", time.Time{}, false},
		{"", time.Time{}, false},
		{"2025-10-16T00:00:00+00:00", time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC), false},
		{"2025-10-16T02:00:00+02:00", time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC), false},
		{"2025-10-16T00:00:00.5Z", time.Date(2025, 10, 16, 0, 0, 0, 5e8, time.UTC), false},
		{"2025-05-01", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), false},
		{"2025-10-16 00:00:00", time.Time{}, true},
		{"2025-10-16T00:00:00", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	}
	for _, c := range cases {
		got, err := parseTime(c.in)
		if (err != nil) != c.bad || !got.Equal(c.want) || (!got.IsZero() && got.Location() != time.UTC) {
			t.Errorf("parseTime(%q) = %v, %v", c.in, got, err)
		}
	}
}

// endlessReader yields a head, then its fill forever, like a pipe that
// never closes.
type endlessReader struct {
	head string
	fill byte
	n    int64
}

func (e *endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		if e.n < int64(len(e.head)) {
			p[i] = e.head[e.n]
		} else {
			p[i] = e.fill
		}
		e.n++
	}
	return len(p), nil
}

// A file past a bound is refused once the read gets there.
func TestReadBounds(t *testing.T) {
	defer func(f, v int64) { MaxFileBytes, MaxValueBytes = f, v }(MaxFileBytes, MaxValueBytes)
	MaxFileBytes, MaxValueBytes = 1<<20, 64<<10
	for _, c := range []struct {
		name string
		in   io.Reader
		want string
	}{
		{"endless string", &endlessReader{head: `{"forecast_due_date": "`, fill: 'x'}, "forecast_due_date: a value longer than 64 KiB, the limit of one question, resolution or header value"},
		{"endless whitespace", &endlessReader{head: `{"questions": [`, fill: '\n'}, "a value longer than"},
		{"endless questions", &endlessReader{head: `{"forecast_due_date": "2025-10-26", "background": [` + strings.Repeat(`"x",`, 1<<10), fill: ' '}, "a value longer than"},
	} {
		_, err := ReadQuestionSet(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A file is bounded as a whole, however small its values.
	MaxFileBytes = 4 << 10
	in := questionSet("2025-10-26", marketQ, datasetQ, strings.Repeat(" ", 4<<10))
	if _, err := ReadQuestionSet(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "larger than 4 KiB, the limit of a ForecastBench file") {
		t.Errorf("file past the bound: %v", err)
	}
}
