package web

import "github.com/forecast-arena/arena/internal/web/view"

// The page views moved to package view (shared by the server and package
// pages). These names stay only so that the tests of cmd/arena and
// internal/demo, which decode the pages' JSON into them, still compile;
// once those tests name view's types, delete this file.
type (
	AgentPageJSON        = view.AgentPageJSON
	CohortPageJSON       = view.CohortPageJSON
	ComparePageJSON      = view.ComparePageJSON
	HomeJSON             = view.HomeJSON
	HumanBoardPageJSON   = view.HumanBoardPageJSON
	HumanItemPageJSON    = view.HumanItemPageJSON
	HumanQuestionJSON    = view.HumanQuestionJSON
	LeaderboardPageJSON  = view.LeaderboardPageJSON
	MarketPageJSON       = view.MarketPageJSON
	MarketsPageJSON      = view.MarketsPageJSON
	MethodologyJSON      = view.MethodologyJSON
	OracleMarketPageJSON = view.OracleMarketPageJSON
	OraclePageJSON       = view.OraclePageJSON
	RoundPageJSON        = view.RoundPageJSON
)
