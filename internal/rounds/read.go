package rounds

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
)

// Read side of the service: what the API and dashboard show. Handlers call
// these rather than the store, so the service decides what is visible when.

// Rounds lists rounds with the given status ("" for any), newest first, at
// most limit of them (0: no limit), as the API shows them.
func (s *Service) Rounds(ctx context.Context, status string, limit int) ([]forecast.RoundJSON, error) {
	if err := checkStatus(status); err != nil {
		return nil, err
	}
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: status, Now: s.now(), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]forecast.RoundJSON, 0, len(rounds))
	for _, rd := range rounds {
		v, err := s.View(ctx, rd)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Round returns one round as the API shows it (ENOTFOUND when absent).
func (s *Service) Round(ctx context.Context, id uint64) (forecast.RoundJSON, error) {
	rd, err := s.Store.Round(ctx, id)
	if err != nil {
		return forecast.RoundJSON{}, err
	}
	return s.View(ctx, rd)
}

// Triggered reports whether a round's outcomes are triggered: from then on
// its submissions are public.
func (s *Service) Triggered(ctx context.Context, id uint64) (bool, error) {
	r, err := s.Store.Round(ctx, id)
	if err != nil {
		return false, err
	}
	return !r.TriggeredAt.IsZero(), nil
}

// Sealed reports whether a log entry's leaf must wait for its round's
// trigger: until then nothing shows a round's commits or reveals (a
// reveal's predictions and salt, a commit's signature); the leaf hash is
// enough to check inclusion, and the leaf itself is published after.
// seen caches rounds already looked up (round id → still sealed) across
// the entries of one read.
func (s *Service) Sealed(ctx context.Context, kind string, leaf []byte, seen map[uint64]bool) (bool, error) {
	round, sealable, ok := forecast.SealedUntilTrigger(kind, leaf)
	if !sealable {
		return false, nil
	}
	if !ok {
		return true, nil // when in doubt, keep it sealed
	}
	hide, known := seen[round]
	if !known {
		triggered, err := s.Triggered(ctx, round)
		if err != nil {
			return false, err
		}
		hide = !triggered
		seen[round] = hide
	}
	return hide, nil
}

// SealedAny reports whether any of es is Sealed: a tile's entry bundle
// that holds one waits for the trigger too.
func (s *Service) SealedAny(ctx context.Context, es []arena.LogEntry) (bool, error) {
	seen := map[uint64]bool{}
	for _, e := range es {
		if hide, err := s.Sealed(ctx, e.Kind, e.Data, seen); hide || err != nil {
			return hide, err
		}
	}
	return false, nil
}

// Nonce returns the next nonce an agent must sign with.
func (s *Service) Nonce(ctx context.Context, agent string) (uint64, error) {
	a, err := forecast.ParseAddress(agent)
	if err != nil {
		return 0, err
	}
	return s.Store.Nonce(ctx, a.Hex())
}

// ScoredRounds counts the rounds scored so far.
func (s *Service) ScoredRounds(ctx context.Context) (int, error) {
	rs, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScored, Now: s.now()})
	if err != nil {
		return 0, err
	}
	return len(rs), nil
}

// RoundEntry is one agent's part in a round as the round page shows it.
// Predictions and reasoning appear only once the round is triggered, so
// nothing an agent could still act on is published early.
type RoundEntry struct {
	Agent       string    `json:"agent"`
	Committed   bool      `json:"committed"`
	Revealed    bool      `json:"revealed"`
	Predictions []float64 `json:"predictions"` // Yes probabilities by market index; null before the trigger
	Reasoning   []string  `json:"reasoning"`   // null before the trigger or without an upload
}

// RoundDetail is a round with its submissions' public part.
type RoundDetail struct {
	Round   *arena.Round
	View    forecast.RoundJSON
	Markets map[int64]*arena.Market
	// Commits counts the commits so far; Entries are filled after the
	// trigger only (before it, who committed what stays private).
	Commits int
	Entries []RoundEntry
	Scores  []forecast.ScoreJSON
}

// RoundDetail loads everything the round page shows.
func (s *Service) RoundDetail(ctx context.Context, id uint64) (*RoundDetail, error) {
	rd, err := s.Store.Round(ctx, id)
	if err != nil {
		return nil, err
	}
	v, err := s.View(ctx, rd)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		ids[i] = m.MarketID
	}
	ms, err := s.Store.MarketsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	subs, err := s.Store.Submissions(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &RoundDetail{Round: rd, View: v, Markets: ms, Commits: len(subs), Entries: []RoundEntry{}, Scores: []forecast.ScoreJSON{}}
	if rd.TriggeredAt.IsZero() {
		return d, nil
	}
	for _, sub := range subs {
		e := RoundEntry{Agent: sub.Agent, Committed: true, Revealed: sub.Revealed()}
		for _, p := range sub.Predictions {
			e.Predictions = append(e.Predictions, float64(p)/forecast.MaxBps)
		}
		if sub.Reasoning != "" {
			if err := json.Unmarshal([]byte(sub.Reasoning), &e.Reasoning); err != nil {
				return nil, fmt.Errorf("rounds: round %d: stored reasoning of %s: %w", id, sub.Agent, err)
			}
		}
		d.Entries = append(d.Entries, e)
	}
	if d.Scores, err = s.Scores(ctx, id); err != nil {
		return nil, err
	}
	return d, nil
}

// ScoredRoundList returns the n most recently created scored rounds.
func (s *Service) ScoredRoundList(ctx context.Context, n int) ([]*arena.Round, error) {
	return s.Store.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScored, Now: s.now(), Limit: n})
}

// RoundPage lists rounds like Rounds, starting below the round id before
// (0: from the newest): cursor pagination over ids, newest first.
func (s *Service) RoundPage(ctx context.Context, status string, before uint64, limit int) ([]forecast.RoundJSON, error) {
	if before == 0 {
		return s.Rounds(ctx, status, limit)
	}
	if err := checkStatus(status); err != nil {
		return nil, err
	}
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: status, Now: s.now()})
	if err != nil {
		return nil, err
	}
	out := []forecast.RoundJSON{}
	for _, rd := range rounds {
		if rd.ID >= before {
			continue
		}
		if len(out) == limit {
			break
		}
		v, err := s.View(ctx, rd)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func checkStatus(status string) error {
	switch status {
	case "", arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated:
		return nil
	}
	return arena.Errorf(arena.EINVALID, "status %q: want open, revealing, scoring, scored or invalidated", status)
}

// AgentActivity counts an agent's commits for its page. Which rounds an
// agent committed to stays private until their outcomes are triggered,
// as on the round pages: before that only counts are shown, which tell no
// more than the agent's public nonce.
type AgentActivity struct {
	Commits         int // accepted commits, in any round
	Waiting         int // of them, in rounds whose outcomes are not triggered yet
	WaitingRevealed int // of those, revealed
}

// AgentActivity counts the commits of agent, a checksummed address.
func (s *Service) AgentActivity(ctx context.Context, agent string) (AgentActivity, error) {
	var out AgentActivity
	subs, err := s.Store.AgentSubmissions(ctx, agent)
	if err != nil || len(subs) == 0 {
		return out, err
	}
	waiting := map[uint64]bool{}
	for _, st := range []string{arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring} {
		rs, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: st, Now: s.now()})
		if err != nil {
			return out, err
		}
		for _, r := range rs {
			waiting[r.ID] = true
		}
	}
	out.Commits = len(subs)
	for _, sub := range subs {
		if waiting[sub.RoundID] {
			out.Waiting++
			if sub.Revealed {
				out.WaitingRevealed++
			}
		}
	}
	return out, nil
}
