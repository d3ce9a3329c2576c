package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/trading"
)

// apiOp documents one API route. The OpenAPI document lists exactly the
// documented routes the server registered (a disabled track's routes are
// absent from both), and a test checks that every registered /api/v1 route
// is documented.
type apiOp struct {
	Method, Path string
	Summary      string
	Query        []apiParam // the query parameters: no other is accepted
	Body         any        // request body type, nil for none
	Response     any        // 200/201 response body type
	Media        []string   // media types of a non-JSON 200 response (a text body) instead of Response
	Status       int        // success status; 0 means 200
	Admin        bool       // needs the admin bearer token
}

// apiParam declares a query parameter of a route, once: the OpenAPI
// document describes it from the declaration (required, type, values,
// default, example), and checkQuery refuses a request that names a
// parameter its route does not declare, lacks a required one, or gives a
// value outside the declared type or values. Handlers read integers
// through queryInt, which knows the declared default.
type apiParam struct {
	Name     string
	Desc     string
	Required bool
	Int      bool // an integer from Min to Max; otherwise a string
	Min, Max int64
	Enum     []string // the values allowed, when a fixed list
	Format   string   // of a string (date-time)
	Default  string   // the value when absent or empty
	Example  string   // a value the route accepts (with its required parameters and With)
	// With is the query (name=value&…) of other parameters this one
	// applies only with, e.g. "track=trading"; alone it answers 400.
	With string
}

func qInt(name string, lo, hi int64, def, example, desc string) apiParam {
	return apiParam{Name: name, Int: true, Min: lo, Max: hi, Default: def, Example: example, Desc: desc}
}

// qEnum declares a parameter of fixed values; its example is the first
// value that is not the default.
func qEnum(name string, values []string, def, desc string) apiParam {
	ex := values[0]
	if ex == def {
		ex = values[1]
	}
	return apiParam{Name: name, Enum: values, Default: def, Example: ex, Desc: desc}
}

func qString(name, example, desc string) apiParam {
	return apiParam{Name: name, Example: example, Desc: desc}
}

func (p apiParam) required() apiParam { p.Required = true; return p }

func (p apiParam) with(query string) apiParam {
	p.With = query
	p.Desc += " (only with " + query + ")"
	return p
}

func (p apiParam) not(query string) apiParam {
	p.Desc += " (not with " + query + ")"
	return p
}

// Values of the enumerated parameters (the handlers act on the same lists
// and constants).
var (
	roundStatuses     = []string{arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated}
	cohortStatuses    = []string{string(arena.CohortActive), string(arena.CohortCompleted)}
	marketStatuses    = []string{string(arena.StatusOpen), string(arena.StatusClosed), string(arena.StatusResolved)}
	leaderboardTracks = []string{"forecast", "trading", "backtest"}
	tradingSorts      = trading.Sorts
)

// Parameters several routes share.
var (
	pageLimit = qInt("limit", 1, 1000, "100", "10", "page size")
	window    = qEnum("window", windowNames, "all",
		"rounds whose commit deadline, and cohorts whose week start, lie at most this far back")
	category = qString("category", "sports", "only the forecasts of this market category (one of the leaderboard page's categories; 400 for another)")
)

