package demo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/store"
)

// The demo's oracle: its operator flags about one market in disputeEvery
// as disputed in the last disputeWithin before it closes (when rounds and
// portfolios may already hold it; a flagged market is not selected for
// new rounds), so neither track takes the simulator's resolution for it. Once the simulator has resolved it, the
// real oracle service resolves it with a panel of simulated resolvers
// under the default policy (automatic only when unanimous and
// confident); a market the panel escalates is decided by a simulated
// arbiter arbiterDelay later.
const (
	disputeEvery  = 15
	disputeWithin = 24 * time.Hour
	arbiterDelay  = 12 * time.Hour
	arbiter       = "demo arbiter (simulated)"
)

// simResolvers are the demo panel: each reads the simulator's outcome and
// reports it with its accuracy, deterministically per seed and question.
var simResolvers = []struct {
	id       string
	accuracy float64
}{{"sim-resolver-a", 0.97}, {"sim-resolver-b", 0.92}, {"sim-resolver-c", 0.85}}

type demoOracle struct {
	// panel is the simulated panel the arena's oracle service (svc) runs.
	panel *oracle.Panel
	svc   *oracle.Service
	db    *store.DB
	seed  int64
	// disputed are the flagged markets by source id, and truth the
	// simulator's resolution of each once it has one, by question.
	disputed map[string]int64
	truth    map[string]string
}

func newDemoOracle(seed int64, db *store.DB, o config.Options, now func() time.Time) (*demoOracle, error) {
	d := &demoOracle{db: db, seed: seed, disputed: map[string]int64{}, truth: map[string]string{}}
	var rs []*oracle.Resolver
	for _, r := range simResolvers {
		rs = append(rs, &oracle.Resolver{ID: r.id, Completer: &simResolver{seed: seed, accuracy: r.accuracy, id: r.id, truth: d.truth}})
	}
	ret, _, err := app.Retriever(o, app.Evidence{Spec: "question", Now: now})
	if err != nil {
		return nil, err
	}
	d.panel = &oracle.Panel{Resolvers: rs, Retriever: ret, Workers: len(rs), Now: now}
	return d, nil
}

// step flags the markets to dispute among those just synced (open and
// closing within disputeWithin), runs the panel on flagged markets the
// simulator has resolved, and decides the escalations that have waited
// arbiterDelay.
func (o *demoOracle) step(ctx context.Context, synced []*arena.Market, now time.Time) error {
	for _, m := range synced {
		if _, done := o.disputed[m.SourceID]; done || m.Status != arena.StatusOpen || m.CloseTime.Sub(now) > disputeWithin || !o.disputes(m.SourceID) {
			continue
		}
		stored, err := o.db.MarketBySource(ctx, m.Source, m.SourceID)
		if err != nil {
			return err
		}
		if _, err := o.svc.Flag(ctx, stored.ID, "demo: the operator disputes the simulator's resolution of this market"); err != nil {
			return err
		}
		o.disputed[m.SourceID] = stored.ID
	}
	for _, m := range synced {
		id, ok := o.disputed[m.SourceID]
		if !ok || m.Resolution == "" {
			continue
		}
		if _, known := o.truth[m.Question]; known {
			continue
		}
		o.truth[m.Question] = m.Resolution
		if _, err := o.svc.Resolve(ctx, id); err != nil {
			return fmt.Errorf("demo: oracle on market %d: %w", id, err)
		}
	}
	queue, err := o.svc.Queue(ctx)
	if err != nil {
		return err
	}
	for _, r := range queue {
		if now.Sub(r.CreatedAt) < arbiterDelay {
			continue
		}
		m, err := o.db.Market(ctx, r.MarketID)
		if err != nil {
			return err
		}
		d, ok := decisions[o.truth[m.Question]]
		if !ok {
			continue
		}
		if _, _, err := o.svc.Decide(ctx, arena.OracleDecisionInput{MarketID: r.MarketID, Decision: d, Arbiter: arbiter,
			Reason: "read the simulator's outcome"}); err != nil {
			return fmt.Errorf("demo: arbiter on market %d: %w", r.MarketID, err)
		}
	}
	return nil
}

// decisions are the arbiter's decisions for the simulator's resolutions.
var decisions = map[string]arena.OracleDecision{arena.Yes: arena.OracleYes, arena.No: arena.OracleNo, arena.Void: arena.OracleVoid}

// OracleSummary counts the demo's disputed markets: resolved by the panel
// alone, decided by the arbiter after an escalation, or still waiting.
type OracleSummary struct {
	Disputed int `json:"disputed"`
	Panel    int `json:"panel"`
	Arbiter  int `json:"arbiter"`
	Waiting  int `json:"waiting"`
}

func (o *demoOracle) summary(ctx context.Context) (OracleSummary, error) {
	s := OracleSummary{Disputed: len(o.disputed)}
	for _, id := range o.disputed {
		rs, err := o.svc.Resolutions(ctx, id)
		if arena.ErrorKind(err) == arena.ENOTFOUND || (err == nil && len(rs) == 0) {
			s.Waiting++
			continue
		}
		if err != nil {
			return s, err
		}
		switch rs[len(rs)-1].Status {
		case arena.OracleEscalated:
			s.Waiting++
		case arena.OracleDecided:
			s.Arbiter++
		default:
			s.Panel++
		}
	}
	return s, nil
}

// disputes picks the markets to flag from the seed and the source id.
func (o *demoOracle) disputes(sourceID string) bool {
	return draw(o.seed, "dispute", sourceID) < 1.0/disputeEvery
}

// draw is a uniform number in [0, 1) fixed by its parts.
func draw(seed int64, parts ...string) float64 {
	h := sha256.New()
	binary.Write(h, binary.BigEndian, seed)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return float64(binary.BigEndian.Uint64(h.Sum(nil))>>11) / (1 << 53)
}

// simResolver is a simulated panel member behind the llm.Completer
// interface: it finds the question in the prompt and answers the
// simulator's outcome with its accuracy (a void market, which no
// resolver can call YES or NO, gets TOO_EARLY), in the JSON the oracle
// parses. It calls no model and costs nothing.
type simResolver struct {
	seed     int64
	id       string
	accuracy float64
	truth    map[string]string
}

var _ llm.Completer = (*simResolver)(nil)

func (s *simResolver) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	q := req.User
	if i := strings.Index(q, "Question: "); i >= 0 {
		q = q[i+len("Question: "):]
	}
	q, _, _ = strings.Cut(q, "\n")
	truth, ok := s.truth[q]
	if !ok {
		return llm.Response{}, fmt.Errorf("demo: simulated resolver: no outcome for question %q", q)
	}
	u := draw(s.seed, s.id, q)
	decision, conf, why := decisions[truth], 0.85+0.14*u, "The simulated quantity at close settles it."
	switch {
	case truth == arena.Void:
		decision, conf, why = arena.OracleTooEarly, 0.6, "The market was voided: neither side can be called."
	case u >= s.accuracy:
		decision, conf, why = map[string]arena.OracleDecision{arena.Yes: arena.OracleNo, arena.No: arena.OracleYes}[truth], 0.55+0.2*u, "Misread the simulated quantity."
	}
	b, err := json.Marshal(map[string]any{"decision": decision, "confidence": conf, "reasoning": why})
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: string(b), Model: s.id}, nil
}
