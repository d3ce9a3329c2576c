package forecastbench

import (
	"errors"
	"os"
	"path/filepath"
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
		{"a key twice in one forecast (the last would win)", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"forecast": 0.75`, `"forecast": 0.75, "forecast": 0.05`, 1)), `a JSON object names a key twice: "forecast"`},
		{"a user id twice in one forecast", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"user_id": "SbZ"`, `"user_id": "SbZ", "user_id": "Other"`, 1)), `names a key twice: "user_id"`},
		{"a key twice inside a nested value", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"direction": null`, `"direction": {"a": 1, "a": 2}`, 1)), `names a key twice: "a"`},
		{"a user id with a right-to-left override", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"Sb\u202eZ"`, 1)), "user_id: \"Sb\\u202eZ\" holds U+202E"},
		{"a user id with an isolate", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"\u2067SbZ"`, 1)), "holds U+2067"},
		{"a user id with NUL", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"Sb\u0000Z"`, 1)), "holds U+0000"},
		{"a user id with a zero-width space", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"Sb\u200bZ"`, 1)), "holds U+200B"},
		{"a user id with a newline", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"Sb\nZ"`, 1)), "holds U+000A"},
		{"a user id of 1 MiB", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, `"`+strings.Repeat("x", 1<<20)+`"`, 1)), "1048576 bytes long, more than the 128 an id may hold"},
		{"a numeric user id of 200 digits", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, strings.Repeat("9", 200), 1)), "200 bytes long"},
		{"a user id not valid UTF-8", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"SbZ"`, "\"Sb\xffZ\"", 1)), "forecasts[0] (id TPk): not valid UTF-8"},
		{"a question id with a right-to-left override", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"TPk"`, `"TP\u202ek"`, 1)), "id: \"TP\\u202ek\" holds U+202E"},
		{"a question id of 1 MiB", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"TPk"`, `"`+strings.Repeat("q", 1<<20)+`"`, 1)), "more than the 128 an id may hold"},
		{"reasoning of 1 MiB", humanFile("Superforecaster forecasts", strings.Replace(humanMarket, `"crowd is confident"`, `"`+strings.Repeat("r", 1<<20)+`"`, 1)), "reasoning: 1 MiB long, more than the 64 KiB a forecast's text may hold"},
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
			if checkID(h.UserID) != nil || checkID(h.QuestionID) != nil {
				t.Fatalf("accepted the ids %q %q", h.UserID, h.QuestionID)
			}
			kind, ok := KindOf(h.Source)
			if !ok || h.QuestionID == "" || h.UserID == "" || !(h.Forecast >= 0 && h.Forecast <= 1) ||
				(kind == arena.KindDataset) == h.ResolutionDate.IsZero() || h.Group != set.Group || !h.Due.Equal(set.ForecastDueDate) {
				t.Fatalf("accepted %+v", h)
			}
		}
	})
}

// A human forecast file that holds no forecast the arena imports (an
// empty forecasts array, or combination forecasts only) would replace
// the stored set of its round with nothing: refused unless ReplaceEmpty,
// by Load and by DryRun alike.
func TestLoadRefusesEmptyHumanSet(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body string }{
		{"an empty forecasts array", humanFile("Superforecaster forecasts")},
		{"combination forecasts only", humanFile("Superforecaster forecasts", humanCombo)},
	} {
		path := filepath.Join(dir, "empty.json")
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		files := Files{Humans: []string{path}}
		now := time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)
		for name, load := range map[string]func() error{
			"Load":   func() error { _, err := Load(files, now); return err },
			"DryRun": func() error { _, err := DryRun(files, now); return err },
		} {
			if err := load(); arena.ErrorKind(err) != arena.EINVALID || !strings.Contains(err.Error(), "holds no super forecast the arena imports for the round due 2024-07-21") || !strings.Contains(err.Error(), "--replace-empty") {
				t.Errorf("%s, %s: %v", c.name, name, err)
			}
		}
		files.ReplaceEmpty = true
		b, err := Load(files, now)
		if err != nil || len(b.Humans) != 1 || len(b.Humans[0].Forecasts) != 0 {
			t.Errorf("%s with ReplaceEmpty: %v", c.name, err)
		}
	}
}
