package view

import (
	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/catalog"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
)

// Service computes the dashboard's pages from the services they read:
// one method per page (HomePage, LeaderboardPage, RoundPage, …), which
// takes the page's parameters as parsed from its request, checks their
// values (an unknown sort key, facet or agent answers EINVALID, an
// unknown round or market ENOTFOUND) and returns the page's view, the
// same for its HTML and its JSON twin; CohortDetail and Curves serve the
// cohort API the cohort page embeds. It reads, never writes.
//
// A nil track is not shown: its pages answer ENOTFOUND and the pages that
// show every track leave it out.
type Service struct {
	Markets  *catalog.Service // required
	Forecast *rounds.Service
	Trading  *trading.Engine
	// Traces gives the forecast leaderboard what each agent's model calls
	// cost (nil: no costs shown).
	Traces *rounds.Traces
	// Boards are the backtest board and, when their store keeps human
	// forecasts, the human board.
	Boards *backtest.Boards
	Oracle *oracle.Service
	// LogVKey, when set, is the note verifier key of the log's published
	// checkpoints, and PublicURL the arena's public URL (else the
	// request's host): the methodology page says how to verify the arena
	// with them.
	LogVKey   string
	PublicURL string
}

// NeedForecast answers ENOTFOUND when the forecast track is not enabled.
func (s *Service) NeedForecast() error {
	if s.Forecast == nil {
		return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
	}
	return nil
}

// NeedTrading answers ENOTFOUND when the trading track is not enabled.
func (s *Service) NeedTrading() error {
	if s.Trading == nil {
		return arena.Errorf(arena.ENOTFOUND, "the trading track is not enabled")
	}
	return nil
}