var apiOps = []apiOp{
	{Method: "GET", Path: "/api/v1/openapi.json", Summary: "This OpenAPI document", Response: map[string]any{}},
	{Method: "GET", Path: "/api/v1/markets", Summary: "Markets by volume", Query: []apiParam{
		qString("source", arena.SourcePolymarket, "only the markets of this source"),
		qEnum("status", marketStatuses, "", "only the markets of this status"),
		qInt("limit", 0, math.MaxInt64, "100", "10", "at most this many markets; 0: all")},
		Response: []arena.MarketJSON{}},
	{Method: "GET", Path: "/api/v1/markets/{id}", Summary: "One market", Response: arena.MarketJSON{}},
	{Method: "GET", Path: "/api/v1/leaderboard", Summary: "Leaderboard of a track, best first (cursor pagination: Link rel=next, X-Total-Count): " +
		"an object naming the track (and, for the forecast and backtest tracks, the scoring method's version and configuration digest) whose rows are paged", Query: []apiParam{
		qEnum("track", leaderboardTracks, "forecast", "the track"),
		qEnum("sort", tradingSorts, "return", "order of the trading track: mean return, or Brier score lowest first").with("track=trading"),
		window.not("track=backtest"),
		category.with("track=forecast"),
		pageLimit,
		qInt("cursor", 0, math.MaxInt64, "0", "10", "how many rows earlier pages held: the position of the last row of the previous page, as the Link header's next URL gives it")},
		Response: BoardJSON{}},
	{Method: "GET", Path: "/api/v1/domain", Summary: "EIP-712 signing domain", Response: forecast.DomainJSON{}},
	{Method: "GET", Path: "/api/v1/rounds", Summary: "Rounds, newest first (cursor pagination: Link rel=next)", Query: []apiParam{
		qEnum("status", roundStatuses, "", "only the rounds of this status"),
		pageLimit,
		qInt("cursor", 0, math.MaxInt64, "0", "5", "the rounds below this round id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
		Response: []forecast.RoundJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}", Summary: "One round", Response: forecast.RoundJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/scores", Summary: "Per-agent scores of a triggered round", Response: []forecast.ScoreJSON{}},
	{Method: "GET", Path: "/api/v1/agents/{address}/nonce", Summary: "Next nonce of an agent", Response: forecast.NonceJSON{}},
	{Method: "GET", Path: "/api/v1/agents/{address}/profile", Summary: "An agent's profile: display name, organisation, model, homepage, description, " +
		"and its version (0 before the first signed update; the next update signs version + 1)", Response: forecast.ProfileJSON{}},
	{Method: "POST", Path: "/api/v1/agents/{address}/profile", Summary: "Register or update the agent's profile, signed by the agent (EIP-712 Profile, " +
		"see docs/protocol.md); 409 profile_name_taken when another agent or a baseline holds the name or one it passes for (ignoring case, " +
		"compatibility forms and look-alike characters), 409 profile_version_invalid unless version is the stored one + 1, " +
		"429 too_many_profile_updates with Retry-After past the agent's updates a day; logged in the tamper-evident log",
		Body: forecast.ProfileRequest{}, Response: forecast.ProfileJSON{}},
	{Method: "POST", Path: "/api/v1/rounds/{id}/commits", Summary: "Submit a signed commit; 409 round_full when the round admits no more agents (final for the round), " +
		"429 too_many_new_agents or rate_limited with Retry-After", Body: forecast.CommitRequest{}, Response: forecast.SubmissionJSON{}, Status: 201},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reveals", Summary: "Submit a signed reveal", Body: forecast.RevealRequest{}, Response: forecast.SubmissionJSON{}, Status: 201},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reasoning", Summary: "Upload reasoning matching the committed hash", Body: forecast.ReasoningRequest{}, Response: map[string]any{}, Status: 201},
	{Method: "GET", Path: "/api/v1/rounds/{id}/reasoning/{agent}", Summary: "An agent's reasoning, after the trigger", Response: map[string]any{}},
	{Method: "POST", Path: "/api/v1/admin/rounds", Summary: "Create a round", Body: forecast.CreateRoundRequest{}, Response: forecast.RoundJSON{}, Status: 201, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/rounds/{id}/trigger", Summary: "Freeze outcomes and score a round", Response: []forecast.ScoreJSON{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/markets/{id}/resolve", Summary: "Resolve a market by hand (YES, NO or VOID)", Body: struct {
		Outcome string `json:"outcome"`
	}{}, Response: arena.MarketJSON{}, Admin: true},
	{Method: "GET", Path: "/api/v1/rounds/{id}/markets/{index}", Summary: "A market of a round as the round tools show it now", Response: RoundMarketContextJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/traces/{agent}", Summary: "What an LLM agent was shown and answered, after the trigger", Response: TraceJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts", Summary: "Trading cohorts, newest week first (cursor pagination: Link rel=next, X-Total-Count)", Query: []apiParam{
		qEnum("status", cohortStatuses, "", "only the cohorts of this status"),
		pageLimit,
		qInt("offset", 0, math.MaxInt32, "0", "1", "skip this many cohorts (after the cursor); use cursor instead"),
		qInt("cursor", 0, math.MaxInt64, "0", "2", "the cohorts after this cohort id (the last of the previous page, as the Link header's next URL gives it) in the list's order, "+
			"whatever its status now; 0: from the newest; 400 for an id no cohort has")},
		Response: []trading.CohortSummaryJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}", Summary: "A cohort: standings, lineup, decisions", Response: CohortDetailJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}/snapshots", Summary: "Portfolio curves of a cohort", Query: []apiParam{
		qString("agent", "trader-00", "only this agent's curve"),
		qEnum("step", stepNames, "10m", "keep the last snapshot of each interval of this length")},
		Response: []CurveJSON{}},
	{Method: "GET", Path: "/api/v1/decisions/{id}", Summary: "A trading decision: prompt, responses, action, executions", Response: DecisionJSON{}},
	{Method: "GET", Path: "/api/v1/oracle/queue", Summary: "Markets waiting for a human arbiter, oldest first", Response: []arena.OracleResolution{}},
	{Method: "GET", Path: "/api/v1/oracle/accuracy", Summary: "The oracle's accuracy against human audits: markets an arbiter decided after escalation (the panel's answer against the arbiter's) and auto-resolved markets a human re-resolved; by architecture and by resolver, with Wilson 95% intervals", Response: oracle.Accuracy{}},
	{Method: "GET", Path: "/api/v1/oracle/resolutions/{market}", Summary: "A market's oracle resolutions: evidence, votes, composite, policy, human decisions", Response: OracleResolutionsJSON{}},
	{Method: "POST", Path: "/api/v1/admin/oracle/queue/{market}", Summary: "An arbiter's decision on an escalated or disputed market, or a re-resolution with a reason (re-settles trading positions and re-scores forecast rounds that froze the market, in the same transaction); a re-resolution names the resolution it revises (revises; 400 revises_required without), and answers 409 resolution_changed when another was recorded since; one to the decision in force changes nothing", Body: OracleDecideRequest{}, Response: arena.OracleResolution{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/flag", Summary: "Mark an unresolved market ambiguous: it is resolved through the oracle (not the source) before either track settles or scores it; 409 when resolved (dispute or re-resolve instead), already flagged or with the oracle", Body: OracleFlagRequest{}, Response: arena.OracleFlag{}, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/dispute", Summary: "Dispute a market's resolution by its source (who and why, kept for audit): the oracle or an arbiter then decides it, and the decision is applied as a re-resolution (both tracks re-score and re-settle); 409 when unresolved (flag it instead), resolved by the oracle (re-resolve it instead) or already disputed", Body: OracleDisputeRequest{}, Response: arena.OracleDispute{}, Admin: true},
	{Method: "GET", Path: "/api/v1/oracle/disputes", Summary: "Markets whose resolution by their source an admin disputed, oldest first: who, when, why and the resolution disputed", Response: []arena.OracleDispute{}},
	{Method: "GET", Path: "/api/v1/pages/home", Summary: "Data of the home page", Response: HomeJSON{}},
	{Method: "GET", Path: "/api/v1/pages/leaderboard", Summary: "Data of the leaderboard page", Query: []apiParam{
		qEnum("sort", slices.Sorted(maps.Keys(forecastSorts)), "rank", "column the forecast table is ordered by"),
		qEnum("dir", []string{"asc", "desc"}, "", "direction of the order (default: the column's better end first)"),
		qString("q", "agent", "only the agents whose name or address contains this text"),
		qEnum("preliminary", []string{"show", "hide"}, "show", "hide: leave out agents with too few forecasts to rank"),
		qEnum("columns", []string{"all"}, "", "all: every column, as the page shows them on request"),
		window,
		category,
		qEnum("trading_sort", tradingSorts, "return", "order of the trading table: mean return, or Brier score lowest first")},
		Response: LeaderboardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/rounds/{id}", Summary: "Data of a round page", Response: RoundPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/agents/{agent}", Summary: "Data of an agent page", Response: AgentPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/markets", Summary: "Data of the question browser: markets newest first with status, category, source, close time, current price, " +
		"resolution and how many agents' forecasts of each are public (cursor pagination: Link rel=next); an unknown category or source answers 400 naming those stored", Query: []apiParam{
		qEnum("status", marketStatuses, "", "only the markets of this status"),
		qString("category", "sports", "only the markets of this category (one of the page's categories)"),
		qString("source", arena.SourceSim, "only the markets of this source (one of the page's sources)"),
		qInt("limit", 1, 500, "50", "10", "page size"),
		qInt("cursor", 0, math.MaxInt64, "0", "5", "the markets below this market id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
		Response: MarketsPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/markets/{id}", Summary: "Data of a market page: the price history, and every agent's revealed forecast of it in scored rounds (never before the round's trigger) with the benchmark, best Brier first", Response: MarketPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/compare", Summary: "Data of the agent comparison: cumulative Alpha of each agent and the per-round Brier difference of each from the first; without agents, the agents to choose from", Query: []apiParam{
		qString("agents", "0x0000000000000000000000000000000000000001,0x0000000000000000000000000000000000000002", "2 to 4 agents, comma-separated, each by address or display name; 400 for an unknown, ambiguous or repeated one")},
		Response: ComparePageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/cohorts/{id}", Summary: "Data of a cohort page", Query: []apiParam{
		qEnum("range", rangeNames, "all", "the curves' time range, ending at the latest snapshot")},
		Response: CohortPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle", Summary: "Data of the oracle page: the arbitration queue, flagged markets, accuracy against human audits and the resolver leaderboard", Response: OraclePageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle/{id}", Summary: "Data of a market's oracle page: evidence, votes, architecture, policy, composite, human decisions, re-resolutions and re-scored rounds", Response: OracleMarketPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/methodology", Summary: "Data of the methodology page", Response: MethodologyJSON{}},
}

// pathExamples are examples of the path parameters, by name.
var pathExamples = map[string]string{"id": "1", "index": "0", "market": "1", "file": "rounds.csv",
	"agent": "0x0000000000000000000000000000000000000001", "address": "0x0000000000000000000000000000000000000001"}

// apiOpIndex maps each route pattern ("METHOD /path") to its
// declaration; built on first use, after the init functions that add to
// apiOps ran.
var apiOpIndex = sync.OnceValue(func() map[string]*apiOp {
	m := map[string]*apiOp{}
	for i := range apiOps {
		m[apiOps[i].Method+" "+apiOps[i].Path] = &apiOps[i]
	}
	return m
})

// apiOpOf returns the declaration of a route pattern, nil for an
// undocumented route.
func apiOpOf(pattern string) *apiOp { return apiOpIndex()[pattern] }

func (op *apiOp) param(name string) *apiParam {
	for i := range op.Query {
		if op.Query[i].Name == name {
			return &op.Query[i]
		}
	}
	return nil
}

// checkQuery refuses a query that does not follow op's declaration: a
// parameter op does not declare (unknown_parameter, so that nothing a
// client sends is silently ignored), one given twice, a value outside its
// type or values (invalid_parameter), a required one missing or empty
// (missing_parameter). An empty value stands for the default.
func (op *apiOp) checkQuery(r *http.Request) error {
	if op == nil {
		return nil // a page or probe: browsers' extra parameters are no error
	}
	q := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) {
		p, vs := op.param(name), q[name]
		if p == nil {
			names := "it takes none"
			if len(op.Query) > 0 {
				var ns []string
				for _, x := range op.Query {
					ns = append(ns, x.Name)
				}
				names = "its parameters: " + strings.Join(ns, ", ")
			}
			return arena.Rejectf(arena.EINVALID, "unknown_parameter", "query parameter %q does not apply to %s %s (%s)", clip(name), op.Method, op.Path, names)
		}
		if len(vs) > 1 {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "query parameter %s is given %d times: give it once", name, len(vs))
		}
		if err := p.check(vs[0]); err != nil {
			return err
		}
	}
	for _, p := range op.Query {
		if p.Required && q.Get(p.Name) == "" {
			return arena.Rejectf(arena.EINVALID, "missing_parameter", "query parameter %s is required: %s", p.Name, p.Desc)
		}
	}
	return nil
}

