package arena

import (
	"context"
	"time"
)

// Human forecaster groups of a ForecastBench round: its superforecasters
// and, where a round surveyed them, the general public.
const (
	HumanSuper  = "super"
	HumanPublic = "public"
)

// HumanForecast is one human's forecast of one ForecastBench question in a
// round's human survey: for a dataset question, of one of its resolution
// dates (ResolutionDate zero for a market question, which resolves with
// its market). UserID is the pseudonymous id ForecastBench publishes, the
// only name a human has here. Aggregates (the group's median per question
// and resolution date) are derived from these rows, never stored.
type HumanForecast struct {
	Due            time.Time // forecast due date of the round
	Group          string    // HumanSuper or HumanPublic
	Source         string    // ForecastBench source, e.g. "acled" or "polymarket"
	QuestionID     string
	ResolutionDate time.Time
	UserID         string
	Forecast       float64 // probability in [0,1]
	Reasoning      string
	Searches       string
	ConsultedURLs  string
}

// HumanSet summarises one stored (round, group) of human forecasts.
type HumanSet struct {
	Due         time.Time
	Group       string
	Forecasts   int
	Forecasters int
}

// HumanStore keeps ForecastBench's published human forecasts.
type HumanStore interface {
	// ReplaceHumanForecasts replaces every stored forecast of the round
	// due on due by group with rows, in one transaction (on error nothing
	// changes), so importing the same file again changes nothing. Every
	// row must carry that due date and group.
	ReplaceHumanForecasts(ctx context.Context, due time.Time, group string, rows []HumanForecast) error
	// HumanForecasts lists the round's forecasts of every group, by group,
	// source, question, resolution date and user; none is not an error.
	HumanForecasts(ctx context.Context, due time.Time) ([]HumanForecast, error)
	// HumanSets lists the stored (round, group) sets by due date and group.
	HumanSets(ctx context.Context) ([]HumanSet, error)
}
