package forecastbench

import (
	"errors"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
)

// Both fuzz targets check that the parsers never panic, that every error is
// a one-line *ParseError, and that whatever they accept maps to markets
// that pass arena.Market.Validate (or is refused by Build with a user
// error, e.g. a question repeated with different content).

func FuzzReadQuestionSet(f *testing.F) {
	f.Add(questionSet("2025-10-26", marketQ, polyQ, datasetQ))
	f.Add(questionSet("2025-10-26", datasetQ, datasetQ))
	f.Add(questionSet("2025-10-26"))
	f.Add(strings.Replace(questionSet("2025-10-26", marketQ), `"0.979920031255855"`, `"N/A"`, 1))
	f.Add(strings.Replace(questionSet("2025-10-26", datasetQ), `"2025-11-25"`, `"2025-11-31"`, 1))
	f.Add(`{"forecast_due_date": "2025-10-26", "questions": [{"id": 1}]}`)
	f.Add(`{"questions": [], "forecast_due_date": "2025-10-26", "extra": {"a": [1, 2]}}`)
	f.Add(`{"forecast_due_date": "2025-10-26", "questions": [{"id": "x", "source": "fred", "question": "q", "freeze_datetime": "2025-10-16", "resolution_dates": ["2025-11-02"], "freeze_datetime_value": NaN}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadQuestionSet(strings.NewReader(in))
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, q := range set.Questions {
			if q.ID == "" || q.Question == "" || q.FreezeTime.IsZero() {
				t.Fatalf("accepted incomplete question %+v", q)
			}
			if _, ok := KindOf(q.Source); !ok {
				t.Fatalf("accepted unknown source %q", q.Source)
			}
			if q.Kind() == arena.KindDataset && len(q.ResolutionDates) == 0 {
				t.Fatalf("dataset question without dates: %+v", q)
			}
		}
		checkBuild(t, []*QuestionSet{set}, nil)
	})
}

func FuzzReadResolutionSet(f *testing.F) {
	f.Add(resolutionSet("2025-10-26",
		row("afeef9ddc9b6c6d1", "acled", "2025-11-02", "0.0", true),
		row("0x3e6c", "polymarket", "2025-11-30", "0.0013000000000000002", false),
		row("7994", "metaculus", "2025-11-30", "1", true),
		row(`["a", "b"]`, "fred", "2025-11-02", "1.0", true)))
	f.Add(resolutionSet("2025-10-26", row("a", "manifold", "2025-11-02", "0.5", true), row("a", "manifold", "2025-11-02", "0.5", true)))
	f.Add(resolutionSet("2025-10-26"))
	f.Add(`{"forecast_due_date": "2025-10-26", "resolutions": [{"id": "x", "resolved_to": "1"}]}`)
	f.Add(`{"forecast_due_date": "2025-10-26", "resolutions": [{"id": "x", "source": "fred", "resolution_date": "2025-11-02", "resolved_to": 1e400, "resolved": true}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadResolutionSet(strings.NewReader(in))
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, r := range set.Resolutions {
			if (r.ID == "") == (r.Combination == nil) {
				t.Fatalf("row is neither single nor combination: %+v", r)
			}
			if !r.IsCombination() && (r.ResolvedTo < 0 || r.ResolvedTo > 1) {
				t.Fatalf("accepted resolved_to %v", r.ResolvedTo)
			}
		}
		checkBuild(t, nil, []*ResolutionSet{set})
	})
}

func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *ParseError", err, err)
	}
	if pe.Line < 0 || pe.Col < 0 {
		t.Fatalf("bad position in %v", pe)
	}
}

func checkBuild(t *testing.T, qs []*QuestionSet, rs []*ResolutionSet) {
	t.Helper()
	b, err := Build(qs, rs, now)
	if err != nil {
		if arena.ErrorKind(err) != arena.EINVALID {
			t.Fatalf("build failed with a non-user error: %v", err)
		}
		return
	}
	for _, m := range b.Markets {
		if err := m.Validate(); err != nil {
			t.Fatalf("invalid market: %v", err)
		}
	}
}