// values checks the parameters op declares on the request of an HTML
// page (the extra ones a browser may add are no error), so that the page
// and its JSON twin refuse the same values, and returns its integer
// parameters, the declared defaults filled in.
func (op *apiOp) values(r *http.Request) (map[string]int64, error) {
	q := r.URL.Query()
	ints := map[string]int64{}
	for _, p := range op.Query {
		v := q.Get(p.Name)
		if err := p.check(v); err != nil {
			return nil, err
		}
		if p.Int {
			if v == "" {
				v = p.Default
			}
			ints[p.Name], _ = strconv.ParseInt(v, 10, 64) // checked above
		}
	}
	return ints, nil
}

func (p *apiParam) check(v string) error {
	switch {
	case v == "":
	case p.Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < p.Min || n > p.Max {
			want := fmt.Sprintf("an integer from %d", p.Min)
			if p.Max < math.MaxInt64 {
				want += fmt.Sprintf(" to %d", p.Max)
			}
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want %s", p.Name, clip(v), want)
		}
	case p.Enum != nil && !slices.Contains(p.Enum, v):
		return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want %s", p.Name, clip(v), oneOf(p.Enum))
	case p.Format == "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", p.Name, clip(v))
		}
	}
	return nil
}

// oneOf lists values as "a, b or c".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// clip shortens a client's text echoed in an error.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return strings.ToValidUTF8(s[:64], "") + "…"
}

