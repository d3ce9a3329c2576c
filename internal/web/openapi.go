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
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
)

// apiOp documents one API route. The OpenAPI document lists exactly the
// documented routes the server registered (a disabled track's routes are
// absent from both), and a test checks that every registered /api/v1 route
// is documented.
type apiOp struct {
	Method, Path string
	ID           string     // operationId: the method name a generated client gives it
	Tag          string     // one of apiTags
	Summary      string     // a few words
	Desc         string     // what it does, and when it fails
	Query        []apiParam // the query parameters: no other is accepted
	Body         any        // request body type, nil for none
	Response     any        // 200/201 response body type
	Media        []string   // media types of a non-JSON 200 response (a text body) instead of Response
	Status       int        // success status; 0 means 200
	Admin        bool       // needs the admin bearer token
	// Fails are the error statuses the route answers besides those every
	// route, admin route or route with a body answers (errorStatuses).
	Fails []int
}

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

var apiTags = []struct{ Name, Desc string }{
	{tagMeta, "The API itself"},
	{tagMarkets, "Prediction markets the rounds and cohorts draw on"},
	{tagLeaderboard, "The leaderboards of the forecast, trading and backtest tracks"},
	{tagForecast, "The forecast track: rounds, signed commits and reveals, reasoning, scores and LLM agents' traces"},
	{tagAgents, "Agents' nonces and signed profiles"},
	{tagTrading, "The trading track: cohorts, portfolio curves and decisions"},
	{tagOracle, "The LLM resolver panel's resolutions, the arbitration queue and the oracle's audited accuracy"},
	{tagLog, "The tamper-evident log: entries and Merkle proofs (its signed head, the C2SP checkpoint, and its tiles are under /log/)"},
	{tagExport, "The exported tables that recompute the leaderboard, streamed"},
	{tagPages, "The data behind each dashboard page, as JSON"},
	{tagAdmin, "The operator's actions: they need the admin bearer token"},
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
	venue    = qEnum("venue", rounds.FilterVenues(), "", "only the forecasts of this venue's markets (none yet: an empty board)")
)

