package oracle

import (
	"context"
	"sync"
	"time"

	arena "github.com/forecast-arena/arena"
)

// Panel runs resolvers over questions with a bounded pool of workers.
// Round 1 is one call per resolver and question, shared by every
// architecture; with Deliberate, each resolver that answered in round 1
// (YES, NO or TOO_EARLY) gets exactly one round-2 call once the whole
// panel has answered that question.
type Panel struct {
	Resolvers  []*Resolver
	Retriever  arena.Retriever
	Workers    int  // default 1
	Deliberate bool // make the round-2 calls
	// Progress, if set, is called after each finished task with the tasks
	// done of the total planned: per question one evidence retrieval, one
	// call per resolver and, deliberating, one more per resolver. Work
	// that turns out not to be needed (round 2 of a resolver that did not
	// answer, calls after a failed retrieval) counts as done, so the
	// total is known from the start.
	Progress func(done, total int)
	Now      func() time.Time
}

// Result is everything the panel produced on one question.
type Result struct {
	Question Question
	Packet   arena.EvidencePacket
	// EvidenceErr is set when retrieval failed; then every round-1 vote is
	// a failure and no model was called.
	EvidenceErr string
	Round1      []arena.OracleVote // one per resolver, in panel order
	Round2      []arena.OracleVote // one per resolver that answered round 1, in panel order
	At          time.Time
}

// Agents returns the panel's resolver ids in order.
func (p *Panel) Agents() []string {
	ids := make([]string, len(p.Resolvers))
	for i, r := range p.Resolvers {
		ids[i] = r.ID
	}
	return ids
}

type task struct {
	q, r, round int // r < 0: evidence retrieval
}

// queue is an unbounded FIFO with priority pushes at the front, so work
// that finishes a question (model calls) runs before new questions start.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []task
	pending int // pushed and not yet finished
}

func (q *queue) push(front bool, ts ...task) {
	q.mu.Lock()
	if front {
		q.items = append(append([]task(nil), ts...), q.items...)
	} else {
		q.items = append(q.items, ts...)
	}
	q.pending += len(ts)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop blocks until a task is available; ok is false when all work is done.
func (q *queue) pop() (task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && q.pending > 0 {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return task{}, false
	}
	t := q.items[0]
	q.items = q.items[1:]
	return t, true
}

func (q *queue) done() {
	q.mu.Lock()
	q.pending--
	last := q.pending == 0
	q.mu.Unlock()
	if last {
		q.cond.Broadcast()
	}
}

// Run resolves every question and returns the results in input order.
// It never fails: retrieval and model errors are recorded in the results.
// When ctx ends, the remaining calls are recorded as failures quickly.
func (p *Panel) Run(ctx context.Context, qs []Question) []Result {
	now := arena.Clock(p.Now)
	workers := max(p.Workers, 1)
	res := make([]Result, len(qs))
	remaining := make([]int, len(qs)) // round-1 calls outstanding per question
	var mu sync.Mutex
	var done, total int
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	perQuestion := 1 + len(p.Resolvers)
	if p.Deliberate {
		perQuestion += len(p.Resolvers)
	}
	total = len(qs) * perQuestion
	for i := range qs {
		res[i] = Result{Question: qs[i], Round1: make([]arena.OracleVote, len(p.Resolvers))}
		remaining[i] = len(p.Resolvers)
	}
	tick := func(skipped int) {
		mu.Lock()
		done += 1 + skipped
		d, t := done, total
		mu.Unlock()
		if p.Progress != nil {
			p.Progress(d, t)
		}
	}
	initial := make([]task, len(qs))
	for i := range qs {
		initial[i] = task{q: i, r: -1}
	}
	if len(initial) == 0 {
		return res
	}
	q.push(false, initial...)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				t, ok := q.pop()
				if !ok {
					return
				}
				skipped := p.runTask(ctx, t, qs, res, remaining, &mu, q, now)
				tick(skipped)
				q.done()
			}
		})
	}
	wg.Wait()
	agents := p.Agents()
	for i := range res {
		SortRound2(agents, res[i].Round2)
	}
	return res
}

