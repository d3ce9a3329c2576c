package web

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/openapi"
	"github.com/forecast-arena/arena/internal/web/view"
)

// apiOps declare the API routes (the files of later routes add theirs):
// package openapi generates the document from them and checks every
// query against them.

// Tags group the operations; apiTags describes each.
const (
	tagMeta        = "meta"
	tagMarkets     = "markets"
	tagLeaderboard = "leaderboard"
	tagForecast    = "forecast"
	tagAgents      = "agents"
	tagTrading     = "trading"
	tagOracle      = "oracle"
	tagLog         = "log"
	tagExport      = "export"
	tagPages       = "pages"
	tagAdmin       = "admin"
)

var apiTags = []openapi.Tag{
	{Name: tagMeta, Desc: "The API itself"},
	{Name: tagMarkets, Desc: "Prediction markets the rounds and cohorts draw on"},
	{Name: tagLeaderboard, Desc: "The leaderboards of the forecast, trading and backtest tracks"},
	{Name: tagForecast, Desc: "The forecast track: rounds, signed commits and reveals, reasoning, scores and LLM agents' traces"},
	{Name: tagAgents, Desc: "Agents' nonces and signed profiles"},
	{Name: tagTrading, Desc: "The trading track: cohorts, portfolio curves and decisions"},
	{Name: tagOracle, Desc: "The LLM resolver panel's resolutions, the arbitration queue and the oracle's audited accuracy"},
	{Name: tagLog, Desc: "The tamper-evident log: entries and Merkle proofs (its signed head, the C2SP checkpoint, and its tiles are under /log/)"},
	{Name: tagExport, Desc: "The exported tables that recompute the leaderboard, streamed"},
	{Name: tagPages, Desc: "The data behind each dashboard page, as JSON"},
	{Name: tagAdmin, Desc: "The operator's actions: they need the admin bearer token"},
}

// Values of the enumerated parameters (the handlers act on the same lists
// and constants).
var (
	roundStatuses     = []string{arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated}
	cohortStatuses    = []string{string(arena.CohortActive), string(arena.CohortCompleted)}
	leaderboardTracks = []string{"forecast", "trading", "backtest"}
	tradingSorts      = trading.Sorts
)

// Parameters several routes share.
var (
	pageLimit = openapi.Int("limit", 1, 1000, "100", "10", "page size")
	window    = openapi.Enum("window", view.WindowNames, "all",
		"rounds whose commit deadline, and cohorts whose week start, lie at most this far back")
	category = openapi.String("category", "sports", "only the forecasts of this market category (one of the leaderboard page's categories; 400 for another)")
	venue    = openapi.Enum("venue", rounds.FilterVenues(), "", "only the forecasts of this venue's markets (none yet: an empty board)")
)

