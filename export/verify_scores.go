package export

import (
	"maps"
	"slices"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// checkScores recomputes every exported round's scores from the logged
// reveals, benchmarks and outcomes, compares them with the latest logged
// scores and the exported ones, and returns the scored forecasts the
// leaderboard is recomputed from.
func (v *verifier) checkScores() []arena.ScoredForecast {
	t := v.t["scores"]
	checked := map[string]bool{}
	var forecasts []arena.ScoredForecast
	commits := sortedKeys(v.commits)
	for _, rr := range v.t["rounds"].rows {
		id := rr.u("id")
		o, triggered := v.outcomes[id]
		if !triggered {
			continue
		}
		rs, ok := v.recomputeRound(rr, o, commits)
		if !ok {
			continue
		}
		forecasts = append(forecasts, rs.forecasts...)
		blamed := v.checkLoggedScores(rr, rs)
		v.checkExportedScores(rs, blamed, checked)
	}
	for _, r := range t.rows {
		if !checked[r.key] {
			v.add(t.spec.Name, r.key, "", "recomputes to nothing: not a committed agent or baseline of an exported round scored in the log")
		}
	}
	return forecasts
}

// roundScores are a round's scores recomputed from the log: the scores
// row of each agent and baseline, and the scored forecasts.
type roundScores struct {
	id        uint64
	o         logged[forecast.OutcomeEntry] // the round's latest outcomes
	want      map[string][]string           // agent → the scores row
	forecasts []arena.ScoredForecast
}

// scoreRow is a round's scores row, its agent left empty.
func scoreRow(id uint64, brier float64, alpha *float64, bb int64, ab *int64, n, an int, forfeit bool) []string {
	return []string{u64(id), "", flt(brier), optF(alpha), i64(bb), optI(ab), strconv.Itoa(n), strconv.Itoa(an), bl(forfeit)}
}

// recomputeRound scores round rr, triggered with outcomes o, with the
// server's scorer: the committed agents (commits, in order) and the
// random baseline, and the market baseline when the round has
// benchmarks. False when the round cannot be scored.
func (v *verifier) recomputeRound(rr *row, o logged[forecast.OutcomeEntry], commits []key) (roundScores, bool) {
	lt, mt := v.t["log_entries"], v.t["markets"]
	id := rr.u("id")
	b, benched := v.benches[id]
	ms := v.marketOutcomes(id, o, b, benched)
	agents, entries := v.roundEntries(id, len(ms), commits)
	agents = append(agents, forecast.RandomAgent)
	entries = append(entries, scoring.Entry{Predictions: scoring.RandomPredictions(id, rr.t("commit_deadline"), len(ms))})
	res, err := scoring.ScoreRound(ms, entries)
	if err != nil {
		v.add(lt.spec.Name, kv(lt.spec, u64(o.idx)), "leaf", "round %d cannot be scored: %v", id, err)
		return roundScores{}, false
	}
	if res.N > 0 && !benched {
		v.add(lt.spec.Name, kv(lt.spec, u64(o.idx)), "leaf", "round %d is scored without logged benchmarks", id)
	}
	rs := roundScores{id: id, o: o, want: map[string][]string{}}
	if res.N == 0 {
		return rs, true
	}
	for a, s := range res.Agents {
		var alpha *float64
		var ab *int64
		if res.AlphaN > 0 {
			alpha, ab = &s.Alpha, &s.AlphaBps2
		}
		rs.want[agents[a]] = scoreRow(id, s.Brier, alpha, s.BrierBps2, ab, res.N, res.AlphaN, s.Forfeit)
		for i, mo := range ms {
			if !mo.Scored() {
				continue
			}
			var cat, event string
			if m := mt.byKey[kv(mt.spec, i64(mo.MarketID))]; m != nil {
				cat, event = m.s("category"), m.s("event_id")
			}
			rs.forecasts = append(rs.forecasts, arena.ScoredForecast{RoundID: id, Agent: agents[a], MarketID: mo.MarketID, Category: cat, Event: event,
				Outcome: mo.Outcome, Benchmark: mo.BenchmarkPrice(), Forfeit: s.Forfeit, Forecast: entries[a].Forecast(i, mo.Outcome)})
		}
	}
	if res.AlphaN > 0 {
		zero, zb := 0.0, int64(0)
		rs.want[forecast.MarketAgent] = scoreRow(id, res.BaseBrier, &zero, res.BaseBrierBps2, &zb, res.AlphaN, res.AlphaN, false)
	}
	return rs, true
}

// marketOutcomes are round id's markets as the scorer takes them: the
// logged outcomes o, with the logged benchmarks b when benched, the
// exported market ids otherwise.
func (v *verifier) marketOutcomes(id uint64, o logged[forecast.OutcomeEntry], b logged[forecast.BenchmarkEntry], benched bool) []scoring.MarketOutcome {
	ms := make([]scoring.MarketOutcome, len(o.v.Outcomes))
	for i, x := range o.v.Outcomes {
		ms[i] = scoring.MarketOutcome{Outcome: scoring.ScoringOutcome(x), Benchmark: scoring.NoBenchmark}
		switch rm := v.roundMarket(id, i); {
		case benched && i < len(b.v.MarketIDs):
			ms[i].MarketID, ms[i].Benchmark = b.v.MarketIDs[i], b.v.Benchmarks[i]
		case rm != nil:
			ms[i].MarketID = rm.i("market_id")
		}
	}
	return ms
}

// roundEntries are round id's committed agents, in commits' order, with
// their logged predictions for its k markets (a forfeit without a
// reveal); a reveal of another number of predictions is reported and its
// agent left out.
func (v *verifier) roundEntries(id uint64, k int, commits []key) (agents []string, entries []scoring.Entry) {
	lt := v.t["log_entries"]
	for _, ck := range commits {
		if ck.round != id {
			continue
		}
		e := scoring.Entry{Forfeit: true}
		if rv, ok := v.reveals[ck]; ok {
			if len(rv.v.Predictions) != k {
				v.add(lt.spec.Name, kv(lt.spec, u64(rv.idx)), "leaf", "%d predictions for the %d markets of round %d", len(rv.v.Predictions), k, id)
				continue
			}
			e = scoring.Entry{Predictions: rv.v.Predictions}
		}
		agents, entries = append(agents, ck.agent), append(entries, e)
	}
	return agents, entries
}

// checkLoggedScores compares round rr's recomputed scores with the
// latest logged ones, and returns the agents whose exported row is not
// to be blamed again (the random baseline, when the round's commit
// deadline is blamed instead).
func (v *verifier) checkLoggedScores(rr *row, rs roundScores) map[string]bool {
	t, lt := v.t["scores"], v.t["log_entries"]
	id := rs.id
	logged := v.scores[id]
	blamed := map[string]bool{}
	for _, a := range slices.Sorted(maps.Keys(rs.want)) {
		w := rs.want[a]
		ls, ok := logged[a]
		if !ok {
			v.add(lt.spec.Name, kv(lt.spec, u64(rs.o.idx)), "leaf", "round %d's outcomes are not followed by a score of %s", id, a)
			continue
		}
		got := scoreRow(id, 0, nil, ls.v.BrierBps2, ls.v.AlphaBps2, ls.v.Scored, ls.v.Benchmarked, ls.v.Forfeit)
		for i, c := range t.spec.Names() {
			if c == "brier" || c == "alpha" || c == "round_id" || c == "agent" || got[i] == w[i] {
				continue
			}
			// The random baseline is seeded by the commit deadline: a
			// logged score the export agrees with, recomputing only
			// otherwise, means the deadline was changed.
			if r := t.byKey[kv(t.spec, u64(id), a)]; a == forecast.RandomAgent && r != nil && r.s(c) == got[i] {
				v.claim(v.t["rounds"], rr, "commit_deadline", "it seeds the random baseline, whose logged score (entry %d) has %s %s, recomputed %s", ls.idx, c, got[i], w[i])
				blamed[a] = true // the row agrees with the log: not blamed again
				break
			}
			v.add(lt.spec.Name, kv(lt.spec, u64(ls.idx)), "leaf", "the score of %s in round %d has %s %s, recomputed %s", a, id, c, got[i], w[i])
			break
		}
	}
	for _, a := range slices.Sorted(maps.Keys(logged)) {
		if ls := logged[a]; rs.want[a] == nil {
			v.add(lt.spec.Name, kv(lt.spec, u64(ls.idx)), "leaf", "a score of %s in round %d, which recomputes to none", a, id)
		}
	}
	return blamed
}

// checkExportedScores compares a round's recomputed scores with the
// exported rows, marking each row it finds in checked; a blamed agent's
// row is found but not compared.
func (v *verifier) checkExportedScores(rs roundScores, blamed, checked map[string]bool) {
	t := v.t["scores"]
	id := rs.id
	for _, a := range slices.Sorted(maps.Keys(rs.want)) {
		w := rs.want[a]
		r := t.byKey[kv(t.spec, u64(id), a)]
		if r == nil {
			v.add(t.spec.Name, kv(t.spec, u64(id), a), "", "missing: recomputed from round %d's logged outcomes (entry %d)", id, rs.o.idx)
			continue
		}
		checked[r.key] = true
		if blamed[a] {
			continue
		}
		ok := true
		for i, c := range t.spec.Names() {
			if c != "round_id" && c != "agent" {
				ok = v.cmp(t, r, c, w[i], "recomputed") && ok
			}
		}
		if ok {
			v.rep.Scores++
		}
	}
}
