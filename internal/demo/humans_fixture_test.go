package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/web"
)

// humanDates are the resolution dates of the fixture's dataset questions.
var humanDates = []string{"2024-07-28", "2024-08-20", "2024-10-19", "2025-01-17"}

// humanRoundFiles writes a human round in ForecastBench's formats, shaped
// like the published round of 2024-07-21 (written for this test, not
// copied): dataset questions whose text goes on with a worked example and
// that resolve on several dates, market questions, and superforecasters'
// forecasts with reasoning of a few hundred characters.
func humanRoundFiles(t *testing.T) forecastbench.Files {
	t.Helper()
	type question struct {
		ID, Source, Question, Criteria, Background, Open, Close, URL, Freeze, FreezeValue, Intro, Combination string
		Dates                                                                                                 any
	}
	var qs []map[string]any
	var rs []map[string]any
	var fs []map[string]any
	add := func(q question) {
		qs = append(qs, map[string]any{"id": q.ID, "source": q.Source, "question": q.Question, "resolution_criteria": q.Criteria,
			"background": q.Background, "market_info_open_datetime": q.Open, "market_info_close_datetime": q.Close, "url": q.URL,
			"freeze_datetime": "2024-07-12T00:00:00+00:00", "freeze_datetime_value": q.FreezeValue, "source_intro": "",
			"combination_of": "N/A", "resolution_dates": q.Dates})
	}
	reason := func(i int, what string) string {
		return fmt.Sprintf("Forecaster %d on %s: the recent record matters most here, and it has been quiet for months, so the base rate says "+
			"the event is unlikely within the window. I checked the source's own history for the last three years and found "+
			"only two comparable spells; neither came close to the threshold. A sudden change is possible but would need news "+
			"that I cannot find, so I stay low and would revise only on a clear signal.", i, what)
	}
	countries := []string{"Laos", "Aruba", "Uzbekistan"}
	for k, c := range countries {
		id := fmt.Sprintf("ds%d", k)
		add(question{ID: id, Source: "acled", Question: "Will there be more than ten times as many 'Battles' in " + c +
			" for the 30 days before {resolution_date} compared to one plus the 30-day average of 'Battles' over the 360 days preceding " +
			"{forecast_due_date}?  e.g. If the forecast due date is 2024-01-01 and we have the following data: Date,'Battles' 2023-11-11,1 " +
			"2023-10-10,2 to calculate one plus the 30-day average of 'Battles' over the preceding 360 days, we'd have: 1+(1+2)/12=1.25.  " +
			"In this example, for the question to resolve positively, 13 (10 x 1.25) or more 'Battles' would need to occur in the 30 days " +
			"leading up to the resolution.", Criteria: "Resolves from ACLED's counts.", Background: "ACLED records political violence.",
			Open: "N/A", Close: "N/A", URL: "https://acleddata.com/", FreezeValue: "0.0", Dates: humanDates})
		for j, d := range humanDates {
			rs = append(rs, map[string]any{"id": id, "source": "acled", "direction": nil, "resolution_date": d, "resolved_to": float64((k + j) % 2 * (k % 2)), "resolved": true})
			for u := range 5 {
				fs = append(fs, map[string]any{"id": id, "source": "acled", "forecast": 0.02 * float64(u+j), "resolution_date": d,
					"reasoning": reason(u, c), "user_id": fmt.Sprintf("user%d", u), "searches": nil, "consulted_urls": nil})
			}
		}
	}
	for k, title := range []string{"Will the average global temperature in 2024 exceed that of 2023?", "Will a second mobilization wave start before 2025?"} {
		id := fmt.Sprintf("mq%d", k)
		add(question{ID: id, Source: "manifold", Question: title, Criteria: "Resolves as the market does.", Background: "A market.",
			Open: "2024-01-01T00:00:00+00:00", Close: "2025-01-01T00:00:00+00:00", URL: "https://example.org/" + id, FreezeValue: "0.6", Dates: "N/A"})
		rs = append(rs, map[string]any{"id": id, "source": "manifold", "direction": nil, "resolution_date": "2024-12-31", "resolved_to": float64(1 - k), "resolved": true})
		for u := range 5 {
			fs = append(fs, map[string]any{"id": id, "source": "manifold", "forecast": 0.5 + 0.08*float64(u), "resolution_date": nil,
				"reasoning": reason(u, "the market"), "user_id": fmt.Sprintf("user%d", u), "searches": "", "consulted_urls": ""})
		}
	}
	dir := t.TempDir()
	write := func(name string, v any) []string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{p}
	}
	return forecastbench.Files{
		Questions: write("2024-07-21-human.json", map[string]any{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-human.json", "questions": qs}),
		Resolutions: write("2024-07-21_resolution_set.json", map[string]any{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-llm.json",
			"resolutions": rs}),
		Humans: write("2024-07-21.ForecastBench.human_super_individual.json", map[string]any{"organization": "ForecastBench",
			"model": "Superforecaster forecasts", "question-set": "2024-07-21-human.json", "forecast_due_date": "2024-07-21", "forecasts": fs}),
	}
}

// humanBoard serves the human board pages of the fixture round, imported
// into a SQLite store of its own, with two backtested models (hyphenated
// names, as real model ids are) on every item: the demo runs no backtest.
func humanBoard(t *testing.T) http.Handler {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "humans.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := forecastbench.Import(ctx, db, humanRoundFiles(t), time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		t.Fatal(err)
	}
	var bt []arena.BacktestForecast
	for _, m := range ms {
		if m.Resolution != arena.Yes && m.Resolution != arena.No {
			continue
		}
		o := int8(0)
		if m.Resolution == arena.Yes {
			o = 1
		}
		bt = append(bt, arena.BacktestForecast{Agent: "scripted-half", Round: "2024-07-21#1", MarketID: m.ID, SourceID: m.SourceID, Forecast: 5000, Outcome: o},
			arena.BacktestForecast{Agent: "scripted-market", Round: "2024-07-21#1", MarketID: m.ID, SourceID: m.SourceID, Forecast: uint16(3000 + 4000*int(o)), Outcome: o})
	}
	if err := db.SaveBacktest(ctx, bt); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	boards := backtest.NewBoards(db, scoring.Method{}, quiet)
	t.Cleanup(boards.Close) // before the store closes
	return web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecasters: db, Boards: boards}).Handler()
}
