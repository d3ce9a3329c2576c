package export

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// checkLeaderboard recomputes the leaderboard from the recomputed scored
// forecasts, with the server's analysis, and compares every row.
func (v *verifier) checkLeaderboard(forecasts []arena.ScoredForecast) {
	t := v.t["leaderboard"]
	if v.meta.Since != nil {
		v.rep.LeaderboardSkip = "the export holds only rounds since " + tm(*v.meta.Since)
		return
	}
	if v.method.Validate() != nil {
		v.rep.LeaderboardSkip = "meta.json names no valid scoring method"
		return
	}
	a, err := analyze(forecasts, v.method)
	if err != nil {
		v.add(t.spec.Name, "", "", "cannot be recomputed: %v", err)
		return
	}
	names := forecast.BaselineNames()
	for _, r := range v.t["agents"].rows {
		if r.has("name") {
			names[r.s("address")] = r.s("name")
		}
	}
	want := map[string]bool{}
	for _, w := range leaderboardRows(a.Board(scoring.ProfilesOf(names))) {
		rk := kv(t.spec, w[1])
		want[rk] = true
		r := t.byKey[rk]
		if r == nil {
			v.add(t.spec.Name, rk, "", "missing: recomputed at rank %s", w[0])
			continue
		}
		ok := true
		for i, c := range t.spec.Names() {
			why := "recomputed"
			if c == "name" {
				why = "the agents table"
			}
			ok = v.cmp(t, r, c, w[i], why) && ok
		}
		if ok {
			v.rep.LeaderboardRows++
		}
	}
	for _, r := range t.rows {
		if !want[r.key] {
			v.add(t.spec.Name, r.key, "", "recomputes to nothing: the agent has no recomputed score")
		}
	}
}

// analyses keeps the analysis Verify computed last, by a digest of its
// scored forecasts: the analysis is a pure function of them, and its
// bootstraps cost most of a verification, so verifying copies of one
// export (a tamper catalogue, a verifier checking again) computes it once.
// Verifications of different exports compute theirs side by side; those
// of one export at the same time wait for a single computation.
var analyses struct {
	flight singleflight.Group
	mu     sync.Mutex
	digest [32]byte
	last   *scoring.Analysis
}

func analyze(fs []arena.ScoredForecast, m scoring.Method) (*scoring.Analysis, error) {
	slices.SortFunc(fs, scoring.CompareForecasts)
	b, err := json.Marshal(fs)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(append(b, m.Digest()...))
	analyses.mu.Lock()
	if analyses.last != nil && analyses.digest == digest {
		defer analyses.mu.Unlock()
		return analyses.last, nil
	}
	analyses.mu.Unlock()
	a, err, _ := analyses.flight.Do(string(digest[:]), func() (any, error) {
		// One computation serves every verification of these forecasts
		// waiting for it: none of them alone may cancel it.
		a, err := scoring.AnalyzeForecasts(context.Background(), fs, m, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		analyses.mu.Lock()
		analyses.digest, analyses.last = digest, a
		analyses.mu.Unlock()
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	return a.(*scoring.Analysis), nil
}
