package oracle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/metrics"
)

// Store is what the oracle service reads and writes.
type Store interface {
	Market(ctx context.Context, id int64) (*arena.Market, error)
	Markets(ctx context.Context, f arena.MarketFilter) ([]*arena.Market, error)
	arena.OracleStore
}

// Service resolves markets with a panel under a policy and records every
// run; a run that escalates waits in the arbitration queue.
type Service struct {
	Store  Store
	Panel  *Panel
	Policy arena.OraclePolicy
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics counts recorded runs by status, escalations included (may be nil).
	Metrics *metrics.Metrics
	// Tracks are the tracks' hooks (rounds.Rescore, trading.Resettle,
	// rounds.LogResolution), wired by the composition root: every
	// resolution applied to a market runs them in the transaction that
	// records it, so that the re-scores and re-settlements of a changed
	// resolution (a re-resolution, a decided dispute) and the log's
	// entries commit with it or not at all. Without them a change of a
	// resolution is refused.
	Tracks []arena.ResolutionHook
	// DisputeHooks run in the transaction that records a dispute (the
	// forecast track logs who disputed what, why and when).
	DisputeHooks []arena.DisputeHook
}

// errNoTracks: the service was built without the tracks' hooks, so a
// change of a resolution could not re-score and re-settle what it must.
var errNoTracks = errors.New("oracle: no track hooks are wired to re-score and re-settle a changed resolution")

// Eligible is the rule for letting the oracle resolve a market, wherever
// the request comes from (Resolve for the command, Pending for the serve
// job): a closed
// binary market that is ambiguous and unresolved (the source reported no
// winner, or an admin flagged it), or whose resolution by its source an
// admin disputed. Anything else is refused with the reason, before any
// model is asked or anything is stored.
func Eligible(m *arena.Market, disputed bool) error {
	switch {
	case !m.IsBinary():
		return arena.Errorf(arena.EINVALID, "market %d is not a Yes/No market; the oracle resolves binary markets only", m.ID)
	case m.Status == arena.StatusOpen && m.CloseTime.IsZero():
		return arena.Errorf(arena.ECONFLICT, "market %d is still open; the oracle resolves closed markets only", m.ID)
	case m.Status == arena.StatusOpen:
		return arena.Errorf(arena.ECONFLICT, "market %d is still open (close time %s); the oracle resolves closed markets only",
			m.ID, m.CloseTime.UTC().Format(time.RFC3339))
	case disputed:
		return nil
	case m.Resolution != "":
		return arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s); dispute it to have the oracle revise it", m.ID, m.Resolution)
	case !m.Ambiguous:
		return arena.Errorf(arena.ECONFLICT, "market %d is not ambiguous, flagged or disputed; the oracle resolves only those", m.ID)
	}
	return nil
}

// disputed reports whether an admin disputed the market's resolution.
func (s *Service) disputed(ctx context.Context, marketID int64) (bool, error) {
	_, err := s.Store.OracleDispute(ctx, marketID)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return false, nil
	}
	return err == nil, err
}

func (s *Service) now() time.Time {
	return arena.Clock(s.Now)().UTC()
}

func (s *Service) logger() *slog.Logger {
	return arena.Logger(s.Logger)
}

