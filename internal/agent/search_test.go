package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/retrieve"
)

// searchWeb shows only sources dated up to the as-of time (undated ones
// only live), through the durable evidence cache.
func TestForecasterSearchWeb(t *testing.T) {
	task, _ := roundData(t)
	dir := t.TempDir()
	before, after := ft0.Add(-48*time.Hour), ft0.Add(time.Hour)
	query := "q0 news"
	id := "search@" + ft0.Format(time.RFC3339) + ":" + query
	name, err := retrieve.FileName(id)
	if err != nil {
		t.Fatal(err)
	}
	pk := arena.EvidencePacket{Question: query, Sources: []arena.EvidenceSource{
		{Title: "old", URL: "https://a", Published: &before, Highlights: []string{"h"}},
		{Title: "later", URL: "https://b", Published: &after},
		{Title: "undated", URL: "https://c"},
	}}
	b, _ := json.Marshal(pk)
	os.WriteFile(filepath.Join(dir, name), b, 0o600)
	cache := &retrieve.Cache{Next: retrieve.Dir{Dir: dir}, Provider: "dir", Store: llm.DirStore{Dir: t.TempDir()}}
	for _, live := range []bool{false, true} {
		srv := llmtest.New(t)
		srv.Script("m", tools(call(ToolSearch, `{"query":"q0 news"}`)), tools(call(ToolSubmit, `{"predictions":[1,2,3]}`)))
		task.Search = RetrieverSearch{Retriever: cache, AsOf: ft0, Live: live}
		tr, err := forecaster(t, srv, "m", nil).Forecast(context.Background(), task)
		if err != nil || !tr.Submitted() {
			t.Fatalf("%v %+v", err, tr)
		}
		res := tr.Steps[0].ToolCalls[0].Result
		if !strings.Contains(res, `"old"`) || strings.Contains(res, `"later"`) || strings.Contains(res, `"undated"`) != live {
			t.Errorf("live=%v: search result %s", live, res)
		}
		if !strings.Contains(string(srv.Requests("m")[0].Raw), ToolSearch) {
			t.Error("searchWeb not offered")
		}
	}
	if h, m := cache.Stats(); h != 1 || m != 1 {
		t.Errorf("evidence cache %d hits %d misses, want 1 and 1", h, m)
	}
	task.Search = nil
	srv := llmtest.New(t)
	srv.Script("m", tools(call(ToolSubmit, `{"predictions":[1,2,3]}`)))
	if _, err := forecaster(t, srv, "m", nil).Forecast(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(srv.Requests("m")[0].Raw), ToolSearch) {
		t.Error("searchWeb offered without a retriever")
	}
}
