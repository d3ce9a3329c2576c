package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
)

var ft0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// roundData stores three binary markets with hourly prices over 10 days
// before ft0, one price point and a resolution after ft0 (which must never
// be shown), and returns the task as of ft0.
func roundData(t *testing.T) (RoundTask, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var ms []*arena.Market
	for i := 0; i < 3; i++ {
		m := &arena.Market{Source: "test", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: fmt.Sprintf("Will Q%d happen?", i),
			Criteria: fmt.Sprintf("Resolves YES if Q%d happens.", i), Category: "cat", EventID: fmt.Sprint(i), Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, CloseTime: ft0.Add(30 * 24 * time.Hour), Status: arena.StatusOpen,
			Prices: map[string]float64{arena.Yes: 0.99, arena.No: 0.01}}
		for h := 240; h >= 1; h-- {
			m.History = append(m.History, arena.PricePoint{Outcome: arena.Yes, Time: ft0.Add(-time.Duration(h) * time.Hour),
				Price: 0.3 + 0.1*float64(i) + float64(h%7)/1000, Source: arena.PriceCLOBHistory})
		}
		// Planted after the as-of time: must never reach the model.
		m.History = append(m.History, arena.PricePoint{Outcome: arena.Yes, Time: ft0.Add(time.Hour), Price: 0.999, Source: arena.PriceCLOBHistory})
		ms = append(ms, m)
	}
	ctx := context.Background()
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, ms[0].ID, arena.Yes, ft0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	task := RoundTask{Round: "1", Data: &StoreData{Store: db, Markets: ms, AsOf: ft0}}
	for i, m := range ms {
		task.Markets = append(task.Markets, TaskMarket{Index: i, Question: m.Question, Category: m.Category, CloseTime: m.CloseTime})
	}
	return task, db
}

func call(name, args string) llmtest.ToolCall { return llmtest.ToolCall{Name: name, Arguments: args} }

func tools(calls ...llmtest.ToolCall) llmtest.Reply {
	return llmtest.Reply{ToolCalls: calls, PromptTokens: 1000, OutputTokens: 100}
}

func forecaster(t *testing.T, srv *llmtest.Server, model string, meter *llm.Meter) *Forecaster {
	t.Helper()
	spec := llm.ModelSpec{ID: model, Provider: "local", Model: model, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second),
		InputUSDPerMtok: 1_000_000, OutputUSDPerMtok: 2_000_000, MaxTokens: 500}
	c, err := llm.NewClient(spec, "", llm.WithLogger(slog.New(slog.DiscardHandler)), llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return &Forecaster{AgentID: model, LLM: llm.NewChain(c, llm.ChainConfig{Meter: meter})}
}