// Resolve runs the panel on one market the oracle may resolve (see
// Eligible) and records the result: applied when the policy allows it,
// else escalated. On a disputed market an applied decision re-scores and
// re-settles what the source's resolution settled and scored.
func (s *Service) Resolve(ctx context.Context, marketID int64) (*arena.OracleResolution, error) {
	m, err := s.Store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	disputed, err := s.disputed(ctx, marketID)
	if err != nil {
		return nil, err
	}
	if err := Eligible(m, disputed); err != nil {
		return nil, err
	}
	if disputed && len(s.Tracks) == 0 {
		return nil, errNoTracks
	}
	if s.Panel == nil {
		return nil, arena.Errorf(arena.EINVALID, "oracle: no resolver panel (set ARENA_ORACLE_AGENTS)")
	}
	if _, err := ParseArch(s.Policy.Architecture, s.Panel.Agents()); err != nil {
		return nil, arena.Errorf(arena.EINVALID, "oracle policy: %v", err)
	}
	if prev, err := s.Store.OracleResolutions(ctx, marketID); err == nil && len(prev) > 0 {
		return nil, arena.Errorf(arena.ECONFLICT, "market %d already went through the oracle (status %s)", marketID, prev[len(prev)-1].Status)
	} else if err != nil && arena.ErrorKind(err) != arena.ENOTFOUND {
		return nil, err
	}
	p := *s.Panel
	p.Deliberate = s.Policy.Architecture == ArchDeliberative
	p.Progress = nil
	q := QuestionOf(m)
	q.ID = fmt.Sprint(m.ID)
	res := p.Run(ctx, []Question{q})[0]
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := Verdict(s.Policy, res, p.Agents())
	v.At = s.now()
	rec := &arena.OracleResolution{MarketID: m.ID, Evidence: res.Packet, Verdict: v, Policy: s.Policy, CreatedAt: v.At}
	if err := s.Store.SaveOracleResolution(ctx, rec, s.Tracks...); err != nil {
		return nil, err
	}
	s.Metrics.OracleRun(rec.Status)
	s.logger().Info("oracle", "market", m.ID, "status", rec.Status, "decision", v.Decision, "rule", v.Rule,
		"composite", v.Composite, "reasons", v.Reasons)
	return rec, nil
}

// Decide records an arbiter's decision on an escalated or disputed
// market, or a re-resolution of one the oracle resolved, and reports
// whether it changed anything. A re-resolution applies only to the
// resolution it revises (in.Revises, or the latest when the request is
// read): when another was recorded since, it is refused with
// CodeResolutionChanged. A decision already in force (a re-resolution to
// it, or the decision another arbiter just made) is a no-op: it returns
// that resolution and records and logs nothing.
func (s *Service) Decide(ctx context.Context, in arena.OracleDecisionInput) (*arena.OracleResolution, bool, error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	if in.At.IsZero() {
		in.At = s.now()
	}
	if in.ReResolve && in.Revises == 0 {
		hist, err := s.Store.OracleResolutions(ctx, in.MarketID)
		if err != nil && arena.ErrorKind(err) != arena.ENOTFOUND {
			return nil, false, err
		}
		if len(hist) > 0 {
			in.Revises = hist[len(hist)-1].Seq
		}
	}
	if len(s.Tracks) == 0 {
		disputed, err := s.disputed(ctx, in.MarketID)
		if err != nil {
			return nil, false, err
		}
		if in.ReResolve || disputed {
			return nil, false, errNoTracks
		}
	}
	r, changed, err := s.Store.DecideOracle(ctx, in, s.Tracks...)
	if err != nil {
		return nil, false, err
	}
	if !changed {
		s.logger().Info("oracle decision already in force; nothing recorded", "market", r.MarketID, "decision", r.Final, "seq", r.Seq, "arbiter", in.Arbiter)
		return r, false, nil
	}
	s.logger().Info("oracle decision", "market", r.MarketID, "decision", r.Final, "arbiter", r.Arbiter, "seq", r.Seq, "rescored_rounds", len(r.Rescored))
	return r, true, nil
}

// Flag marks an unresolved market ambiguous or disputed: it is resolved
// through the panel (Pending picks it up once it has closed), never from
// the source, and neither track settles or scores it before.
func (s *Service) Flag(ctx context.Context, marketID int64, reason string) (arena.OracleFlag, error) {
	f := arena.OracleFlag{MarketID: marketID, Reason: reason, CreatedAt: s.now()}
	if err := f.Validate(); err != nil {
		return arena.OracleFlag{}, err
	}
	if err := s.Store.FlagOracle(ctx, f); err != nil {
		return arena.OracleFlag{}, err
	}
	s.logger().Info("market flagged for the oracle", "market", marketID, "reason", f.Reason)
	return f, nil
}

