package forecast

import (
	"context"

	"github.com/forecast-arena/arena"
)

// Read side of the service: what the API and dashboard show. Handlers call
// these rather than the store, so the service decides what is visible when.

// Rounds lists rounds with the given status ("" for any), newest first, at
// most limit of them (0: no limit), as the API shows them.
func (s *Service) Rounds(ctx context.Context, status string, limit int) ([]RoundJSON, error) {
	switch status {
	case "", arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated:
	default:
		return nil, arena.Errorf(arena.EINVALID, "status %q: want open, revealing, scoring, scored or invalidated", status)
	}
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: status, Now: s.now(), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]RoundJSON, 0, len(rounds))
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
func (s *Service) Round(ctx context.Context, id uint64) (RoundJSON, error) {
	rd, err := s.Store.Round(ctx, id)
	if err != nil {
		return RoundJSON{}, err
	}
	return s.View(ctx, rd)
}

// Nonce returns the next nonce an agent must sign with.
func (s *Service) Nonce(ctx context.Context, agent string) (uint64, error) {
	a, err := ParseAddress(agent)
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