func TestForecasterToolsThenSubmit(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Script("m",
		tools(call(ToolDetails, `{"index":0}`), call(ToolHistory, `{"index":0}`)),
		tools(call(ToolSubmit, `{"predictions":[7000,4000],"reasoning":["a","b"]}`)), // wrong count
		tools(call(ToolSubmit, `{"predictions":[7000,4000,5000.0],"reasoning":["a","b","c"]}`)),
	)
	meter := llm.NewMeter(0)
	tr, err := forecaster(t, srv, "m", meter).Forecast(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Failure != "" || fmt.Sprint(tr.Predictions) != "[7000 4000 5000]" || fmt.Sprint(tr.Reasoning) != "[a b c]" {
		t.Fatalf("trace %+v", tr)
	}
	if len(tr.Steps) != 3 || !tr.Steps[1].ToolCalls[0].Error || !strings.Contains(tr.Steps[1].ToolCalls[0].Result, "exactly 3") {
		t.Errorf("wrong count not sent back as a tool error: %+v", tr.Steps)
	}
	// The model saw the details (with the latest price before ft0) and at
	// most 30 history points, none after ft0, and nothing of the resolution.
	var det MarketDetails
	if err := json.Unmarshal([]byte(tr.Steps[0].ToolCalls[0].Result), &det); err != nil {
		t.Fatal(err)
	}
	if det.Price == nil || !det.PriceTime.Equal(ft0.Add(-time.Hour)) || *det.Price == 0.999 || det.Criteria == "" {
		t.Errorf("details %+v", det)
	}
	var hist struct{ Points []HistoryPoint }
	if err := json.Unmarshal([]byte(tr.Steps[0].ToolCalls[1].Result), &hist); err != nil {
		t.Fatal(err)
	}
	if n := len(hist.Points); n != HistoryPoints || hist.Points[n-1].T.After(ft0) || hist.Points[0].T.Before(ft0.Add(-7*24*time.Hour)) {
		t.Errorf("history %d points %v … %v", n, hist.Points[0].T, hist.Points[n-1].T)
	}
	for _, r := range srv.Requests("m") {
		raw := string(r.Raw)
		if strings.Contains(raw, "0.999") || strings.Contains(raw, "resolved") || strings.Contains(raw, "status") {
			t.Errorf("request leaks a later price or the resolution: %s", raw)
		}
	}
	if fmt.Sprint(tr.PriceShown) != "[true false false]" {
		t.Errorf("price shown %v", tr.PriceShown)
	}
	// Accounting: 3 calls × (1000 in × 1 µ$ + 100 out × 2 µ$) = 3600 µ$.
	if tr.Calls != 3 || tr.CostMicros != 3600 || meter.Agent("m").CostMicros != 3600 || tr.InputTokens != 3000 {
		t.Errorf("trace accounting %d calls %d µ$ %d in; meter %+v", tr.Calls, tr.CostMicros, tr.InputTokens, meter.Agent("m"))
	}
	// The tool messages went back with their call ids.
	last := srv.Requests("m")[2].Body.Messages
	if last[len(last)-1].Role != "tool" || last[len(last)-1].ToolCallID == "" {
		t.Errorf("last message %+v", last[len(last)-1])
	}
}

func TestForecasterNeverSubmits(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Handle("m", func(llmtest.ChatRequest) llmtest.Reply { return tools(call(ToolDetails, `{"index":9}`)) })
	f := forecaster(t, srv, "m", nil)
	f.MaxSteps = 4
	tr, err := f.Forecast(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Submitted() || !strings.Contains(tr.Failure, "within 4 model calls") || len(srv.Requests("m")) != 4 {
		t.Errorf("failure %q, %d requests", tr.Failure, len(srv.Requests("m")))
	}
	if !strings.Contains(tr.Steps[0].ToolCalls[0].Result, "out of range") {
		t.Errorf("bad index answer %q", tr.Steps[0].ToolCalls[0].Result)
	}
}

func TestForecasterBudgetStops(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Handle("m", func(llmtest.ChatRequest) llmtest.Reply { return tools(call(ToolHistory, `{"index":1}`)) })
	meter := llm.NewMeter(0)
	meter.SetAgentCap("m", 5000) // one call's bound is ~1000 µ$ of answer plus the prompt
	tr, err := forecaster(t, srv, "m", meter).Forecast(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	stops := meter.Stops()
	if tr.Submitted() || !strings.Contains(tr.Failure, "budget") || len(stops) != 1 || stops[0].Agent != "m" || stops[0].Round != "1" {
		t.Fatalf("failure %q stops %+v", tr.Failure, stops)
	}
	if spent := meter.Agent("m").CostMicros; spent > 5000 || int64(len(srv.Requests("m")))*1200 != spent {
		t.Errorf("spent %d µ$ over %d requests", spent, len(srv.Requests("m")))
	}
}

func TestForecasterRetriesAndAuthFailure(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(http.StatusTooManyRequests, "slow down"), tools(call(ToolSubmit, `{"predictions":[1,2,3]}`)))
	tr, err := forecaster(t, srv, "m", nil).Forecast(context.Background(), task)
	if err != nil || fmt.Sprint(tr.Predictions) != "[1 2 3]" || len(srv.Requests("m")) != 2 {
		t.Fatalf("429 then success: %v %+v", err, tr)
	}
	srv.Script("bad", llmtest.Fail(http.StatusUnauthorized, "invalid key"))
	tr, err = forecaster(t, srv, "bad", nil).Forecast(context.Background(), task)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 401 || le.Attempts != 1 || tr.Submitted() || len(srv.Requests("bad")) != 1 {
		t.Fatalf("401: %v", err)
	}
	if !strings.Contains(err.Error(), "invalid key") {
		t.Errorf("message %q", err)
	}
}

func TestForecasterJSONFallback(t *testing.T) {
	task, _ := roundData(t)
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("I think: {\"predictions\": [0.7, 0.4, 0.5]}", 10, 10),
		llmtest.OK("<think>hmm</think>```json\n{\"Predictions\": [\"7000\", 4000, 5000,], \"reasoning\": \"same\"}\n```", 10, 10))
	f := forecaster(t, srv, "m", nil)
	f.JSONOnly = true
	tr, err := f.Forecast(context.Background(), task)
	if err != nil || fmt.Sprint(tr.Predictions) != "[7000 4000 5000]" || tr.Reasoning[2] != "same" {
		t.Fatalf("%v %+v", err, tr)
	}
	if tr.Mode != "json" || fmt.Sprint(tr.PriceShown) != "[true true true]" || !strings.Contains(tr.User, "Will Q2 happen?") {
		t.Errorf("mode %s shown %v", tr.Mode, tr.PriceShown)
	}
	if reqs := srv.Requests("m"); len(reqs) != 2 || reqs[0].Body.Tools != nil || !strings.Contains(reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1].Text(), "not an integer") {
		t.Errorf("correction not sent")
	}
	if strings.Contains(tr.User, "0.999") {
		t.Errorf("prompt shows a later price")
	}
}

