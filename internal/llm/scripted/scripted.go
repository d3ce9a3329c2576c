// Package scripted is a scripted OpenAI-compatible chat-completions server:
// a stand-in for a model so that a backtest runs offline, in one command,
// with no API key. It is not a forecaster and its scores say nothing about
// any model. It answers the arena's forecasting protocol (the tools the
// forecaster offers) as two fixed scripts, by model name:
//
//   - ModelHalf submits 0.5 for every question at once;
//   - ModelMarket asks for every question's details, then submits the
//     market price it was shown (the freeze value of an imported question),
//     or 0.5 where none is shown (dataset questions).
//
// Every reasoning it submits says it is scripted.
package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Model names the server answers.
const (
	ModelHalf   = "scripted-half"
	ModelMarket = "scripted-market"
)

// Reasoning is the text of every reasoning it submits.
const Reasoning = "scripted answer, not a model"

// Tool names of the arena's forecasting protocol (internal/agent).
const (
	toolDetails = "getMarketDetails"
	toolSubmit  = "submitPredictions"
)

type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties struct {
					Predictions struct {
						MinItems int `json:"minItems"`
					} `json:"predictions"`
				} `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// Handler serves POST /v1/chat/completions (and /chat/completions).
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", chat)
	mux.HandleFunc("POST /chat/completions", chat)
	return mux
}

func chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		fail(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		fail(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if req.Model != ModelHalf && req.Model != ModelMarket {
		fail(w, http.StatusNotFound, fmt.Sprintf("scripted server: unknown model %q (it answers %s and %s)", req.Model, ModelHalf, ModelMarket))
		return
	}
	k := 0
	for _, t := range req.Tools {
		if t.Function.Name == toolSubmit {
			k = t.Function.Parameters.Properties.Predictions.MinItems
		}
	}
	if k < 1 {
		fail(w, http.StatusBadRequest, "scripted server: the request offers no "+toolSubmit+" tool with minItems; it answers only the arena's forecasting protocol")
		return
	}
	// Prices shown so far, by question index, from the details tool's answers.
	prices := map[int]float64{}
	asked := false
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		asked = true
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			continue
		}
		var d struct {
			Index int      `json:"index"`
			Price *float64 `json:"price"`
		}
		if json.Unmarshal([]byte(s), &d) == nil && d.Price != nil {
			prices[d.Index] = *d.Price
		}
	}
	if req.Model == ModelMarket && !asked {
		calls := make([]toolCall, k)
		for i := range calls {
			calls[i] = toolCall{ID: "call_" + strconv.Itoa(i), Name: toolDetails, Arguments: fmt.Sprintf(`{"index":%d}`, i)}
		}
		reply(w, req.Model, calls)
		return
	}
	preds, reasons := make([]string, k), make([]string, k)
	for i := range preds {
		p := 0.5
		if v, ok := prices[i]; ok && req.Model == ModelMarket {
			p = v
		}
		preds[i] = strconv.Itoa(int(math.Round(p * 10000)))
		reasons[i] = strconv.Quote(Reasoning)
	}
	reply(w, req.Model, []toolCall{{ID: "call_submit", Name: toolSubmit,
		Arguments: `{"predictions":[` + strings.Join(preds, ",") + `],"reasoning":[` + strings.Join(reasons, ",") + `]}`}})
}

type toolCall struct{ ID, Name, Arguments string }

func reply(w http.ResponseWriter, model string, calls []toolCall) {
	var tc []map[string]any
	for _, c := range calls {
		tc = append(tc, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "scripted", "object": "chat.completion", "model": model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tc}}},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

// Registry is an agents file (the examples/agents.json format) of the two
// scripted models at baseURL, with a training cutoff of cutoff
// (YYYY-MM-DD) so the contamination guard lets them forecast the rounds
// due after it.
func Registry(baseURL, cutoff string) []byte {
	agent := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"name":%q,"provider":"local","model":%q,"base_url":%q,"input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":%q}`,
			id, id+" (scripted, not a model)", id, baseURL, cutoff)
	}
	return []byte(`{"agents":[` + agent(ModelHalf) + `,` + agent(ModelMarket) + `]}`)
}
