package web

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/oracle"
)

// apiOp documents one API route. The OpenAPI document lists exactly the
// documented routes the server registered (a disabled track's routes are
// absent from both), and a test checks that every registered /api/v1 route
// is documented.
type apiOp struct {
	Method, Path string
	Summary      string
	Query        []string // query parameter names
	Body         any      // request body type, nil for none
	Response     any      // 200/201 response body type
	Media        []string // media types of a non-JSON 200 response (a text body) instead of Response
	Status       int      // success status; 0 means 200
	Admin        bool     // needs the admin bearer token
}

var apiOps = []apiOp{
	{Method: "GET", Path: "/api/v1/openapi.json", Summary: "This OpenAPI document", Response: map[string]any{}},
	{Method: "GET", Path: "/api/v1/markets", Summary: "Markets by volume", Query: []string{"source", "status", "limit"}, Response: []MarketJSON{}},
	{Method: "GET", Path: "/api/v1/markets/{id}", Summary: "One market", Response: MarketJSON{}},
	{Method: "GET", Path: "/api/v1/leaderboard", Summary: "Leaderboard of a track; window (7d, 30d, 90d, all) filters the forecast track by commit deadline and the trading track by cohort start; category filters the forecast track", Query: []string{"track", "sort", "window", "category"}, Response: []forecast.LeaderboardJSON{}},
	{Method: "GET", Path: "/api/v1/domain", Summary: "EIP-712 signing domain", Response: forecast.DomainJSON{}},
	{Method: "GET", Path: "/api/v1/rounds", Summary: "Rounds, newest first (cursor pagination: Link rel=next)", Query: []string{"status", "limit", "cursor"}, Response: []forecast.RoundJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}", Summary: "One round", Response: forecast.RoundJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/scores", Summary: "Per-agent scores of a triggered round", Response: []forecast.ScoreJSON{}},
	{Method: "GET", Path: "/api/v1/agents/{address}/nonce", Summary: "Next nonce of an agent", Response: forecast.NonceJSON{}},
	{Method: "POST", Path: "/api/v1/rounds/{id}/commits", Summary: "Submit a signed commit", Body: forecast.CommitRequest{}, Response: forecast.SubmissionJSON{}, Status: 201},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reveals", Summary: "Submit a signed reveal", Body: forecast.RevealRequest{}, Response: forecast.SubmissionJSON{}, Status: 201},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reasoning", Summary: "Upload reasoning matching the committed hash", Body: forecast.ReasoningRequest{}, Response: map[string]any{}, Status: 201},
	{Method: "GET", Path: "/api/v1/rounds/{id}/reasoning/{agent}", Summary: "An agent's reasoning, after the trigger", Response: map[string]any{}},
	{Method: "POST", Path: "/api/v1/admin/rounds", Summary: "Create a round", Body: forecast.CreateRoundRequest{}, Response: forecast.RoundJSON{}, Status: 201, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/rounds/{id}/trigger", Summary: "Freeze outcomes and score a round", Response: []forecast.ScoreJSON{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/markets/{id}/resolve", Summary: "Resolve a market by hand (YES, NO or VOID)", Body: struct {
		Outcome string `json:"outcome"`
	}{}, Response: MarketJSON{}, Admin: true},
	{Method: "GET", Path: "/api/v1/rounds/{id}/markets/{index}", Summary: "A market of a round as the round tools show it now", Response: RoundMarketContextJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/traces/{agent}", Summary: "What an LLM agent was shown and answered, after the trigger", Response: TraceJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts", Summary: "Trading cohorts, newest week first (cursor pagination: Link rel=next)", Query: []string{"status", "limit", "offset", "cursor"}, Response: []CohortSummaryJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}", Summary: "A cohort: standings, lineup, decisions", Response: CohortDetailJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}/snapshots", Summary: "Portfolio curves of a cohort", Query: []string{"agent", "step"}, Response: []CurveJSON{}},
	{Method: "GET", Path: "/api/v1/decisions/{id}", Summary: "A trading decision: prompt, responses, action, executions", Response: DecisionJSON{}},
	{Method: "GET", Path: "/api/v1/oracle/queue", Summary: "Markets waiting for a human arbiter, oldest first", Response: []arena.OracleResolution{}},
	{Method: "GET", Path: "/api/v1/oracle/accuracy", Summary: "The oracle's accuracy against human audits: markets an arbiter decided after escalation (the panel's answer against the arbiter's) and auto-resolved markets a human re-resolved; by architecture and by resolver, with Wilson 95% intervals", Response: oracle.Accuracy{}},
	{Method: "GET", Path: "/api/v1/oracle/resolutions/{market}", Summary: "A market's oracle resolutions: evidence, votes, composite, policy, human decisions", Response: OracleResolutionsJSON{}},
	{Method: "POST", Path: "/api/v1/admin/oracle/queue/{market}", Summary: "An arbiter's decision on an escalated or disputed market, or a re-resolution with a reason (re-settles trading positions and re-scores forecast rounds that froze the market, in the same transaction); 409 when another resolution was recorded since the one it revises (revises, or the latest when the request is read); a re-resolution to the decision in force changes nothing", Body: OracleDecideRequest{}, Response: arena.OracleResolution{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/flag", Summary: "Mark an unresolved market ambiguous: it is resolved through the oracle (not the source) before either track settles or scores it; 409 when resolved (dispute or re-resolve instead), already flagged or with the oracle", Body: OracleFlagRequest{}, Response: arena.OracleFlag{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/dispute", Summary: "Dispute a market's resolution by its source (who and why, kept for audit): the oracle or an arbiter then decides it, and the decision is applied as a re-resolution (both tracks re-score and re-settle); 409 when unresolved (flag it instead), resolved by the oracle (re-resolve it instead) or already disputed", Body: OracleDisputeRequest{}, Response: arena.OracleDispute{}, Admin: true},
	{Method: "GET", Path: "/api/v1/oracle/disputes", Summary: "Markets whose resolution by their source an admin disputed, oldest first: who, when, why and the resolution disputed", Response: []arena.OracleDispute{}},
	{Method: "GET", Path: "/api/v1/pages/home", Summary: "Data of the home page", Response: HomeJSON{}},
	{Method: "GET", Path: "/api/v1/pages/leaderboard", Summary: "Data of the leaderboard page; window (7d, 30d, 90d, all) filters rounds by commit deadline and cohorts by week start; category filters the forecast track", Query: []string{"sort", "dir", "q", "provisional", "window", "category", "trading_sort"}, Response: LeaderboardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/rounds/{id}", Summary: "Data of a round page", Response: RoundPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/agents/{agent}", Summary: "Data of an agent page", Response: AgentPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/markets/{id}", Summary: "Data of a market page", Response: MarketPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/cohorts/{id}", Summary: "Data of a cohort page", Query: []string{"range"}, Response: CohortPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle", Summary: "Data of the oracle page: the arbitration queue, flagged markets, accuracy against human audits and the resolver leaderboard", Response: OraclePageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle/{id}", Summary: "Data of a market's oracle page: evidence, votes, architecture, policy, composite, human decisions, re-resolutions and re-scored rounds", Response: OracleMarketPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/methodology", Summary: "Data of the methodology page", Response: MethodologyJSON{}},
}

// Routes lists the method and path of every route registered through the
// server's error-returning handlers, in registration order.
func (s *Server) Routes() []string { return slices.Clone(s.routes) }

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	return s.writeJSON(w, r, s.OpenAPI())
}

