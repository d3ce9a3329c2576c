package oracle

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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
	// Rescore is the forecast track's round scorer: a re-resolution of a
	// market frozen in scored rounds re-scores them with it, in the same
	// transaction (without it such a re-resolution is refused).
	Rescore arena.RoundScorer
	// Applied, when set, is told of every resolution applied to a market
	// once it is committed (the forecast track logs it in the
	// tamper-evident log, with any re-scored rounds).
	Applied func(ctx context.Context, r *arena.OracleResolution)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Resolve runs the panel on one binary, unresolved market and records the
// result: resolved when the policy allows it, else escalated.
func (s *Service) Resolve(ctx context.Context, marketID int64) (*arena.OracleResolution, error) {
	m, err := s.Store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	if !m.IsBinary() {
		return nil, arena.Errorf(arena.EINVALID, "market %d is not a Yes/No market; the oracle resolves binary markets only", marketID)
	}
	if m.Resolution != "" {
		return nil, arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s)", marketID, m.Resolution)
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
	if err := s.Store.SaveOracleResolution(ctx, rec); err != nil {
		return nil, err
	}
	s.Metrics.OracleRun(rec.Status)
	if rec.Status == arena.OracleAuto {
		s.applied(ctx, rec)
	}
	s.logger().Info("oracle", "market", m.ID, "status", rec.Status, "decision", v.Decision, "rule", v.Rule,
		"composite", v.Composite, "reasons", v.Reasons)
	return rec, nil
}

// Decide records an arbiter's decision on an escalated market, or a
// re-resolution of a resolved one, re-scoring with Rescore every forecast
// round the change touches.
func (s *Service) Decide(ctx context.Context, in arena.OracleDecisionInput) (*arena.OracleResolution, error) {
	in.Rescore = s.Rescore
	if in.At.IsZero() {
		in.At = s.now()
	}
	r, err := s.Store.DecideOracle(ctx, in)
	if err != nil {
		return nil, err
	}
	s.applied(ctx, r)
	s.logger().Info("oracle decision", "market", r.MarketID, "decision", r.Final, "arbiter", r.Arbiter, "seq", r.Seq, "rescored_rounds", len(r.Rescored))
	return r, nil
}

// Flag marks an unresolved market ambiguous or disputed: it is resolved
// through the panel (Pending picks it up once it has closed), never from
// the source, and neither track settles or scores it before.
func (s *Service) Flag(ctx context.Context, marketID int64, reason string) (arena.OracleFlag, error) {
	f := arena.OracleFlag{MarketID: marketID, Reason: strings.TrimSpace(reason), CreatedAt: s.now()}
	if err := s.Store.FlagOracle(ctx, f); err != nil {
		return arena.OracleFlag{}, err
	}
	s.logger().Info("market flagged for the oracle", "market", marketID, "reason", f.Reason)
	return f, nil
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

func (s *Service) applied(ctx context.Context, r *arena.OracleResolution) {
	if s.Applied != nil {
		s.Applied(ctx, r)
	}
}

// Pending lists the markets waiting for the oracle: closed or resolved
// binary markets that are ambiguous (the source reported no determinable
// winner, e.g. a disputed or 50-50 outcome, or an admin flagged them) and
// that no oracle run has looked at yet.
func (s *Service) Pending(ctx context.Context) ([]*arena.Market, error) {
	var out []*arena.Market
	for _, st := range []arena.MarketStatus{arena.StatusClosed, arena.StatusResolved} {
		ms, err := s.Store.Markets(ctx, arena.MarketFilter{Status: st})
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !m.Ambiguous || m.Resolution != "" || !m.IsBinary() {
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
