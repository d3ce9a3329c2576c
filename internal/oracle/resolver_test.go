package oracle

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
)

func formatOf(t *testing.T, raw []byte) string {
	var b struct {
		RF *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	if b.RF == nil {
		return ""
	}
	return b.RF.Type
}

func TestResolverFormatFallback(t *testing.T) {
	srv := llmtest.New(t)
	ok := llmtest.OK(`{"decision":"YES","confidence":0.8,"reasoning":"r"}`, 10, 5)
	srv.Script("m", llmtest.Fail(400, "json_schema is not supported"), llmtest.Fail(422, "response_format not supported"), ok, ok)
	p := testPanel(t, srv, []string{"m"}, "", false)
	r := p.Resolvers[0]
	q := Question{ID: "q", Text: "Did it?"}
	v := r.Resolve(context.Background(), q, arena.EvidencePacket{}, 1, nil)
	if !v.Answered() || v.Decision != "YES" || v.Calls != 3 || v.Format != "" {
		t.Fatalf("vote %+v", v)
	}
	var got []string
	for _, rq := range srv.Requests("m") {
		got = append(got, formatOf(t, rq.Raw))
	}
	if strings.Join(got, ",") != "json_schema,json_object," {
		t.Fatalf("formats tried %v", got)
	}
	// The next call starts where the endpoint stopped refusing.
	v = r.Resolve(context.Background(), q, arena.EvidencePacket{}, 1, nil)
	if !v.Answered() || v.Calls != 1 || formatOf(t, srv.Requests("m")[3].Raw) != "" {
		t.Fatalf("second call %+v", v)
	}
}

func TestResolverFailures(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("auth", llmtest.Fail(401, "bad key"))
	srv.Script("flaky", llmtest.Fail(503, "busy"), llmtest.Fail(429, "slow down"), llmtest.OK(`{"decision":"NO","confidence":1}`, 1, 1))
	srv.Script("garbage", llmtest.OK("yes probably", 1, 1), llmtest.OK(`{"decision":"PERHAPS","confidence":0.5}`, 1, 1))
	srv.Script("fixed", llmtest.OK("yes probably", 1, 1), llmtest.OK(`{"decision":"TOO_EARLY","confidence":0.4,"reasoning":"no report yet"}`, 1, 1))
	p := testPanel(t, srv, []string{"auth", "flaky", "garbage", "fixed"}, "", false)
	q := Question{ID: "q", Text: "Did it?"}
	res := make([]arena.OracleVote, 4)
	for i, r := range p.Resolvers {
		res[i] = r.Resolve(context.Background(), q, arena.EvidencePacket{}, 1, nil)
	}
	if v := res[0]; v.Answered() || !strings.Contains(v.Failure, "401") || len(srv.Requests("auth")) != 1 {
		t.Errorf("401: %+v, %d requests", v, len(srv.Requests("auth")))
	}
	if v := res[1]; !v.Answered() || v.Decision != "NO" || len(srv.Requests("flaky")) != 3 {
		t.Errorf("flaky: %+v, %d requests", v, len(srv.Requests("flaky")))
	}
	if v := res[2]; v.Answered() || !strings.Contains(v.Failure, "PERHAPS") || v.Calls != 2 {
		t.Errorf("garbage: %+v", v)
	}
	// The re-ask shows the bad output and the parse error.
	reask := srv.Requests("garbage")[1].Body.Messages
	if len(reask) != 4 || reask[2].Text() != "yes probably" || !strings.Contains(reask[3].Text(), "could not be read") {
		t.Errorf("re-ask messages %+v", reask)
	}
	if v := res[3]; !v.Answered() || v.Decision != "TOO_EARLY" || v.Confidence != 0.4 || v.InputTokens != 2 {
		t.Errorf("fixed: %+v", v)
	}
}

func TestCacheOnlyReplay(t *testing.T) {
	w := newWorld(12)
	srv := llmtest.New(t)
	w.serve(srv, 0)
	dir := t.TempDir()
	systems := []string{"single:alpha", "majority", "weighted", "deliberative"}
	run := func(only bool) []byte {
		p := testPanel(t, srv, w.agents, dir, only)
		p.Workers, p.Deliberate = 4, true
		b, err := json.Marshal(BuildReport(items(w, p.Run(context.Background(), w.questions())), w.agents, systems))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := run(false)
	n := len(srv.Requests(""))
	second := run(true)
	if got := len(srv.Requests("")); got != n {
		t.Fatalf("cache-only run made %d requests", got-n)
	}
	if string(first) != string(second) {
		t.Fatalf("replay differs:\n%s\n%s", first, second)
	}
	// A normal rerun repeats only the calls that failed (never cached).
	third := run(false)
	failedCalls := 0
	for i := range w.items {
		for _, a := range w.agents {
			switch w.r1[key(a, i, 1)].kind {
			case "fail":
				failedCalls += 3
			case "garbage":
				failedCalls += 0 // both answers were cached: garbage is a stored answer
			}
		}
	}
	if got := len(srv.Requests("")) - n; got != failedCalls || string(third) != string(first) {
		t.Fatalf("rerun made %d requests, want %d (the failed ones)", got, failedCalls)
	}
}

func TestReportFormats(t *testing.T) {
	w := newWorld(20)
	srv := llmtest.New(t)
	w.serve(srv, 0)
	p := testPanel(t, srv, w.agents, "", false)
	p.Deliberate = true
	rep := BuildReport(items(w, p.Run(context.Background(), w.questions())), w.agents, []string{"single:alpha", "majority", "deliberative"})
	var tb, cb, sb, jb strings.Builder
	if err := rep.WriteTable(&tb); err != nil || !strings.Contains(tb.String(), "single:alpha") || !strings.Contains(tb.String(), "coverage") {
		t.Fatalf("table %v:\n%s", err, tb.String())
	}
	if err := rep.WriteCSV(&cb); err != nil || strings.Count(cb.String(), "\n") != 4 {
		t.Fatalf("csv %v:\n%s", err, cb.String())
	}
	if err := rep.WriteSVG(&sb); err != nil || strings.Count(sb.String(), "<circle") != 10 || !strings.HasSuffix(sb.String(), "</svg>\n") {
		t.Fatalf("svg %v:\n%s", err, sb.String())
	}
	if err := rep.WriteJSON(&jb); err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal([]byte(jb.String()), &keys)
	for _, k := range []string{"questions", "resolvers", "systems", "agreement", "agreement_confidence", "mcnemar", "error_correlation", "conditional_error", "revisions", "coverage_accuracy"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("json lacks %s", k)
		}
	}
	if len(keys) != 10 {
		t.Errorf("json has %d keys", len(keys))
	}
	// An empty evaluation reports nulls, not NaN.
	var eb strings.Builder
	if err := BuildReport(nil, w.agents, []string{"majority"}).WriteJSON(&eb); err != nil || strings.Contains(eb.String(), "NaN") {
		t.Fatalf("empty report %v %s", err, eb.String())
	}
}
