package forecastbench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// humanFile builds a human forecast file in the published layout (the
// hyphenated "question-set" key of the first files included).
func humanFile(model string, forecasts ...string) string {
	return `{"organization": "ForecastBench", "model": "` + model + `", "question-set": "2024-07-21-human.json",
	"forecast_due_date": "2024-07-21", "forecasts": [` + strings.Join(forecasts, ",") + `]}`
}

const (
	humanMarket  = `{"id": "TPk", "source": "manifold", "forecast": 0.75, "resolution_date": null, "reasoning": "crowd is confident", "direction": null, "user_id": "SbZ", "searches": "2024 hottest year", "consulted_urls": "https://example.org"}`
	humanDataset = `{"id": "45db", "source": "acled", "forecast": 0.02, "resolution_date": "2024-08-20", "reasoning": null, "direction": null, "user_id": "SbZ", "searches": null, "consulted_urls": null}`
	humanCombo   = `{"id": ["a", "b"], "source": "acled", "forecast": 0.1, "resolution_date": "2024-08-20", "direction": [1, -1], "user_id": "SbZ"}`
)

func TestReadHumanSet(t *testing.T) {
	set, err := ReadHumanSet(strings.NewReader(humanFile("Superforecaster forecasts", humanMarket, humanDataset, humanCombo)))
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2024, 7, 21, 0, 0, 0, 0, time.UTC)
	want := []arena.HumanForecast{
		{Due: due, Group: arena.HumanSuper, Source: "manifold", QuestionID: "TPk", UserID: "SbZ", Forecast: 0.75,
			Reasoning: "crowd is confident", Searches: "2024 hottest year", ConsultedURLs: "https://example.org"},
		{Due: due, Group: arena.HumanSuper, Source: "acled", QuestionID: "45db", ResolutionDate: time.Date(2024, 8, 20, 0, 0, 0, 0, time.UTC), UserID: "SbZ", Forecast: 0.02},
	}
	if set.QuestionSet != "2024-07-21-human.json" || set.Group != arena.HumanSuper || set.Combination != 1 || len(set.Forecasts) != 2 {
		t.Fatalf("set %+v", set)
	}
	for i := range want {
		if set.Forecasts[i] != want[i] {
			t.Errorf("forecast %d: got %+v, want %+v", i, set.Forecasts[i], want[i])
		}
	}
	pub, err := ReadHumanSet(strings.NewReader(humanFile("Public forecasts", strings.Replace(humanMarket, `"SbZ"`, `17`, 1))))
	if err != nil {
		t.Fatal(err)
	}
	if pub.Group != arena.HumanPublic || pub.Forecasts[0].UserID != "17" {
		t.Fatalf("public set %+v", pub)
	}
}

func TestReadHumanSetRefuses(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a question set", `{"forecast_due_date": "2024-07-21", "questions": []}`, "missing forecasts (this looks like a question set)"},
		{"no due date", `{"model": "Superforecaster forecasts", "forecasts": []}`, "missing forecast_due_date"},
		{"unknown group", humanFile("GPT-4o", humanMarket), "names neither superforecasters nor the public"},
		{"forecast above 1", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, "0.75", "75", 1)), "forecast: 75 outside [0,1]"},
		{"no forecast", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"forecast": 0.75`, `"forecast": null`, 1)), "forecast: missing"},
		{"market with a date", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"resolution_date": null`, `"resolution_date": "2024-08-20"`, 1)), "resolves with its market"},
		{"dataset without a date", humanFile("Superforecaster forecasts", strings.Replace(humanDataset, `"2024-08-20"`, `null`, 1)), "missing for a dataset question"},
		{"bad date", humanFile("Superforecaster forecasts", strings.Replace(humanDataset, `"2024-08-20"`, `"2024-08-32"`, 1)), "want a date"},
		{"unknown source", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, "manifold", "kalshi", 1)), `unknown source "kalshi"`},
		{"no user", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"user_id": "SbZ"`, `"user_id": null`, 1)), "user_id: missing"},
		{"twice", humanFile("Superforecaster forecasts", humanMarket, humanMarket), "forecast this question and resolution date twice"},
		{"string forecast", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, "0.75", `"0.75"`, 1)), "want number"},
	} {
		_, err := ReadHumanSet(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a ParseError with %q", c.name, err, c.want)
		}
	}
}

func FuzzReadHumanSet(f *testing.F) {
	f.Add(humanFile("Superforecaster forecasts", humanMarket, humanDataset, humanCombo))
	f.Add(humanFile("Public forecasts"))
	f.Add(`{"forecast_due_date": "2024-07-21", "model": "public", "forecasts": [{"id": 1}]}`)
	f.Add(humanFile("Superforecaster forecasts", strings.Replace(humanMarket, "0.75", "NaN", 1)))
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadHumanSet(strings.NewReader(in))
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, h := range set.Forecasts {
			kind, ok := KindOf(h.Source)
			if !ok || h.QuestionID == "" || h.UserID == "" || !(h.Forecast >= 0 && h.Forecast <= 1) ||
				(kind == arena.KindDataset) == h.ResolutionDate.IsZero() || h.Group != set.Group || !h.Due.Equal(set.ForecastDueDate) {
				t.Fatalf("accepted %+v", h)
			}
		}
	})
}
