// Package llmtest is a local OpenAI-compatible chat-completions server for
// tests. Each model name gets a scripted sequence of replies (status, body,
// delay, headers); every request is recorded with its decoded body so tests
// can assert what was sent. It speaks the real wire format:
// POST {base}/chat/completions with a JSON body, answered by a
// chat.completion object or an {"error":{…}} object. MemStore is an
// in-memory store for the model-call cache.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer. With Body set it is sent verbatim;
// otherwise a chat.completion (Status < 400) or an error object is built
// from the other fields.
type Reply struct {
	Status int           // default 200
	Delay  time.Duration // wait before answering (ends early if the client gives up)
	Header map[string]string
	Body   string // raw body, overrides everything below

	Content string
	// NullContent sends "content": null (as reasoning models sometimes do).
	NullContent bool
	// Reasoning goes in ReasoningField ("reasoning" by default, or
	// "reasoning_content" as DeepSeek and vLLM name it).
	Reasoning      string
	ReasoningField string
	ToolCalls      []ToolCall
	FinishReason   string // default "stop" ("tool_calls" with ToolCalls)
	Model          string // reported model; default the requested one
	PromptTokens   int64
	OutputTokens   int64
	// BilledUSD > 0 reports the call's cost in usage.cost, as OpenRouter
	// does.
	BilledUSD float64

	// ErrorMessage is the message of an error reply (Status ≥ 400).
	ErrorMessage string

	// TruncateAfter > 0 cuts the reply off: the status line and headers
	// announce the full Content-Length, only the first TruncateAfter bytes
	// of the body are sent, then the connection is closed (a connection
	// reset mid-body).
	TruncateAfter int
}

// ToolCall is a scripted function call.
type ToolCall struct {
	ID, Name, Arguments string
}

// OK is a 200 reply with content and token usage.
func OK(content string, promptTokens, outputTokens int64) Reply {
	return Reply{Content: content, PromptTokens: promptTokens, OutputTokens: outputTokens}
}

// Fail is an error reply with an OpenAI-style error body.
func Fail(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// Request is one recorded request.
type Request struct {
	Model         string
	Authorization string
	Header        http.Header
	Body          ChatRequest
	Raw           []byte
	At            time.Time
}

// ChatRequest is the decoded request body (the fields tests look at).
type ChatRequest struct {
	Model       string          `json:"model"`
	Messages    []ChatMessage   `json:"messages"`
	Temperature *float64        `json:"temperature"`
	MaxTokens   *int64          `json:"max_tokens"`
	Tools       json.RawMessage `json:"tools"`
	ToolChoice  json.RawMessage `json:"tool_choice"`
}

// ChatMessage is a decoded request message. Content is a string for the
// messages this project sends.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
}

// Text returns the message content as a string ("" when absent or not a
// string).
func (m ChatMessage) Text() string {
	var s string
	_ = json.Unmarshal(m.Content, &s)
	return s
}

// Server is the fake endpoint. Use BaseURL as the client's base URL.
type Server struct {
	*httptest.Server
	BaseURL string

	mu        sync.Mutex
	scripts   map[string][]Reply
	handlers  map[string]func(ChatRequest) Reply
	requests  []Request
	exhausted int
	seq       int
}

// New starts a server closed at the end of the test.
func New(t testing.TB) *Server {
	s := &Server{scripts: map[string][]Reply{}, handlers: map[string]func(ChatRequest) Reply{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.Server = httptest.NewServer(mux)
	s.BaseURL = s.Server.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Script appends replies for a model; each request consumes one. A model
// whose script is exhausted gets HTTP 500 "llmtest: script exhausted".
func (s *Server) Script(model string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[model] = append(s.scripts[model], replies...)
}

// Handle answers a model's requests with f once its script is empty, so
// tests can reply according to what was asked.
func (s *Server) Handle(model string, f func(ChatRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[model] = f
}

// Requests returns the recorded requests for model ("" for all).
func (s *Server) Requests(model string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if model == "" || r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// Exhausted counts requests that found no scripted reply.
func (s *Server) Exhausted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exhausted
}

// Remaining counts unconsumed scripted replies for model.
func (s *Server) Remaining(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scripts[model])
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var body ChatRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Model: body.Model, Authorization: r.Header.Get("Authorization"),
		Header: r.Header.Clone(), Body: body, Raw: raw, At: time.Now()})
	var rep Reply
	found := false
	if q := s.scripts[body.Model]; len(q) > 0 {
		rep, s.scripts[body.Model] = q[0], q[1:]
		found = true
	}
	h := s.handlers[body.Model]
	if !found && h == nil {
		s.exhausted++
	}
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if !found {
		if h == nil {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("llmtest: script exhausted for model %q", body.Model))
			return
		}
		rep = h(body)
	}

	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	if status >= 400 {
		msg := rep.ErrorMessage
		if msg == "" {
			msg = http.StatusText(status)
		}
		writeError(w, status, msg)
		return
	}
	if rep.TruncateAfter > 0 {
		b, _ := json.Marshal(completion(body.Model, seq, rep))
		truncate(w, status, b, rep.TruncateAfter)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(completion(body.Model, seq, rep))
}

// truncate writes a response announcing len(body) bytes, sends only the
// first n and closes the connection under the client.
func truncate(w http.ResponseWriter, status int, body []byte, n int) {
	if n > len(body) {
		n = len(body)
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "llmtest: hijack: "+err.Error())
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", status, http.StatusText(status), len(body))
	buf.Write(body[:n])
	buf.Flush()
}

// completion builds a chat.completion object as OpenAI-compatible servers
// return it.
func completion(model string, seq int, rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if rep.NullContent {
		msg["content"] = nil
	}
	if rep.Reasoning != "" {
		f := rep.ReasoningField
		if f == "" {
			f = "reasoning"
		}
		msg[f] = rep.Reasoning
	}
	finish := rep.FinishReason
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for i, tc := range rep.ToolCalls {
			id := tc.ID
			if id == "" {
				id = "call_" + strconv.Itoa(i)
			}
			calls = append(calls, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
		if finish == "" {
			finish = "tool_calls"
		}
	}
	if finish == "" {
		finish = "stop"
	}
	if rep.Model != "" {
		model = rep.Model
	}
	usage := map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.OutputTokens,
		"total_tokens": rep.PromptTokens + rep.OutputTokens}
	if rep.BilledUSD > 0 {
		usage["cost"] = rep.BilledUSD
	}
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", seq),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   usage,
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": errorType(status), "param": nil, "code": nil}})
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		return "invalid_request_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}