// Dispute records an admin's dispute of a market's resolution by its
// source (who, when, why), and reports whether it recorded it: the market
// becomes eligible for the oracle (Pending picks it up) and for an
// arbiter, whose decision is applied as a re-resolution, re-scoring and
// re-settling what it changes. The same dispute again (the same admin and
// reason) records nothing and returns the recorded one.
func (s *Service) Dispute(ctx context.Context, marketID int64, admin, reason string) (*arena.OracleDispute, bool, error) {
	d := &arena.OracleDispute{MarketID: marketID, Admin: admin, Reason: reason, CreatedAt: s.now()}
	if err := d.Validate(); err != nil {
		return nil, false, err
	}
	recorded, err := s.Store.DisputeOracle(ctx, d, s.DisputeHooks...)
	if err != nil {
		return nil, false, err
	}
	if recorded {
		s.logger().Info("market resolution disputed", "market", marketID, "resolution", d.Resolution, "admin", d.Admin, "reason", d.Reason)
	}
	return d, recorded, nil
}

// Disputes lists the disputed markets, oldest first.
func (s *Service) Disputes(ctx context.Context) ([]arena.OracleDispute, error) {
	return s.Store.OracleDisputes(ctx)
}

// Accuracy is the oracle's accuracy against human audits, from every
// stored resolution (see OracleAccuracy).
func (s *Service) Accuracy(ctx context.Context) (Accuracy, error) {
	all, err := s.Store.AllOracleResolutions(ctx)
	if err != nil {
		return Accuracy{}, err
	}
	var hs [][]arena.OracleResolution
	for i, r := range all {
		if i == 0 || all[i-1].MarketID != r.MarketID {
			hs = append(hs, nil)
		}
		hs[len(hs)-1] = append(hs[len(hs)-1], r)
	}
	return OracleAccuracy(hs), nil
}

// Flags lists the markets an admin flagged, oldest first.
func (s *Service) Flags(ctx context.Context) ([]arena.OracleFlag, error) {
	return s.Store.OracleFlags(ctx)
}

// Queue lists the markets waiting for an arbiter, oldest first.
func (s *Service) Queue(ctx context.Context) ([]arena.OracleResolution, error) {
	return s.Store.OracleQueue(ctx)
}

// Recent returns the n latest resolutions of any market, newest first.
func (s *Service) Recent(ctx context.Context, n int) ([]arena.OracleResolution, error) {
	return s.Store.RecentOracleResolutions(ctx, n)
}

// Resolutions returns a market's oracle history, oldest first.
func (s *Service) Resolutions(ctx context.Context, marketID int64) ([]arena.OracleResolution, error) {
	return s.Store.OracleResolutions(ctx, marketID)
}

// Pending lists the markets waiting for the oracle: those it may resolve
// (see Eligible) that no oracle run has looked at yet.
func (s *Service) Pending(ctx context.Context) ([]*arena.Market, error) {
	ds, err := s.Store.OracleDisputes(ctx)
	if err != nil {
		return nil, err
	}
	disputed := make(map[int64]bool, len(ds))
	for _, d := range ds {
		disputed[d.MarketID] = true
	}
	var out []*arena.Market
	for _, st := range []arena.MarketStatus{arena.StatusClosed, arena.StatusResolved} {
		ms, err := s.Store.Markets(ctx, arena.MarketFilter{Status: st})
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if Eligible(m, disputed[m.ID]) != nil {
				continue
			}
			if _, err := s.Store.OracleResolutions(ctx, m.ID); arena.ErrorKind(err) == arena.ENOTFOUND {
				out = append(out, m)
			} else if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// RunPending resolves every pending market; one market's failure does not
// stop the others and is returned at the end.
func (s *Service) RunPending(ctx context.Context) (int, error) {
	ms, err := s.Pending(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, m := range ms {
		if _, err := s.Resolve(ctx, m.ID); err != nil {
			s.logger().Warn("oracle run failed", "market", m.ID, "err", err)
			if first == nil {
				first = err
			}
			continue
		}
		n++
	}
	return n, first
}