func TestParsePredictions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = error
	}{
		{`{"predictions":[1,2]}`, "[1 2]"},
		{`prose {"predictions":[10000, 0]} more`, "[10000 0]"},
		{`{"predictions":[1,2,3]}`, ""},
		{`{"predictions":[1,10001]}`, ""},
		{`{"predictions":[1,-1]}`, ""},
		{`{"predictions":[1,0.5]}`, ""},
		{`{"predictions":[1,"0x10"]}`, ""},
		{`{"predictions":[1,1e3]}`, "[1 1000]"},
		{`{"predictions":[1,2]`, ""},
		{`{"example":{"predictions":[9,9]},"predictions":[1,2]}`, "[1 2]"},
		{``, ""},
	} {
		p, _, err := ParsePredictions(tc.in, 2)
		got := ""
		if err == nil {
			got = fmt.Sprint(p)
		}
		if got != tc.want {
			t.Errorf("%q: got %q (%v), want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParsePredictions(f *testing.F) {
	for _, s := range []string{`{"predictions":[1,2,3],"reasoning":["a","b","c"]}`, "```json\n{\"predictions\":[\"1\",2,3,]}\n```",
		`<think>{"predictions":[1]}</think>{"predictions":[5,6,7]}`, `{"predictions":[1e400,2,3]}`, `{"predictions":`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, k int) {
		k = k%8 + 1
		if k < 1 {
			k = -k + 1
		}
		p, r, err := ParsePredictions(s, k)
		if err != nil {
			if arena.ErrorKind(err) != arena.EINVALID {
				t.Fatalf("error kind %q: %v", arena.ErrorKind(err), err)
			}
			return
		}
		if len(p) != k || len(r) != k {
			t.Fatalf("%d predictions %d reasons for k=%d", len(p), len(r), k)
		}
		total := 0
		for i := range p {
			if p[i] > 10000 {
				t.Fatalf("prediction %d", p[i])
			}
			total += len(r[i])
		}
		if total > maxReasonBytes(k)*k {
			t.Fatalf("reasoning %d bytes", total)
		}
	})
}

func TestTraceCountsBilledCost(t *testing.T) {
	tr := &Trace{}
	st := tr.count(llm.Response{CostMicros: 5, BilledMicros: 7, Billed: true})
	tr.count(llm.Response{CostMicros: 3})                                              // a provider that reports no cost
	tr.count(llm.Response{CostMicros: 4, BilledMicros: 9, Billed: true, Cached: true}) // from the cache: not paid again
	if st.BilledMicros != 7 || tr.BilledMicros != 7 || tr.BilledCalls != 1 || tr.CostMicros != 8 || tr.Calls != 2 {
		t.Errorf("step billed %d; trace billed %d over %d calls, estimate %d over %d calls", st.BilledMicros, tr.BilledMicros, tr.BilledCalls, tr.CostMicros, tr.Calls)
	}
}