// queryInt is the integer parameter name of a request checkQuery passed,
// or its declared default; given says whether the request set it.
func queryInt(r *http.Request, name string) (n int64, given bool) {
	v := r.URL.Query().Get(name)
	given = v != ""
	if !given {
		if op := apiOpOf(r.Pattern); op != nil && op.param(name) != nil {
			v = op.param(name).Default
		}
	}
	n, _ = strconv.ParseInt(v, 10, 64) // checked by checkQuery
	return n, given
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
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"},
					"example": pathExamples[name]})
			}
		}
		for _, q := range op.Query {
			params = append(params, q.document())
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

// document is p as an OpenAPI parameter object.
func (p apiParam) document() map[string]any {
	sc := map[string]any{"type": "string"}
	switch {
	case p.Int:
		sc = map[string]any{"type": "integer", "minimum": p.Min}
		if p.Max < math.MaxInt64 {
			sc["maximum"] = p.Max
		}
	case p.Enum != nil:
		sc["enum"] = p.Enum
	case p.Format != "":
		sc["format"] = p.Format
	}
	if p.Default != "" {
		if p.Int {
			n, _ := strconv.ParseInt(p.Default, 10, 64)
			sc["default"] = n
		} else {
			sc["default"] = p.Default
		}
	}
	out := map[string]any{"name": p.Name, "in": "query", "required": p.Required, "description": p.Desc, "schema": sc}
	if p.Example != "" {
		out["example"] = p.Example
		if p.Int {
			n, _ := strconv.ParseInt(p.Example, 10, 64)
			out["example"] = n
		}
	}
	if p.With != "" {
		out["x-with"] = p.With
	}
	return out
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
	dollarsType = reflect.TypeOf(arena.Dollars(0))
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
