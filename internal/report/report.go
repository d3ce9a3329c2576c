// Package report computes the score reports of `arena report` from a
// table of scored forecasts (a score file's, or the store's as the
// dashboard's analysis takes them): the leaderboard and its
// difficulty-adjusted variant, the Murphy decomposition, the per-category
// figures, the calibration diagrams and the baselines. It computes; the
// command parses flags and prints, and the server can serve the same
// figures.
package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/stats"
)

// ErrNoForecasts is Stored's answer when the store holds no scored
// forecast yet: a note for the reader, not a failure.
var ErrNoForecasts = errors.New("no scored forecasts")

// Input is what a report is computed from.
type Input struct {
	Table *stats.Table
	// Src names where the table comes from in errors: a file's path, or
	// "store".
	Src string
	// Names are the agents' display names by address (nil for a file).
	Names map[string]string
}

// Stored is the input of every scored forecast svc's store holds, with
// the agents' display names; ErrNoForecasts when there is none.
func Stored(ctx context.Context, svc *rounds.Service) (Input, error) {
	t, err := svc.ScoredTable(ctx)
	if err != nil {
		return Input{}, err
	}
	if t == nil {
		return Input{}, ErrNoForecasts
	}
	names, err := svc.Names(ctx)
	if err != nil {
		return Input{}, err
	}
	return Input{Table: t, Src: "store", Names: names}, nil
}

// Analyze is the per-agent analysis of the input with opt (as
// `arena score` computes it); an input it refuses (conflicting or
// duplicate forecasts) is an EINVALID error naming Src.
func (in Input) Analyze(ctx context.Context, opt stats.Options) ([]stats.AgentResult, error) {
	res, err := stats.Analyze(ctx, in.Table, opt)
	return res, in.failed(ctx, err)
}

// failed is err as the reports give it: the context's cause when it
// ended, else an input error naming Src.
func (in Input) failed(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case err != nil:
		return arena.Errorf(arena.EINVALID, "%s: %w", in.Src, err)
	}
	return nil
}

// Leaderboard is the input's leaderboard with method m (the dashboard's,
// the names as its profiles), and the analysis behind it.
func (in Input) Leaderboard(ctx context.Context, m scoring.Method, logger *slog.Logger) (scoring.Board, *scoring.Scored, error) {
	scored, err := scoring.AnalyzeTable(ctx, in.Table, m, logger)
	if err = in.failed(ctx, err); err != nil {
		return scoring.Board{}, nil, err
	}
	b := scoring.BoardOf(scored, m, scoring.ProfilesOf(in.Names))
	b.ScoredRounds = in.Table.Rounds.Len()
	return b, scored, nil
}

// Adjusted is the input's difficulty-adjusted leaderboard with method m
// (the dashboard's), question difficulty estimated from the agents est
// (nil: all but the market baseline). The input is first checked as
// `arena score` checks it. Pairs is empty, not nil, without pairs.
func (in Input) Adjusted(ctx context.Context, m scoring.Method, est []string) (*stats.FEResult, error) {
	results, err := in.Analyze(ctx, stats.Options{})
	if err != nil {
		return nil, err
	}
	res, _, err := scoring.Adjusted(ctx, in.Table, results, m, est)
	if err = in.failed(ctx, err); err != nil {
		return nil, err
	}
	if res.Pairs == nil {
		res.Pairs = []stats.FEPair{}
	}
	return res, nil
}

// MurphyRow is an agent's Murphy decomposition: Brier = UNC + REL − RES
// + Residual over Bins equal bins.
type MurphyRow struct {
	Agent    string  `json:"agent"`
	N        int     `json:"n"`
	Brier    float64 `json:"brier"`
	UNC      float64 `json:"unc"`
	REL      float64 `json:"rel"`
	RES      float64 `json:"res"`
	Residual float64 `json:"residual"`
	Bins     int     `json:"bins"`
	// The Murphy corollary over the agent's benchmarked markets (nil without).
	AlphaSplit *AlphaSplit `json:"alpha_split"`
}

// AlphaSplit splits an agent's alpha against the market into its
// resolution gain, reliability gap and residual difference.
type AlphaSplit struct {
	N            int     `json:"n"`
	Alpha        float64 `json:"alpha"`
	ResGain      float64 `json:"res_gain"`
	RelGap       float64 `json:"rel_gap"`
	ResidualDiff float64 `json:"residual_diff"`
}

