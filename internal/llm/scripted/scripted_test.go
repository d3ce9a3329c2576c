package scripted

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const submitTool = `{"type":"function","function":{"name":"submitPredictions","parameters":{"type":"object","properties":{"predictions":{"type":"array","minItems":2,"maxItems":2}}}}}`

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, v
}

// call returns the first tool call's name and arguments.
func call(t *testing.T, v map[string]any) (string, string) {
	t.Helper()
	msg := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	fn := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	return fn["name"].(string), fn["arguments"].(string)
}

func TestScriptedServer(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	// scripted-half submits 0.5 at once, saying it is scripted.
	st, v := post(t, srv.URL, `{"model":"scripted-half","messages":[{"role":"user","content":"q"}],"tools":[`+submitTool+`]}`)
	name, args := call(t, v)
	if st != 200 || name != "submitPredictions" || args != `{"predictions":[5000,5000],"reasoning":["scripted answer, not a model","scripted answer, not a model"]}` {
		t.Fatalf("half: %d %s %s", st, name, args)
	}
	// scripted-market first asks for the details, then submits the price
	// shown (0.5 where none is).
	st, v = post(t, srv.URL, `{"model":"scripted-market","messages":[{"role":"user","content":"q"}],"tools":[`+submitTool+`]}`)
	if name, args = call(t, v); st != 200 || name != "getMarketDetails" || args != `{"index":0}` {
		t.Fatalf("market, first turn: %d %s %s", st, name, args)
	}
	st, v = post(t, srv.URL, `{"model":"scripted-market","messages":[{"role":"user","content":"q"},
		{"role":"tool","content":"{\"index\":0,\"price\":0.72}"},{"role":"tool","content":"{\"index\":1,\"price\":null}"}],"tools":[`+submitTool+`]}`)
	if name, args = call(t, v); st != 200 || name != "submitPredictions" || !strings.HasPrefix(args, `{"predictions":[7200,5000]`) {
		t.Fatalf("market, second turn: %d %s %s", st, name, args)
	}
	for what, c := range map[string]struct {
		body   string
		status int
	}{
		"unknown model":  {`{"model":"gpt-4o","messages":[],"tools":[` + submitTool + `]}`, 404},
		"no submit tool": {`{"model":"scripted-half","messages":[]}`, 400},
		"not JSON":       {`{`, 400},
	} {
		if st, v := post(t, srv.URL, c.body); st != c.status || v["error"] == nil {
			t.Errorf("%s: %d %v, want %d and an error", what, st, v, c.status)
		}
	}
}
