package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// A small human round in ForecastBench's formats: a market question that
// resolved Yes and a dataset question that resolved No on 2024-08-20, each
// forecast by three superforecasters.
const (
	humanQuestions = `{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-human.json", "questions": [
 {"id": "mq", "source": "manifold", "question": "Will the market question resolve Yes?", "resolution_criteria": "r", "background": "b",
  "market_info_open_datetime": "2024-01-01T00:00:00+00:00", "market_info_close_datetime": "2025-01-01T00:00:00+00:00", "url": "https://example.org/m",
  "freeze_datetime": "2024-07-12T00:00:00+00:00", "freeze_datetime_value": "0.7", "source_intro": "", "combination_of": "N/A", "resolution_dates": "N/A"},
 {"id": "dq", "source": "acled", "question": "Will fatalities rise by {resolution_date}?", "resolution_criteria": "r", "background": "b",
  "market_info_open_datetime": "N/A", "market_info_close_datetime": "N/A", "url": "https://acleddata.com/",
  "freeze_datetime": "2024-07-12T00:00:00+00:00", "freeze_datetime_value": "1.0", "source_intro": "", "combination_of": "N/A", "resolution_dates": ["2024-08-20"]}]}`
	humanResolutions = `{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-llm.json", "resolutions": [
 {"id": "mq", "source": "manifold", "direction": null, "resolution_date": "2024-12-31", "resolved_to": 1.0, "resolved": true},
 {"id": "dq", "source": "acled", "direction": null, "resolution_date": "2024-08-20", "resolved_to": 0.0, "resolved": true}]}`
	humanForecasts = `{"organization": "ForecastBench", "model": "Superforecaster forecasts", "question-set": "2024-07-21-human.json", "forecast_due_date": "2024-07-21", "forecasts": [
 {"id": "mq", "source": "manifold", "forecast": 0.9, "resolution_date": null, "reasoning": "The crowd is confident & so am I <b>really</b>.", "user_id": "u1", "searches": "", "consulted_urls": ""},
 {"id": "mq", "source": "manifold", "forecast": 0.6, "resolution_date": null, "reasoning": "", "user_id": "u2", "searches": null, "consulted_urls": null},
 {"id": "mq", "source": "manifold", "forecast": 0.8, "resolution_date": null, "reasoning": "Base rate of such markets.", "user_id": "u3", "searches": null, "consulted_urls": null},
 {"id": "dq", "source": "acled", "forecast": 0.1, "resolution_date": "2024-08-20", "reasoning": "Quiet region.", "user_id": "u1", "searches": null, "consulted_urls": null},
 {"id": "dq", "source": "acled", "forecast": 0.2, "resolution_date": "2024-08-20", "reasoning": null, "user_id": "u2", "searches": null, "consulted_urls": null},
 {"id": "dq", "source": "acled", "forecast": 0.05, "resolution_date": "2024-08-20", "reasoning": null, "user_id": "u3", "searches": null, "consulted_urls": null}]}`
)

func importHumanRound(t *testing.T, db *store.DB, humans bool) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := forecastbench.Files{Questions: []string{write("q.json", humanQuestions)}, Resolutions: []string{write("r.json", humanResolutions)}}
	if humans {
		files.Humans = []string{write("h.json", humanForecasts)}
	}
	if _, err := forecastbench.Import(context.Background(), db, files, time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
}

func TestHumanBoardPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		importHumanRound(t, db, true)
		mq, err := db.MarketBySource(ctx, arena.SourceForecastBench, "2024-07-21:manifold:mq")
		if err != nil {
			t.Fatal(err)
		}
		dq, err := db.MarketBySource(ctx, arena.SourceForecastBench, "2024-07-21:acled:dq:2024-08-20")
		if err != nil {
			t.Fatal(err)
		}
		// A backtested model said 0.5 on both.
		if err := db.SaveBacktest(ctx, []arena.BacktestForecast{
			{Agent: "m1", Round: "2024-07-21#1", MarketID: mq.ID, SourceID: mq.SourceID, Forecast: 5000, Outcome: 1},
			{Agent: "m1", Round: "2024-07-21#1", MarketID: dq.ID, SourceID: dq.SourceID, Forecast: 5000, Outcome: 0},
		}); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecasters: db, Boards: newBoards(t, db, nil)}).Handler())
		defer hs.Close()
		e := &env{t: t, db: db, url: hs.URL}

		var board view.HumanBoardPageJSON
		e.ok(200, "GET", "/api/v1/pages/backtest/humans", nil, "", &board)
		// Medians: 0.8 on the market (outcome 1), 0.1 on the dataset item (outcome 0).
		if len(board.Rows) != 2 || board.Rows[0].Forecaster != forecastbench.SuperMedian || !board.Rows[0].Human || board.Rows[1].Forecaster != "m1" || board.Rows[1].Human {
			t.Fatalf("rows %+v", board.Rows)
		}
		if b := board.Rows[0].Overall.Brier.V; b < 0.025-1e-12 || b > 0.025+1e-12 || board.Rows[1].Overall.Brier.V != 0.25 {
			t.Errorf("overall: humans %v, m1 %v; want 0.025 and 0.25", b, board.Rows[1].Overall.Brier.V)
		}
		if len(board.Questions) != 2 || len(board.Questions[0].Items) != 1 || len(board.Questions[1].Items) != 1 {
			t.Fatalf("questions %+v", board.Questions)
		}
		// The dataset question by its first sentence, its date and median.
		if q := board.Questions[0]; q.Kind != "dataset" || q.Question != "Will fatalities rise by 2024-08-20?" ||
			q.Items[0].ResolutionDate != "2024-08-20" || q.Items[0].Median != 0.1 || q.Items[0].Outcome != arena.No || q.Items[0].Humans != 3 {
			t.Errorf("dataset question %+v", q)
		}
		html := e.page("/backtest/humans")
		if !strings.Contains(html, forecastbench.SuperMedian+` <span class="tag">human</span>`) || !strings.Contains(html, `href="/backtest/humans/2024-07-21:manifold:mq"`) {
			t.Errorf("board page lacks the marked human row or the question link:\n%s", html)
		}
		// The footer links the page's own JSON.
		if !strings.Contains(html, `<a href="/api/v1/pages/backtest/humans">`) {
			t.Errorf("board page lacks its JSON link:\n%s", html)
		}

		var item view.HumanItemPageJSON
		e.ok(200, "GET", "/api/v1/pages/backtest/humans/2024-07-21:manifold:mq", nil, "", &item)
		if item.Outcome != arena.Yes || len(item.Groups) != 1 || item.Groups[0].Median != 0.8 || item.Groups[0].Min != 0.6 || item.Groups[0].Max != 0.9 || item.Groups[0].N != 3 {
			t.Fatalf("item %+v", item)
		}
		// Two of the three wrote something; the longest first.
		if ex := item.Groups[0].Excerpts; len(ex) != 2 || ex[0].UserID != "u1" || ex[1].UserID != "u3" {
			t.Errorf("excerpts %+v", ex)
		}
		if len(item.Models) != 1 || item.Models[0].Agent != "m1" || item.Models[0].Forecast != 0.5 {
			t.Errorf("models %+v", item.Models)
		}
		page := e.page("/backtest/humans/2024-07-21:manifold:mq")
		if !strings.Contains(page, "The crowd is confident &amp; so am I &lt;b&gt;really&lt;/b&gt;.") || !strings.Contains(page, "<strong>Yes</strong>") {
			t.Errorf("item page lacks the escaped reasoning or the outcome:\n%s", page)
		}
		// Its JSON link is the item's JSON, which answers (not the route's
		// pattern, {item}).
		link := `<a href="/api/v1/pages/backtest/humans/2024-07-21:manifold:mq">`
		if !strings.Contains(page, link) {
			t.Errorf("item page lacks its JSON link %s:\n%s", link, page)
		}
		e.ok(404, "GET", "/api/v1/pages/backtest/humans/2024-07-21:manifold:nope", nil, "", nil)

		// The board is kept between requests, but a new backtest forecast
		// shows at once.
		if err := db.SaveBacktest(ctx, []arena.BacktestForecast{
			{Agent: "m2", Round: "2024-07-21#1", MarketID: mq.ID, SourceID: mq.SourceID, Forecast: 9000, Outcome: 1},
			{Agent: "m2", Round: "2024-07-21#1", MarketID: dq.ID, SourceID: dq.SourceID, Forecast: 1000, Outcome: 0},
		}); err != nil {
			t.Fatal(err)
		}
		e.ok(200, "GET", "/api/v1/pages/backtest/humans", nil, "", &board)
		if len(board.Rows) != 3 {
			t.Fatalf("after a new backtest forecast: %+v", board.Rows)
		}
	})
}

// Without human forecasts the board page says so, with no rows.
func TestHumanBoardPagesWithoutHumans(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		importHumanRound(t, db, false)
		hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecasters: db, Boards: newBoards(t, db, nil)}).Handler())
		defer hs.Close()
		e := &env{t: t, db: db, url: hs.URL}
		var board view.HumanBoardPageJSON
		e.ok(200, "GET", "/api/v1/pages/backtest/humans", nil, "", &board)
		if len(board.Rows) != 0 || len(board.Questions) != 0 {
			t.Fatalf("board without humans: %+v", board)
		}
		if html := e.page("/backtest/humans"); !strings.Contains(html, "No human forecasts are stored") {
			t.Errorf("page without humans:\n%s", html)
		}
	})
}