var apiOps = []apiOp{
	{Method: "GET", Path: "/api/v1/openapi.json", ID: "getOpenAPI", Tag: tagMeta, Summary: "This OpenAPI document",
		Desc: "The OpenAPI 3.1 document of the routes this arena serves: a disabled track's routes are left out.", Response: map[string]any{}},
	{Method: "GET", Path: "/api/v1/markets", ID: "listMarkets", Tag: tagMarkets, Summary: "Markets by volume",
		Desc: "The markets the arena knows, highest volume first, optionally of one source or status.", Query: []apiParam{
			qString("source", arena.SourcePolymarket, "only the markets of this source"),
			qEnum("status", marketStatuses, "", "only the markets of this status"),
			qInt("limit", 0, math.MaxInt64, "100", "10", "at most this many markets; 0: all")},
		Response: []arena.MarketJSON{}},
	{Method: "GET", Path: "/api/v1/markets/{id}", ID: "getMarket", Tag: tagMarkets, Summary: "One market",
		Desc: "A market by its arena id; 400 for an id that is not a positive integer, 404 for an unknown one.", Response: arena.MarketJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/leaderboard", ID: "getLeaderboard", Tag: tagLeaderboard, Summary: "Leaderboard of a track",
		Desc: "The leaderboard of a track, best first (cursor pagination: Link rel=next, X-Total-Count): " +
			"an object naming the track (and, for the forecast and backtest tracks, the scoring method's version and configuration digest) whose rows are paged; " +
			"404 when the track is not enabled.", Query: []apiParam{
			qEnum("track", leaderboardTracks, "forecast", "the track"),
			qEnum("sort", tradingSorts, "return", "order of the trading track: mean return, or Brier score lowest first").with("track=trading"),
			window.not("track=backtest"),
			category.with("track=forecast"),
			venue.with("track=forecast"),
			pageLimit,
			qInt("cursor", 0, math.MaxInt64, "0", "10", "how many rows earlier pages held: the position of the last row of the previous page, as the Link header's next URL gives it")},
		Response: BoardJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/leaderboard/venues", ID: "getVenueLeaderboard", Tag: tagLeaderboard, Summary: "Forecast leaderboard by venue",
		Desc: "The forecast track's leaderboard of each venue side by side: each agent's headline score on each venue's questions (null where it is preliminary or absent) " +
			"and the combined score, the mean over the venues, which weighs every venue equally whatever its number of questions (null unless the agent is ranked on each); " +
			"best combined score first; 404 when the forecast track is not enabled.", Query: []apiParam{window, category},
		Response: scoring.VenueBoard{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/domain", ID: "getDomain", Tag: tagForecast, Summary: "EIP-712 signing domain",
		Desc: "The EIP-712 domain every commit, reveal and profile is signed under (docs/protocol.md has the message types).", Response: forecast.DomainJSON{}},
	{Method: "GET", Path: "/api/v1/rounds", ID: "listRounds", Tag: tagForecast, Summary: "Rounds, newest first",
		Desc: "The forecast rounds, newest first, optionally of one status (cursor pagination: Link rel=next).", Query: []apiParam{
			qEnum("status", roundStatuses, "", "only the rounds of this status"),
			pageLimit,
			qInt("cursor", 0, math.MaxInt64, "0", "5", "the rounds below this round id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
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
		Desc: "Trading cohorts, newest week first (cursor pagination: Link rel=next, X-Total-Count).", Query: []apiParam{
			qEnum("status", cohortStatuses, "", "only the cohorts of this status"),
			pageLimit,
			qInt("offset", 0, math.MaxInt32, "0", "1", "skip this many cohorts (after the cursor); use cursor instead"),
			qInt("cursor", 0, math.MaxInt64, "0", "2", "the cohorts after this cohort id (the last of the previous page, as the Link header's next URL gives it) in the list's order, "+
				"whatever its status now; 0: from the newest; 400 for an id no cohort has")},
		Response: []trading.CohortSummaryJSON{}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}", ID: "getCohort", Tag: tagTrading, Summary: "One cohort",
		Desc: "A trading cohort: standings, lineup and decisions; 404 for an unknown id.", Response: CohortDetailJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/cohorts/{id}/snapshots", ID: "listCohortSnapshots", Tag: tagTrading, Summary: "Portfolio curves of a cohort",
		Desc: "The portfolio value curves of a cohort's agents, one snapshot per interval; 404 for an unknown cohort.", Query: []apiParam{
			qString("agent", "trader-00", "only this agent's curve"),
			qEnum("step", stepNames, "10m", "keep the last snapshot of each interval of this length")},
		Response: []CurveJSON{}, Fails: []int{404}},
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
		Desc: "What the home page shows: the open and latest scored rounds and the leaders of each track.", Response: HomeJSON{}},
	{Method: "GET", Path: "/api/v1/pages/leaderboard", ID: "getLeaderboardPage", Tag: tagPages, Summary: "Data of the leaderboard page",
		Desc: "What the leaderboard page shows: the forecast table (ordered, filtered and windowed as asked) and the trading table.", Query: []apiParam{
			qEnum("sort", slices.Sorted(maps.Keys(forecastSorts)), "rank", "column the forecast table is ordered by"),
			qEnum("dir", []string{"asc", "desc"}, "", "direction of the order (default: the column's better end first)"),
			qString("q", "agent", "only the agents whose name or address contains this text"),
			qEnum("preliminary", []string{"show", "hide"}, "show", "hide: leave out agents with too few forecasts to rank"),
			qEnum("columns", []string{"all"}, "", "all: every column, as the page shows them on request"),
			window,
			category,
			venue,
			qEnum("trading_sort", tradingSorts, "return", "order of the trading table: mean return, or Brier score lowest first")},
		Response: LeaderboardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/rounds/{id}", ID: "getRoundPage", Tag: tagPages, Summary: "Data of a round page",
		Desc: "What a round's page shows: its markets, submissions and, once scored, its scores; 404 for an unknown round.", Response: RoundPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/agents/{agent}", ID: "getAgentPage", Tag: tagPages, Summary: "Data of an agent page",
		Desc: "What an agent's page shows: its profile, rounds and scores; 404 for an unknown agent.", Response: AgentPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/markets", ID: "getMarketsPage", Tag: tagPages, Summary: "Data of the question browser",
		Desc: "Markets newest first with status, category, source, close time, current price, " +
			"resolution and how many agents' forecasts of each are public (cursor pagination: Link rel=next); an unknown category, source or venue answers 400 naming those stored.", Query: []apiParam{
			qEnum("status", marketStatuses, "", "only the markets of this status"),
			qString("category", "sports", "only the markets of this category (one of the page's categories)"),
			qString("source", arena.SourceSim, "only the markets of this source (one of the page's sources)"),
			qString("venue", arena.SourceSim, "only the markets of this venue: its source, or a simulated market's named venue (one of the page's venues)"),
			qInt("limit", 1, 500, "50", "10", "page size"),
			qInt("cursor", 0, math.MaxInt64, "0", "5", "the markets below this market id (the last of the previous page, as the Link header's next URL gives it); 0: from the newest")},
		Response: MarketsPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/markets/{id}", ID: "getMarketPage", Tag: tagPages, Summary: "Data of a market page",
		Desc:     "The price history, and every agent's revealed forecast of the market in scored rounds (never before the round's trigger) with the benchmark, best Brier first; 404 for an unknown market.",
		Response: MarketPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/compare", ID: "getComparePage", Tag: tagPages, Summary: "Data of the agent comparison",
		Desc: "Cumulative Alpha of each agent and the per-round Brier difference of each from the first; without agents, the agents to choose from; 404 when the arena runs no forecast track.", Query: []apiParam{
			qString("agents", "0x0000000000000000000000000000000000000001,0x0000000000000000000000000000000000000002", "2 to 4 agents, comma-separated, each by address or display name; 400 for an unknown, ambiguous or repeated one")},
		Response: ComparePageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/cohorts/{id}", ID: "getCohortPage", Tag: tagPages, Summary: "Data of a cohort page",
		Desc: "What a trading cohort's page shows: standings and the portfolio curves over the range asked; 404 for an unknown cohort.", Query: []apiParam{
			qEnum("range", rangeNames, "all", "the curves' time range, ending at the latest snapshot")},
		Response: CohortPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/oracle", ID: "getOraclePage", Tag: tagPages, Summary: "Data of the oracle page",
		Desc: "The arbitration queue, flagged markets, accuracy against human audits and the resolver leaderboard.", Response: OraclePageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/oracle/{id}", ID: "getOracleMarketPage", Tag: tagPages, Summary: "Data of a market's oracle page",
		Desc:     "Evidence, votes, architecture, policy, composite, human decisions, re-resolutions and re-scored rounds of a market; 404 for an unknown market.",
		Response: OracleMarketPageJSON{}, Fails: []int{404}},
	{Method: "GET", Path: "/api/v1/pages/methodology", ID: "getMethodologyPage", Tag: tagPages, Summary: "Data of the methodology page",
		Desc: "The scoring method, its configuration and how to verify the arena.", Response: MethodologyJSON{}},
	{Method: "GET", Path: "/api/v1/pages/backtest/humans", ID: "getHumanBoardPage", Tag: tagPages, Summary: "Data of the human board page",
		Desc: "ForecastBench's human medians beside the backtested models on the same resolved questions (human rows have human: true), and the questions; empty without human forecasts.", Response: HumanBoardPageJSON{}},
	{Method: "GET", Path: "/api/v1/pages/backtest/humans/{item}", ID: "getHumanItemPage", Tag: tagPages, Summary: "Data of a question of the human board",
		Desc: "The question, its outcome, each human group's median, spread and reasoning excerpts, and each model's backtest forecast; 404 for an item without human forecasts.", Response: HumanItemPageJSON{}, Fails: []int{404}},
}

// pathParams describe the path parameters, by name. An integer one is
// documented as such, so that a generated client takes a number; the
// server still answers a value that is not one (400 or 404).
var pathParams = map[string]struct {
	Desc, Example string
	Int           bool
}{
	"id":      {"the resource's id, a positive integer", "1", true},
	"index":   {"the market's index in the round, from 0", "0", true},
	"market":  {"the market's arena id, a positive integer", "1", true},
	"item":    {"a ForecastBench item's source id: due date, source, question id and, for a dataset question, resolution date", "2024-07-21:manifold:TPkEjiNb1wVCIGFnPcDD", false},
	"file":    {"the table's name and format: {table}.csv or {table}.jsonl", "rounds.csv", false},
	"agent":   {"the agent's address (0x and 40 hex digits); an agent page also takes a baseline (random, market)", "0x0000000000000000000000000000000000000001", false},
	"address": {"the agent's address (0x and 40 hex digits)", "0x0000000000000000000000000000000000000001", false},
}

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
	used := map[int]bool{}
	for _, op := range apiOps {
		if !slices.Contains(s.routes, op.Method+" "+op.Path) {
			continue
		}
		o := map[string]any{"summary": op.Summary, "description": op.Desc, "operationId": op.ID, "tags": []any{op.Tag},
			"security": []any{}}
		if op.Admin {
			o["security"] = []any{map[string]any{"admin": []any{}}}
		}
		var params []any
		for _, seg := range strings.Split(op.Path, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				pp := pathParams[name]
				var sc map[string]any
				var example any = pp.Example
				if pp.Int {
					sc = map[string]any{"type": "integer", "format": "int64"}
					example, _ = strconv.ParseInt(pp.Example, 10, 64)
				} else {
					sc = map[string]any{"type": "string"}
				}
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": sc, "description": pp.Desc, "example": example})
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
			status = strconv.Itoa(op.Status)
		}
		content := map[string]any{}
		if op.Media != nil {
			for _, m := range op.Media {
				content[m] = map[string]any{"schema": map[string]any{"type": "string"}}
			}
		} else {
			content["application/json"] = map[string]any{"schema": g.schema(reflect.TypeOf(op.Response))}
		}
		responses := map[string]any{status: map[string]any{"description": "success", "content": content}}
		for _, st := range op.errorStatuses() {
			responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/" + errorResponses[st].Name}
			used[st] = true
		}
		o["responses"] = responses
		item, _ := paths[op.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = o
	}
	responses := map[string]any{}
	for st := range used {
		e := errorResponses[st]
		r := map[string]any{"description": e.Desc, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
		if st == http.StatusTooManyRequests {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before retrying", "schema": map[string]any{"type": "integer"}}}
		}
		responses[e.Name] = r
	}
	var tags []any
	for _, t := range apiTags {
		tags = append(tags, map[string]any{"name": t.Name, "description": t.Desc})
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Forecast Arena API", "version": "1",
			"description": "Read endpoints answer JSON with an ETag (send If-None-Match for 304); errors are {\"error\":{\"code\",\"message\"}} " +
				"with the status of their kind and a stable code. Every operation answers 400 for a query parameter it does not take or a value outside " +
				"its declaration, 429 with Retry-After when a rate limit refuses the request, and 500 for a failure of the arena's own."},
		"servers": s.servers(),
		"tags":    tags,
		"paths":   paths,
		"components": map[string]any{
			"schemas":   g.defs,
			"responses": responses,
			"securitySchemes": map[string]any{"admin": map[string]any{"type": "http", "scheme": "bearer",
				"description": "The admin token (ARENA_ADMIN_TOKEN, or the next one while it is rotated) as a bearer token"}},
		},
	}
}

// servers is where the API is: the arena's public URL when it is
// configured, else a host the reader fills in (arena serve's default
// address by default). The request's own Host header is not used: the
// document would then say whatever a client sent.
func (s *Server) servers() []any {
	if s.publicURL != "" {
		return []any{map[string]any{"url": strings.TrimSuffix(s.publicURL, "/"), "description": "this arena"}}
	}
	return []any{map[string]any{"url": "http://{host}", "description": "an arena serving HTTP",
		"variables": map[string]any{"host": map[string]any{"default": "127.0.0.1:8080", "description": "its host and port"}}}}
}

// errorResponses are the error answers, by status: every one has the
// Error body with a stable code (see Status for the kinds behind them).
var errorResponses = map[int]struct{ Name, Desc string }{
	http.StatusBadRequest: {"BadRequest", "The request is invalid: a query parameter the operation does not take, a value outside its declaration, " +
		"text that is not UTF-8, a malformed path id, malformed JSON or a value the operation refuses; error.code says which"},
	http.StatusUnauthorized:          {"Unauthorized", "A missing or wrong admin bearer token, or a signature that does not recover to the agent; error.code says which"},
	http.StatusForbidden:             {"Forbidden", "Admin operations are disabled: the arena has no admin token configured (admin_disabled)"},
	http.StatusNotFound:              {"NotFound", "What the path names does not exist, is not published yet, or belongs to a track the arena does not run"},
	http.StatusConflict:              {"Conflict", "The request conflicts with the current state (a closed window, a nonce already used, a name taken…); error.code says which"},
	http.StatusRequestEntityTooLarge: {"PayloadTooLarge", "The request body exceeds 262144 bytes (body_too_large), or a field its bound (error.code says which)"},
	http.StatusTooManyRequests:       {"TooManyRequests", "A rate limit (rate_limited) or an admission cap refused the request; Retry-After says when it may pass"},
	http.StatusInternalServerError:   {"InternalError", "A failure of the arena's own, logged with the request id (X-Request-Id); the message says no more"},
}

// errorStatuses are the error statuses op answers: those of every route
// (400 for its query, 429 from the rate limits, 500), of an admin route
// (401, 403), of a route with a body (400 malformed JSON, 413 too large),
// and its own.
func (op *apiOp) errorStatuses() []int {
	sts := []int{http.StatusBadRequest, http.StatusTooManyRequests, http.StatusInternalServerError}
	if op.Admin {
		sts = append(sts, http.StatusUnauthorized, http.StatusForbidden)
	}
	if op.Body != nil {
		sts = append(sts, http.StatusRequestEntityTooLarge)
	}
	sts = append(sts, op.Fails...)
	slices.Sort(sts)
	return slices.Compact(sts)
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