// OpenAPI builds the OpenAPI 3.1 document of the registered API routes.
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	g.defs["Error"] = g.schema(reflect.TypeOf(ErrorJSON{}))
	paths := map[string]any{}
	for _, op := range apiOps {
		if !slices.Contains(s.routes, op.Method+" "+op.Path) {
			continue
		}
		o := map[string]any{"summary": op.Summary, "operationId": operationID(op)}
		var params []any
		for _, seg := range strings.Split(op.Path, "/") {
			if strings.HasPrefix(seg, "{") {
				params = append(params, map[string]any{"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			}
		}
		for _, q := range op.Query {
			params = append(params, map[string]any{"name": q, "in": "query", "required": false, "schema": map[string]any{"type": "string"}})
		}
		if params != nil {
			o["parameters"] = params
		}
		if op.Body != nil {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(op.Body))}}}
		}
		status := "200"
		if op.Status != 0 {
			status = "201"
		}
		errResp := map[string]any{"description": "error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
		content := map[string]any{}
		if op.Media != nil {
			for _, m := range op.Media {
				content[m] = map[string]any{"schema": map[string]any{"type": "string"}}
			}
		} else {
			content["application/json"] = map[string]any{"schema": g.schema(reflect.TypeOf(op.Response))}
		}
		o["responses"] = map[string]any{
			status:    map[string]any{"description": "success", "content": content},
			"default": errResp,
		}
		if op.Admin {
			o["security"] = []any{map[string]any{"admin": []any{}}}
		}
		item, _ := paths[op.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = o
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Forecast Arena API", "version": "1",
			"description": "Read endpoints answer JSON with an ETag (send If-None-Match for 304); errors are {\"error\":{\"code\",\"message\"}}."},
		"paths": paths,
		"components": map[string]any{
			"schemas":         g.defs,
			"securitySchemes": map[string]any{"admin": map[string]any{"type": "http", "scheme": "bearer"}},
		},
	}
}

func operationID(op apiOp) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.Method))
	for _, seg := range strings.Split(strings.TrimPrefix(op.Path, "/api/v1/"), "/") {
		seg = strings.Trim(seg, "{}")
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '.' || r == '_' || r == '-' }) {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// schemaGen derives JSON Schemas (2020-12, as OpenAPI 3.1 uses) from the
// wire types, so the document cannot drift from what the handlers encode.
type schemaGen struct{ defs map[string]any }

var (
	timeType    = reflect.TypeOf(time.Time{})
	rawType     = reflect.TypeOf(json.RawMessage{})
	dollarsType = reflect.TypeOf(Dollars(0))
	durType     = reflect.TypeOf(arena.Duration(0))
	marshaler   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case rawType:
		return map[string]any{}
	case dollarsType:
		return map[string]any{"type": "number", "description": "US dollars, exact to the micro-dollar"}
	case durType:
		return map[string]any{"type": "string", "description": "Go duration, e.g. 1h30m"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.schema(t.Elem())
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": []any{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Struct:
		if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
			return map[string]any{}
		}
		name := t.Name()
		if name != "" {
			if _, ok := g.defs[name]; ok {
				return map[string]any{"$ref": "#/components/schemas/" + name}
			}
			g.defs[name] = map[string]any{} // placeholder: recursive types end here
		}
		props := map[string]any{}
		var required []string
		g.fields(t, props, &required)
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			slices.Sort(required)
			s["required"] = required
		}
		if name == "" {
			return s
		}
		g.defs[name] = s
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// fields adds t's JSON fields to props. A field without omitempty (or
// omitzero) is required: encoding/json always writes it, and a request
// body the handlers accept needs it.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required) // embedded: its fields are promoted
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			*required = append(*required, name)
		}
	}
}