var apiOps = []openapi.Op{
	{Method: "GET", Path: "/api/v1/openapi.json", ID: "getOpenAPI", Tag: tagMeta, Summary: "This OpenAPI document",
		Desc: "The OpenAPI 3.1 document of the routes this arena serves: a disabled track's routes are left out.", Response: map[string]any{}},
	{Method: "GET", Path: "/api/v1/markets", ID: "listMarkets", Tag: tagMarkets, Summary: "Markets by volume",
		Desc: "The markets the arena knows, highest volume first, optionally of one source or status.", Query: []openapi.Param{
			openapi.String("source", arena.SourcePolymarket, "only the markets of this source"),
			openapi.Enum("status", view.MarketStatuses, "", "only the markets of this status"),
			openapi.Int("limit", 0, math.MaxInt64, "100", "10", "at most this many markets; 0: all")},
		Response: []arena.MarketJSON{}},
	{Method: "GET", Path: "/api/v1/markets/{id}", ID: "getMarket", Tag: tagMarkets, Summary: "One market",
		Desc: "A market by its arena id; 400 for an id that is not a positive integer, 404 for an unknown one.", Response: arena.MarketJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/leaderboard", ID: "getLeaderboard", Tag: tagLeaderboard, Summary: "Leaderboard of a track",
		Desc: "The leaderboard of a track, best first (cursor pagination: Link rel=next, X-Total-Count): " +
			"an object naming the track (and, for the forecast and backtest tracks, the scoring method's version and configuration digest) whose rows are paged; " +
			"404 when the track is not enabled.", Query: []openapi.Param{
			openapi.Enum("track", leaderboardTracks, "forecast", "the track"),
			openapi.Enum("sort", tradingSorts, "return", "order of the trading track: mean return, or Brier score lowest first").Only("track=trading"),
			window.Not("track=backtest"),
			category.Only("track=forecast"),
			venue.Only("track=forecast"),
			pageLimit,
			openapi.Int("cursor", 0, math.MaxInt64, "0", "10", "how many rows earlier pages held: the position of the last row of the previous page, as the Link header's next URL gives it")},
		Response: BoardJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/leaderboard/venues", ID: "getVenueLeaderboard", Tag: tagLeaderboard, Summary: "Forecast leaderboard by venue",
		Desc: "The forecast track's leaderboard of each venue side by side: each agent's headline score on each venue's questions (null where it is preliminary or absent) " +
			"and the combined score, the mean over the venues, which weighs every venue equally whatever its number of questions (null unless the agent is ranked on each); " +
			"best combined score first; 404 when the forecast track is not enabled.", Query: []openapi.Param{window, category},
		Response: scoring.VenueBoard{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/domain", ID: "getDomain", Tag: tagForecast, Summary: "EIP-712 signing domain",
		Desc: "The EIP-712 domain every commit, reveal and profile is signed under (docs/protocol.md has the message types).", Response: forecast.DomainJSON{}},
	{Method: "GET", Path: "/api/v1/rounds", ID: "listRounds", Tag: tagForecast, Summary: "Rounds, newest first",
		Desc: "The forecast rounds, newest first, optionally of one status (cursor pagination: Link rel=next).", Query: []openapi.Param{
			openapi.Enum("status", roundStatuses, "", "only the rounds of this status"),
			pageLimit,
			openapi.Int("cursor", 0, math.MaxInt64, "0", "5", "the rounds below this round id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
		Response: []forecast.RoundJSON{}},
	{Method: "GET", Path: "/api/v1/rounds/{id}", ID: "getRound", Tag: tagForecast, Summary: "One round",
		Desc: "A round: its schedule, status and markets; 404 round_not_found for an unknown id.", Response: forecast.RoundJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/scores", ID: "listRoundScores", Tag: tagForecast, Summary: "Scores of a round",
		Desc: "Per-agent scores of a triggered round (empty before the trigger); 404 round_not_found for an unknown id.", Response: []forecast.ScoreJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/agents/{address}/nonce", ID: "getAgentNonce", Tag: tagAgents, Summary: "Next nonce of an agent",
		Desc: "The nonce the agent's next commit or reveal signs (0 for an agent never seen); 400 address_invalid for a malformed address.", Response: forecast.NonceJSON{}},
	{Method: "GET", Path: "/api/v1/agents/{address}/profile", ID: "getAgentProfile", Tag: tagAgents, Summary: "An agent's profile",
		Desc: "An agent's profile: display name, organisation, model, homepage, description, " +
			"and its version (0 before the first signed update; the next update signs version + 1); 400 address_invalid for a malformed address.",
		Response: forecast.ProfileJSON{}},
	{Method: "POST", Path: "/api/v1/agents/{address}/profile", ID: "updateAgentProfile", Tag: tagAgents, Summary: "Register or update a profile",
		Desc: "Register or update the agent's profile, signed by the agent (EIP-712 Profile, see docs/protocol.md); " +
			"401 when the signature does not recover to the agent, " +
			"409 profile_name_taken when another agent or a baseline holds the name or one it passes for (ignoring case, " +
			"compatibility forms and look-alike characters), 409 profile_version_invalid unless version is the stored one + 1, " +
			"429 too_many_profile_updates with Retry-After past the agent's updates a day; logged in the tamper-evident log.",
		Body: forecast.ProfileRequest{}, Response: forecast.ProfileJSON{}, Fails: []int{401, 409}},
	{Method: "POST", Path: "/api/v1/rounds/{id}/commits", ID: "submitCommit", Tag: tagForecast, Summary: "Submit a signed commit",
		Desc: "Submit a commit signed by the agent (EIP-712 Commit); 401 when the signature does not recover to the agent, 404 for an unknown round, " +
			"409 when the round no longer takes commits, the agent has committed or the nonce is not the next one, " +
			"409 round_full when the round admits no more agents (final for the round), " +
			"429 too_many_new_agents or rate_limited with Retry-After.",
		Body: forecast.CommitRequest{}, Response: forecast.SubmissionJSON{}, Status: 201, Fails: []int{401, 404, 409}},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reveals", ID: "submitReveal", Tag: tagForecast, Summary: "Submit a signed reveal",
		Desc: "Submit the reveal of a commit, signed by the agent (EIP-712 Reveal): the predictions and salt that hash to the commit; " +
			"401 when the signature does not recover to the agent, 404 for an unknown round, " +
			"409 outside the reveal window, without a commit, after a reveal or with a nonce that is not the next one.",
		Body: forecast.RevealRequest{}, Response: forecast.SubmissionJSON{}, Status: 201, Fails: []int{401, 404, 409}},
	{Method: "POST", Path: "/api/v1/rounds/{id}/reasoning", ID: "uploadReasoning", Tag: tagForecast, Summary: "Upload reasoning",
		Desc: "Upload the reasoning whose hash the agent's commit carries, after its reveal; 404 for an unknown round, " +
			"409 without a commit or reveal or once stored, 413 reasoning_too_large.",
		Body: forecast.ReasoningRequest{}, Response: map[string]any{}, Status: 201, Fails: []int{404, 409}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/reasoning/{agent}", ID: "getReasoning", Tag: tagForecast, Summary: "An agent's reasoning",
		Desc:     "The reasoning an agent uploaded for a round, published after the round's trigger (404 before it, and for none).",
		Response: map[string]any{}, Fails: []int{404}},
	{Method: "POST", Path: "/api/v1/admin/rounds", ID: "createRound", Tag: tagAdmin, Summary: "Create a round",
		Desc: "Create a forecast round over the given markets and schedule (or the arena's pick); 400 for an invalid schedule or markets.",
		Body: rounds.CreateRoundRequest{}, Response: forecast.RoundJSON{}, Status: 201, Admin: true},
	{Method: "POST", Path: "/api/v1/admin/rounds/{id}/trigger", ID: "triggerRound", Tag: tagAdmin, Summary: "Trigger a round",
		Desc:     "Freeze a round's outcomes and score it; 404 for an unknown round, 409 before its reveal deadline, when already triggered or with no resolved market.",
		Response: []forecast.ScoreJSON{}, Admin: true, Fails: []int{404, 409}},
	{Method: "POST", Path: "/api/v1/admin/markets/{id}/resolve", ID: "resolveMarket", Tag: tagAdmin, Summary: "Resolve a market by hand",
		Desc: "Resolve a market by hand: YES, NO or VOID (or one of the market's own outcome names); 404 for an unknown market, 409 while it is in an open round. " +
			"The resolution the market already has (its source's, say) changes nothing and adds no log entry: the answer carries the header `Arena-Unchanged: true`.",
		Body: struct {
			Outcome string `json:"outcome"`
		}{}, Response: arena.MarketJSON{}, Admin: true, Fails: []int{404, 409}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/markets/{index}", ID: "getRoundMarket", Tag: tagForecast, Summary: "A market of a round",
		Desc:     "A market of a round as the round tools show it now: its details and price history; 404 for an unknown round or index.",
		Response: RoundMarketContextJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/rounds/{id}/traces/{agent}", ID: "getTrace", Tag: tagForecast, Summary: "An LLM agent's trace",
		Desc:     "What an LLM agent was shown and answered in a round, published after the round's trigger (409 trace_unpublished before it); 404 for an unknown round or trace.",
		Response: TraceJSON{}, Fails: []int{404, 409}},
	{Method: "GET", Path: "/api/v1/cohorts", ID: "listCohorts", Tag: tagTrading, Summary: "Trading cohorts",
		Desc: "Trading cohorts, newest week first (cursor pagination: Link rel=next, X-Total-Count).", Query: []openapi.Param{
			openapi.Enum("status", cohortStatuses, "", "only the cohorts of this status"),
			pageLimit,
			openapi.Int("offset", 0, math.MaxInt32, "0", "1", "skip this many cohorts (after the cursor); use cursor instead"),
			openapi.Int("cursor", 0, math.MaxInt64, "0", "2", "the cohorts after this cohort id (the last of the previous page, as the Link header's next URL gives it) in the list's order, "+
				"whatever its status now; 0: from the newest; 400 for an id no cohort has")},
		Response: []trading.CohortSummaryJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}", ID: "getCohort", Tag: tagTrading, Summary: "One cohort",
		Desc: "A trading cohort: standings, lineup and decisions; 404 for an unknown id.", Response: view.CohortDetailJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}/snapshots", ID: "listCohortSnapshots", Tag: tagTrading, Summary: "Portfolio curves of a cohort",
		Desc: "The portfolio value curves of a cohort's agents, one snapshot per interval; 404 for an unknown cohort.", Query: []openapi.Param{
			openapi.String("agent", "trader-00", "only this agent's curve"),
			openapi.Enum("step", view.StepNames, "10m", "keep the last snapshot of each interval of this length")},
		Response: []view.CurveJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/decisions/{id}", ID: "getDecision", Tag: tagTrading, Summary: "A trading decision",
		Desc: "A trading decision: the prompt, the model's responses, the action and its executions; 404 for an unknown id.", Response: DecisionJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/oracle/queue", ID: "listOracleQueue", Tag: tagOracle, Summary: "The arbitration queue",
		Desc: "Markets waiting for a human arbiter, oldest first.", Response: []arena.OracleResolution{}},
	{Method: "GET", Path: "/api/v1/oracle/accuracy", ID: "getOracleAccuracy", Tag: tagOracle, Summary: "The oracle's audited accuracy",
		Desc: "The oracle's accuracy against human audits: markets an arbiter decided after escalation (the panel's answer against the arbiter's) and auto-resolved markets a human re-resolved; " +
			"by architecture and by resolver, with Wilson 95% intervals.", Response: oracle.Accuracy{}},
	{Method: "GET", Path: "/api/v1/oracle/resolutions/{market}", ID: "listOracleResolutions", Tag: tagOracle, Summary: "A market's oracle resolutions",
		Desc:     "A market's oracle resolutions, oldest first: evidence, votes, composite, policy, human decisions; 404 for a market the oracle has not resolved.",
		Response: OracleResolutionsJSON{}, Fails: []int{404}},
	{Method: "POST", Path: "/api/v1/admin/oracle/queue/{market}", ID: "decideOracleMarket", Tag: tagAdmin, Summary: "An arbiter's decision",
		Desc: "An arbiter's decision on an escalated or disputed market, or a re-resolution with a reason (re-settles trading positions and re-scores forecast rounds that froze the market, in the same transaction); " +
			"a re-resolution names the resolution it revises (revises; 400 revises_required without), and answers 409 resolution_changed when another was recorded since; " +
			"one to the decision in force changes nothing; 404 for a market the oracle has not seen.",
		Body: OracleDecideRequest{}, Response: arena.OracleResolution{}, Admin: true, Fails: []int{404, 409}},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/flag", ID: "flagMarket", Tag: tagAdmin, Summary: "Flag a market ambiguous",
		Desc: "Mark an unresolved market ambiguous: it is resolved through the oracle (not the source) before either track settles or scores it; " +
			"404 for an unknown market, 409 when resolved (dispute or re-resolve instead), already flagged or with the oracle.",
		Body: OracleFlagRequest{}, Response: arena.OracleFlag{}, Admin: true, Fails: []int{404, 409}},
	{Method: "POST", Path: "/api/v1/admin/oracle/markets/{market}/dispute", ID: "disputeMarket", Tag: tagAdmin, Summary: "Dispute a source's resolution",
		Desc: "Dispute a market's resolution by its source (who and why, kept for audit): the oracle or an arbiter then decides it, and the decision is applied as a re-resolution (both tracks re-score and re-settle); " +
			"404 for an unknown market, 409 when unresolved (flag it instead), resolved by the oracle (re-resolve it instead) or already disputed.",
		Body: OracleDisputeRequest{}, Response: arena.OracleDispute{}, Admin: true, Fails: []int{404, 409}},
	{Method: "GET", Path: "/api/v1/oracle/disputes", ID: "listOracleDisputes", Tag: tagOracle, Summary: "Disputed resolutions",
		Desc: "Markets whose resolution by their source an admin disputed, oldest first: who, when, why and the resolution disputed.", Response: []arena.OracleDispute{}},
	{Method: "GET", Path: "/api/v1/pages/home", ID: "getHomePage", Tag: tagPages, Summary: "Data of the home page",
		Desc: "What the home page shows: the open and latest scored rounds and the leaders of each track.", Response: view.HomeJSON{}},
	{Method: "GET", Path: "/api/v1/pages/leaderboard", ID: "getLeaderboardPage", Tag: tagPages, Summary: "Data of the leaderboard page",
		Desc: "What the leaderboard page shows: the forecast table (ordered, filtered and windowed as asked) and the trading table.", Query: []openapi.Param{
			openapi.Enum("sort", slices.Sorted(maps.Keys(view.ForecastSorts)), "rank", "column the forecast table is ordered by"),
			openapi.Enum("dir", []string{"asc", "desc"}, "", "direction of the order (default: the column's better end first)"),
			openapi.String("q", "agent", "only the agents whose name or address contains this text"),
			openapi.Enum("preliminary", []string{"show", "hide"}, "show", "hide: leave out agents with too few forecasts to rank"),
			openapi.Enum("columns", []string{"all"}, "", "all: every column, as the page shows them on request"),
			window,
			category,
			venue,
			openapi.Enum("trading_sort", tradingSorts, "return", "order of the trading table: mean return, or Brier score lowest first")},
		Response: view.LeaderboardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/rounds/{id}", ID: "getRoundPage", Tag: tagPages, Summary: "Data of a round page",
		Desc: "What a round's page shows: its markets, submissions and, once scored, its scores; 404 for an unknown round.", Response: view.RoundPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/agents/{agent}", ID: "getAgentPage", Tag: tagPages, Summary: "Data of an agent page",
		Desc: "What an agent's page shows: its profile, rounds and scores; 404 for an unknown agent.", Response: view.AgentPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/markets", ID: "getMarketsPage", Tag: tagPages, Summary: "Data of the question browser",
		Desc: "Markets newest first with status, category, source, close time, current price, " +
			"resolution and how many agents' forecasts of each are public (cursor pagination: Link rel=next); an unknown category, source or venue answers 400 naming those stored.", Query: []openapi.Param{
			openapi.Enum("status", view.MarketStatuses, "", "only the markets of this status"),
			openapi.String("category", "sports", "only the markets of this category (one of the page's categories)"),
			openapi.String("source", arena.SourceSim, "only the markets of this source (one of the page's sources)"),
			openapi.String("venue", arena.SourceSim, "only the markets of this venue: its source, or a simulated market's named venue (one of the page's venues)"),
			openapi.Int("limit", 1, 500, strconv.Itoa(view.MarketsLimit), "10", "page size"),
			openapi.Int("cursor", 0, math.MaxInt64, "0", "5", "the markets below this market id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
		Response: view.MarketsPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/markets/{id}", ID: "getMarketPage", Tag: tagPages, Summary: "Data of a market page",
		Desc:     "The price history, and every agent's revealed forecast of the market in scored rounds (never before the round's trigger) with the benchmark, best Brier first; 404 for an unknown market.",
		Response: view.MarketPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/compare", ID: "getComparePage", Tag: tagPages, Summary: "Data of the agent comparison",
		Desc: "Cumulative Alpha of each agent and the per-round Brier difference of each from the first; without agents, the agents to choose from; 404 when the arena runs no forecast track.", Query: []openapi.Param{
			openapi.String("agents", "0x0000000000000000000000000000000000000001,0x0000000000000000000000000000000000000002", "2 to 4 agents, comma-separated, each by address or display name; 400 for an unknown, ambiguous or repeated one")},
		Response: view.ComparePageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/cohorts/{id}", ID: "getCohortPage", Tag: tagPages, Summary: "Data of a cohort page",
		Desc: "What a trading cohort's page shows: standings and the portfolio curves over the range asked; 404 for an unknown cohort.", Query: []openapi.Param{
			openapi.Enum("range", view.RangeNames, "all", "the curves' time range, ending at the latest snapshot")},
		Response: view.CohortPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/oracle", ID: "getOraclePage", Tag: tagPages, Summary: "Data of the oracle page",
		Desc: "The arbitration queue, flagged markets, accuracy against human audits and the resolver leaderboard.", Response: view.OraclePageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle/{id}", ID: "getOracleMarketPage", Tag: tagPages, Summary: "Data of a market's oracle page",
		Desc:     "Evidence, votes, architecture, policy, composite, human decisions, re-resolutions and re-scored rounds of a market; 404 for an unknown market.",
		Response: view.OracleMarketPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/methodology", ID: "getMethodologyPage", Tag: tagPages, Summary: "Data of the methodology page",
		Desc: "The scoring method, its configuration and how to verify the arena.", Response: view.MethodologyJSON{}},
	{Method: "GET", Path: "/api/v1/pages/backtest/humans", ID: "getHumanBoardPage", Tag: tagPages, Summary: "Data of the human board page",
		Desc: "ForecastBench's human medians beside the backtested models on the same resolved questions (human rows have human: true), and the questions; empty without human forecasts.", Response: view.HumanBoardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/backtest/humans/{item}", ID: "getHumanItemPage", Tag: tagPages, Summary: "Data of a question of the human board",
		Desc: "The question, its outcome, each human group's median, spread and reasoning excerpts, and each model's backtest forecast; 404 for an item without human forecasts.", Response: view.HumanItemPageJSON{}, Fails: []int{404}},
}

// pathParams describe the path parameters, by name.
var pathParams = map[string]openapi.PathParam{
	"id":      {Desc: "the resource's id, a positive integer", Example: "1", Int: true},
	"index":   {Desc: "the market's index in the round, from 0", Example: "0", Int: true},
	"market":  {Desc: "the market's arena id, a positive integer", Example: "1", Int: true},
	"item":    {Desc: "a ForecastBench item's source id: due date, source, question id and, for a dataset question, resolution date", Example: "2024-07-21:manifold:TPkEjiNb1wVCIGFnPcDD"},
	"file":    {Desc: "the table's name and format: {table}.csv or {table}.jsonl", Example: "rounds.csv"},
	"agent":   {Desc: "the agent's address (0x and 40 hex digits); an agent page also takes a baseline (random, market)", Example: "0x0000000000000000000000000000000000000001"},
	"address": {Desc: "the agent's address (0x and 40 hex digits)", Example: "0x0000000000000000000000000000000000000001"},
}

// apiSpec is the API's declaration, made on first use, after the init
// functions that add to apiOps ran.
var apiSpec = sync.OnceValue(func() *openapi.Spec {
	return &openapi.Spec{Tags: apiTags, Ops: apiOps, PathParams: pathParams, ErrorBody: ErrorJSON{}}
})

// apiOpOf returns the declaration of a route pattern, nil for an
// undocumented route.
func apiOpOf(pattern string) *openapi.Op { return apiSpec().Op(pattern) }

// queryInt is the integer parameter name of a request checked against
// its declaration, or its declared default; given says whether the
// request set it.
func queryInt(r *http.Request, name string) (n int64, given bool) { return apiSpec().QueryInt(r, name) }

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	return s.writeJSON(w, r, s.OpenAPI())
}

// OpenAPI is the OpenAPI 3.1 document of the registered API routes.
func (s *Server) OpenAPI() map[string]any { return apiSpec().Document(s.routes, s.publicURL) }
