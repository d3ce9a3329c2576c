package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
)

// Question is what the oracle resolves.
type Question struct {
	ID       string
	Text     string
	Criteria string
	Category string
	Series   string
	// Cutoff is the resolution date: evidence published more than a day
	// later is not shown.
	Cutoff time.Time
}

// EvidenceQuery is the retriever query for q.
func (q Question) EvidenceQuery() arena.EvidenceQuery {
	return arena.EvidenceQuery{QuestionID: q.ID, Question: q.Text, Criteria: q.Criteria, Cutoff: q.Cutoff}
}

// Peer is another resolver's round-1 answer as shown in round 2: no name,
// no model, only what it said.
type Peer struct {
	Decision   arena.OracleDecision `json:"decision"`
	Confidence float64              `json:"confidence"`
	Reasoning  string               `json:"reasoning"`
}

// Resolver is one panel member: a model behind an llm.Completer (usually
// the llm.Chain over a client with the retry policy and a cache).
type Resolver struct {
	ID        string
	Completer llm.Completer
	// Reasks is how many times output that does not parse is sent back
	// with the parse error (default 1; negative for none).
	Reasks int

	// format is the first response format to try: 0 JSON schema, 1 JSON
	// object, 2 none. It only moves forward, when an endpoint rejects a
	// format with 400/422, so later calls skip the rejected one.
	format atomic.Int32
}

var formats = []*llm.ResponseFormat{
	{Type: llm.FormatJSONSchema, Name: "oracle_resolution", Strict: true, Schema: json.RawMessage(answerSchema)},
	{Type: llm.FormatJSONObject},
	nil,
}

const answerSchema = `{"type":"object","properties":{"decision":{"type":"string","enum":["YES","NO","TOO_EARLY"]},"confidence":{"type":"number","minimum":0,"maximum":1},"reasoning":{"type":"string"}},"required":["decision","confidence","reasoning"],"additionalProperties":false}`

// formatRejected reports an endpoint refusing the requested response
// format (bad request), as opposed to a transport or auth failure.
func formatRejected(err error) bool {
	var le *llm.Error
	return errors.As(err, &le) && (le.Status == 400 || le.Status == 422)
}

// Resolve makes one resolver call (round 1 when peers is nil, round 2
// otherwise) and never fails: every error ends up in the vote's Failure.
func (r *Resolver) Resolve(ctx context.Context, q Question, pk arena.EvidencePacket, round int, peers []Peer) arena.OracleVote {
	sys := SystemPrompt
	user := UserPrompt(q, pk, peers)
	v := arena.OracleVote{Agent: r.ID, Round: round, System: sys, Prompt: user}
	allCached := true
	call := func(req llm.Request) (llm.Response, error) {
		resp, err := r.Completer.Complete(ctx, req)
		v.Calls++
		if err == nil {
			v.InputTokens += resp.InputTokens
			v.OutputTokens += resp.OutputTokens
			v.CostMicros += resp.CostMicros
			v.LatencyMS += resp.Latency.Milliseconds()
			allCached = allCached && resp.Cached
		} else {
			allCached = false
		}
		return resp, err
	}
	// Find a response format the endpoint accepts.
	var resp llm.Response
	var err error
	var rf *llm.ResponseFormat
	for lvl := int(r.format.Load()); lvl < len(formats); lvl++ {
		rf = formats[lvl]
		resp, err = call(llm.Request{System: sys, User: user, ResponseFormat: rf})
		if err == nil {
			break
		}
		if formatRejected(err) && lvl+1 < len(formats) {
			// Remember it for later calls; never move back.
			for cur := r.format.Load(); cur <= int32(lvl) && !r.format.CompareAndSwap(cur, int32(lvl+1)); cur = r.format.Load() {
			}
			continue
		}
		if errors.Is(err, llm.ErrCacheMiss) && lvl+1 < len(formats) {
			// Replaying: the first run may have stored its answer under
			// a later format.
			continue
		}
		break
	}
	if rf != nil {
		v.Format = rf.Type
	}
	if err != nil {
		v.Failure = failureText(err)
		return v
	}
	v.Raw = resp.Content
	a, perr := parseResponse(resp)
	reasks := r.Reasks
	if reasks == 0 {
		reasks = 1
	}
	for i := 0; perr != nil && i < reasks; i++ {
		follow := []llm.Message{
			{Role: llm.RoleAssistant, Content: clip(resp.Content, 500)},
			{Role: llm.RoleUser, Content: "Your reply could not be read (" + perr.Error() + "). Reply with only the JSON object {\"decision\": \"YES\"|\"NO\"|\"TOO_EARLY\", \"confidence\": 0..1, \"reasoning\": \"...\"}."},
		}
		resp, err = call(llm.Request{System: sys, User: user, Messages: follow, ResponseFormat: rf})
		if err != nil {
			v.Failure = failureText(err)
			v.Cached = false
			return v
		}
		v.Raw = resp.Content
		a, perr = parseResponse(resp)
	}
	if perr != nil {
		v.Failure = perr.Error()
		return v
	}
	v.Decision, v.Confidence, v.Reasoning = a.Decision, a.Confidence, a.Reasoning
	v.Cached = allCached
	return v
}

// parseResponse reads the vote from an answer, unless the answer is a
// refusal or was cut off by max_tokens: a cut-off vote may still parse,
// with a confidence or reasoning the model did not finish writing.
func parseResponse(resp llm.Response) (Answer, error) {
	if err := resp.Check(); err != nil {
		return Answer{}, err
	}
	return ParseAnswer(resp.Content)
}

func failureText(err error) string {
	s := err.Error()
	if strings.TrimSpace(s) == "" {
		return fmt.Sprintf("%T", err)
	}
	return s
}