// Murphy is the Murphy decomposition of each agent of an analysis.
func Murphy(res []stats.AgentResult) []MurphyRow {
	rows := make([]MurphyRow, len(res))
	for i, r := range res {
		m := r.Murphy
		rows[i] = MurphyRow{Agent: r.Agent, N: m.N, Brier: m.Brier, UNC: m.UNC, REL: m.REL, RES: m.RES, Residual: m.Residual, Bins: len(m.Bins)}
		if ap := r.Inference.AlphaParts; r.Inference.AlphaN > 0 && r.Agent != stats.MarketAgent {
			rows[i].AlphaSplit = &AlphaSplit{N: r.Inference.AlphaN, Alpha: ap.Alpha, ResGain: ap.ResGain, RelGap: ap.RelGap, ResidualDiff: ap.ResidualDiff}
		}
	}
	return rows
}

// CategoryRow is an agent's figures on the forecasts of one category.
type CategoryRow struct {
	Category string      `json:"category"`
	Agent    string      `json:"agent"`
	N        int         `json:"n"`
	Rounds   int         `json:"rounds"`
	Brier    float64     `json:"brier"`
	BrierSE  stats.Float `json:"brier_se"`
	Alpha    stats.Float `json:"alpha"`
	AlphaSE  stats.Float `json:"alpha_se"`
	P        stats.Float `json:"p"`
	BeatPct  stats.Float `json:"beat_pct"`
}

// Categories analyzes each category's forecasts of t on their own (with
// bins equal bins), categories in name order, each one's agents in the
// analysis's order.
func Categories(ctx context.Context, t *stats.Table, bins int) ([]CategoryRow, error) {
	byCat := make([][]int, t.Categories.Len())
	for i := range t.Len() {
		byCat[t.Category[i]] = append(byCat[t.Category[i]], i)
	}
	cats := t.Categories.Names
	order := make([]int, len(cats))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cats[a], cats[b]) })
	var rows []CategoryRow
	for _, c := range order {
		if len(byCat[c]) == 0 {
			continue
		}
		res, err := stats.Analyze(ctx, t.Subset(byCat[c]), stats.Options{Bins: bins})
		if err != nil {
			return nil, fmt.Errorf("category %q: %w", cats[c], err)
		}
		for _, r := range res {
			rows = append(rows, CategoryRow{Category: cats[c], Agent: r.Agent, N: r.N, Rounds: r.Rounds, Brier: r.Brier, BrierSE: r.BrierSE,
				Alpha: r.Alpha, AlphaSE: r.AlphaSE, P: r.P, BeatPct: r.BeatPct})
		}
	}
	return rows, nil
}

// CalibrationRow is an agent's reliability diagram: its equal-width bins
// and its CORP (PAV) recalibration.
type CalibrationRow struct {
	Agent string        `json:"agent"`
	N     int           `json:"n"`
	ECE   float64       `json:"ece"`
	CORP  stats.CORP    `json:"corp"`
	Bins  []stats.Bin   `json:"bins"`
	PAV   []stats.Block `json:"corp_diagram"`
}

// Calibration is the reliability diagram of each agent of an analysis.
func Calibration(res []stats.AgentResult) []CalibrationRow {
	rows := make([]CalibrationRow, len(res))
	for i, r := range res {
		rows[i] = CalibrationRow{Agent: r.Agent, N: r.N, ECE: r.ECE, CORP: r.CORP, Bins: r.Murphy.Bins, PAV: r.CORP.Blocks}
	}
	return rows
}

// Baselines scores the constant, market-price and random (seeded)
// forecasters on the stored markets ms, by source kind, and counts the
// markets skipped: unresolved, void or not binary.
func Baselines(ms []*arena.Market, seed uint64) (rows []stats.BaselineRow, skipped int) {
	items, skipped := baselineItems(ms)
	return stats.Baselines(items, seed), skipped
}

// baselineItems turns stored markets into baseline items: binary markets resolved
// Yes or No (void, unresolved and multi-outcome markets are skipped and
// counted). The market/freeze price is the stored FreezeValue of market
// questions; a resolved market's latest price is never used, since after
// resolution it reveals the outcome.
func baselineItems(ms []*arena.Market) ([]stats.BaselineItem, int) {
	items := make([]stats.BaselineItem, 0, len(ms))
	skipped := 0
	for _, m := range ms {
		if !m.IsBinary() || (m.Resolution != arena.Yes && m.Resolution != arena.No) {
			skipped++
			continue
		}
		it := stats.BaselineItem{Key: m.Source + "/" + m.SourceID, Kind: m.Kind}
		if m.Resolution == arena.Yes {
			it.Outcome = 1
		}
		if fv := m.FreezeValue; fv != nil && m.Kind == arena.KindMarket && *fv >= 0 && *fv <= 1 {
			it.Price, it.HasPrice = *fv, true
		}
		items = append(items, it)
	}
	return items, skipped
}
