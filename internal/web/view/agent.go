package view

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/stats"
)

// agentID is the agent an agent page names: a baseline's id, or an
// address in any case (checksummed here).
func agentID(id string) (string, bool, error) {
	if _, ok := forecast.BaselineNames()[id]; ok {
		return id, true, nil
	}
	a, err := forecast.ParseAddress(id)
	if err != nil {
		return "", false, arena.Errorf(arena.ENOTFOUND, "no agent %q: an agent is a 0x address or a baseline (random, market)", arena.Clip(id))
	}
	return a.Hex(), false, nil
}

// AgentPage is the page of the agent id names (an address in any case, or
// a baseline's id): its profile, its commits and, once it has scored
// forecasts, its figures. Every well-formed address has a page, the page
// of an address the arena never saw saying so.
func (s *Service) AgentPage(ctx context.Context, id string) (AgentPageJSON, error) {
	if err := s.NeedForecast(); err != nil {
		return AgentPageJSON{}, err
	}
	agent, baseline, err := agentID(id)
	if err != nil {
		return AgentPageJSON{}, err
	}
	_, rows, a, err := s.forecastBoard(ctx, rounds.Filter{})
	if err != nil {
		return AgentPageJSON{}, err
	}
	profiles, err := s.Forecast.Profiles(ctx)
	if err != nil {
		return AgentPageJSON{}, err
	}
	p, known := profiles[agent]
	v := AgentPageJSON{Agent: agent, Name: cmp.Or(p.Name, agent), Kind: p.Kind, Known: known, ProfileVersion: p.ProfileVersion,
		Profile: forecast.ProfileFields{Name: p.Name, Organisation: p.Organisation, Model: p.Model, Homepage: p.Homepage, Description: p.Description},
		History: []AgentRoundJSON{}, Calibration: []stats.Bin{}, CORPBlocks: []stats.Block{}, Best: []QuestionJSON{}, Worst: []QuestionJSON{}}
	if !baseline {
		act, err := s.Forecast.AgentActivity(ctx, agent)
		if err != nil {
			return AgentPageJSON{}, err
		}
		v.Commits, v.Waiting, v.WaitingRevealed = act.Commits, act.Waiting, act.WaitingRevealed
	}
	for i := range rows {
		if rows[i].Agent == agent {
			v.Row = &rows[i]
		}
	}
	i := slices.IndexFunc(a.Results, func(x stats.AgentResult) bool { return x.Agent == agent })
	if i < 0 {
		return v, nil
	}
	res := &a.Results[i]
	v.History = history(res.RoundScores)
	v.Murphy = &MurphyJSON{UNC: res.Murphy.UNC, REL: res.Murphy.REL, RES: res.Murphy.RES, Residual: res.Murphy.Residual}
	corp := res.CORP
	v.CORP, v.CORPBlocks = &corp, append(v.CORPBlocks, corp.Blocks...)
	ece := res.ECE
	v.ECE = &ece
	v.Calibration = append(v.Calibration, res.Murphy.Bins...)
	qs, err := s.questions(ctx, a, agent)
	if err != nil {
		return AgentPageJSON{}, err
	}
	v.Best, v.Worst = qs[:min(5, len(qs))], []QuestionJSON{}
	for i := len(qs) - 1; i >= max(len(qs)-5, min(5, len(qs))); i-- {
		v.Worst = append(v.Worst, qs[i])
	}
	return v, nil
}

// history is an agent's rounds with the running mean Alpha and its 95%
// band: the t interval over the k rounds so far (mean ± t·sd/√k, k − 1
// degrees of freedom, as the leaderboard's p-value takes them). The
// headline interval resamples events instead (see the agent page).
func history(rs []stats.RoundScore) []AgentRoundJSON {
	out := make([]AgentRoundJSON, 0, len(rs))
	var k int
	var sum, sumSq float64
	for _, x := range rs {
		h := AgentRoundJSON{Round: x.Round, N: x.N, Brier: x.Brier, Alpha: x.Alpha.Ptr()}
		if x.Alpha.OK {
			k++
			sum += x.Alpha.V
			sumSq += x.Alpha.V * x.Alpha.V
		}
		if k > 0 {
			m := sum / float64(k)
			h.CumAlpha = &m
			if k > 1 {
				sd := math.Sqrt(math.Max(0, (sumSq-float64(k)*m*m)/float64(k-1)))
				q := stats.StudentQuantile(0.975, float64(k-1))
				lo, hi := m-q*sd/math.Sqrt(float64(k)), m+q*sd/math.Sqrt(float64(k))
				h.CumLo, h.CumHi = &lo, &hi
			}
		}
		out = append(out, h)
	}
	return out
}

// questions lists an agent's scored questions, best edge first (lowest
// Brier first where no benchmark gives an edge).
func (s *Service) questions(ctx context.Context, a *scoring.Analysis, agent string) ([]QuestionJSON, error) {
	var qs []QuestionJSON
	var ids []int64
	for _, i := range a.ByAgent[agent] {
		f := a.Forecasts[i]
		o := float64(f.Outcome)
		q := QuestionJSON{Round: f.RoundID, MarketID: f.MarketID, Forecast: f.Forecast, Benchmark: f.Benchmark, Outcome: f.Outcome,
			Brier: (f.Forecast - o) * (f.Forecast - o)}
		if f.Benchmark != nil {
			e := (*f.Benchmark-o)*(*f.Benchmark-o) - q.Brier
			q.Edge = &e
		}
		qs = append(qs, q)
		ids = append(ids, f.MarketID)
	}
	slices.SortStableFunc(qs, func(a, b QuestionJSON) int {
		ea, oka := deref(a.Edge)
		eb, okb := deref(b.Edge)
		if oka && okb && ea != eb {
			return cmp.Compare(eb, ea)
		}
		return cmp.Compare(a.Brier, b.Brier)
	})
	keep := qs
	if len(qs) > 10 {
		keep = append(append([]QuestionJSON{}, qs[:5]...), qs[len(qs)-5:]...)
	}
	ids = ids[:0]
	for _, q := range keep {
		ids = append(ids, q.MarketID)
	}
	ms, err := s.Markets.MarketsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range keep {
		if m := ms[keep[i].MarketID]; m != nil {
			keep[i].Question = m.Question
		}
	}
	return keep, nil
}