// runTask runs one task, queues the tasks it leads to, and returns how many
// of the planned tasks it made unnecessary.
func (p *Panel) runTask(ctx context.Context, t task, qs []Question, res []Result, remaining []int, mu *sync.Mutex, q *queue, now func() time.Time) int {
	question := qs[t.q]
	if t.r < 0 {
		var pk arena.EvidencePacket
		var err error
		if p.Retriever != nil {
			pk, err = p.Retriever.Retrieve(ctx, question.EvidenceQuery())
		} else {
			pk = arena.EvidencePacket{Question: question.Text, Criteria: question.Criteria, RetrievedAt: now().UTC(), Sources: []arena.EvidenceSource{}}
		}
		mu.Lock()
		res[t.q].Packet = pk
		res[t.q].At = now().UTC()
		mu.Unlock()
		if err != nil {
			mu.Lock()
			res[t.q].EvidenceErr = err.Error()
			for i, r := range p.Resolvers {
				res[t.q].Round1[i] = arena.OracleVote{Agent: r.ID, Round: 1, Failure: "evidence: " + err.Error()}
			}
			mu.Unlock()
			if p.Deliberate {
				return 2 * len(p.Resolvers)
			}
			return len(p.Resolvers)
		}
		calls := make([]task, len(p.Resolvers))
		for i := range p.Resolvers {
			calls[i] = task{q: t.q, r: i, round: 1}
		}
		q.push(true, calls...)
		return 0
	}
	mu.Lock()
	pk := res[t.q].Packet
	var peers []Peer
	if t.round == 2 {
		peers = []Peer{}
		for i, v := range res[t.q].Round1 {
			if i != t.r && v.Answered() {
				peers = append(peers, Peer{Decision: v.Decision, Confidence: v.Confidence, Reasoning: v.Reasoning})
			}
		}
	}
	mu.Unlock()
	v := p.Resolvers[t.r].Resolve(ctx, question, pk, t.round, peers)
	mu.Lock()
	defer mu.Unlock()
	if t.round == 2 {
		res[t.q].Round2 = append(res[t.q].Round2, v)
		return 0
	}
	res[t.q].Round1[t.r] = v
	remaining[t.q]--
	if remaining[t.q] > 0 || !p.Deliberate {
		return 0
	}
	var r2 []task
	for i, v := range res[t.q].Round1 {
		if v.Answered() {
			r2 = append(r2, task{q: t.q, r: i, round: 2})
		}
	}
	if len(r2) > 0 {
		q.push(true, r2...)
	}
	return len(p.Resolvers) - len(r2)
}

// SortRound2 puts round-2 votes in panel order (they finish in any order).
func SortRound2(agents []string, votes []arena.OracleVote) {
	pos := make(map[string]int, len(agents))
	for i, a := range agents {
		pos[a] = i
	}
	for i := 1; i < len(votes); i++ {
		for j := i; j > 0 && pos[votes[j].Agent] < pos[votes[j-1].Agent]; j-- {
			votes[j], votes[j-1] = votes[j-1], votes[j]
		}
	}
}

// Verdict applies an architecture and the escalation policy to a result.
func Verdict(pol arena.OraclePolicy, r Result, agents []string) arena.OracleVerdict {
	SortRound2(agents, r.Round2)
	o := Decide(pol.Architecture, r.Round1, r.Round2)
	why := Escalate(pol, r.Round1)
	if o.Decision == "" && len(why) == 0 {
		why = append(why, ReasonFailure)
	}
	return arena.OracleVerdict{
		Architecture: pol.Architecture,
		Decision:     o.Decision,
		Rule:         o.Rule,
		Unanimous:    Unanimous(r.Round1),
		Composite:    Composite(r.Round1),
		Escalate:     len(why) > 0,
		Reasons:      why,
		Round1:       r.Round1,
		Round2:       r.Round2,
		At:           r.At,
	}
}
