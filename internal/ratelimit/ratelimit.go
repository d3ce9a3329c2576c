// Package ratelimit answers the API's rate-limit questions from a
// per-process copy of the token buckets the database keeps for every
// replica (arena.RateStore), so that most requests cost no database write.
//
// Each process grants up to Slack(l) tokens of a bucket on its own, from
// its copy, settling in the background once it has granted half of that:
// the store subtracts what it granted, and the answer refreshes the copy.
// Background settlements of all buckets go to the store together, one
// transaction a batch. A request finds the slack used up only when
// settlements lag; it then settles and takes its token in the database
// itself.
//
// A process's copy is never lower than what is truly left (other replicas
// only take from the bucket), so a refusal from the copy is always right;
// a grant from it can be one the bucket would have refused only when
// other replicas took tokens since the copy's last answer. Across N
// replicas a burst can therefore pass the limit by at most N × Slack(l),
// and what passed is then owed: the bucket goes into debt (down to minus
// its burst) and refuses until refills pay it back. With one replica, or
// a burst under 20, every decision is exact, but for the first slack
// after a restart (a new copy presumes its bucket full).
package ratelimit

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// SlackDivisor sets the grants a process makes on its own: a twentieth of
// the burst (with the API's default limits, 300 per address and 30 per
// agent, settled every 150 and 15).
const SlackDivisor = 20

// Slack is how many tokens of a bucket with limit l one process grants
// on its own before it settles with the store.
func Slack(l arena.RateLimit) int { return int(l.Burst / SlackDivisor) }

// Limiter keeps the per-process copies. The zero value is not usable;
// set Store.
type Limiter struct {
	Store arena.RateStore
	// MaxCopies bounds the copies kept (0: DefaultMaxCopies).
	MaxCopies int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastPrune time.Time

	// Background settlements wait in queue; one flusher at a time sends
	// all that are waiting as one batch (one transaction), so the store
	// sees a few writes a second however many requests come in.
	qmu      sync.Mutex
	queue    []queued
	flushing bool
	settling sync.WaitGroup
}

type queued struct {
	b *bucket
	s arena.RateSettlement
}

// bucket is a process's copy of one shared bucket.
type bucket struct {
	mu       sync.Mutex
	tokens   float64   // the copy's content at at
	at       time.Time // the copy's clock
	spent    int       // granted from the copy, not yet sent to the store
	inflight int       // granted from the copy, being settled
	busy     bool      // a settlement is in flight
	settled  *sync.Cond
	limit    arena.RateLimit
}

// DefaultMaxCopies is how many buckets a process keeps a copy of. Keys
// are client addresses and agents, so a flood from ever new addresses
// would otherwise grow the process until the sweep: past the bound, a
// bucket without a copy takes each token in the store itself (a database
// write a request) until idle copies are swept.
const DefaultMaxCopies = 100_000

// Take takes a token for key. A store error leaves what the copy granted
// owed (it is settled next time) and is returned for the caller to decide.
func (lim *Limiter) Take(ctx context.Context, key string, l arena.RateLimit, now time.Time) (arena.RateDecision, error) {
	b := lim.bucket(key, l, now)
	if b == nil {
		ds, err := lim.Store.SettleTokens(ctx, []arena.RateSettlement{{Key: key, Limit: l, Take: true, At: now}})
		if err != nil {
			return arena.RateDecision{}, err
		}
		return ds[0], nil
	}
	b.mu.Lock()
	b.limit = l
	slack := Slack(l)
	for {
		if b.spent+b.inflight < slack {
			b.refill(l, now)
			d := arena.RateDecision{Remaining: b.tokens}
			if b.tokens >= 1 {
				b.tokens--
				b.spent++
				d = arena.RateDecision{Allowed: true, Remaining: b.tokens}
				// Settle in the background once half the slack is spent,
				// so that requests seldom wait for the database.
				if !b.busy && 2*b.spent >= slack {
					n := b.spent
					b.spent, b.inflight, b.busy = 0, n, true
					lim.enqueue(queued{b, arena.RateSettlement{Key: key, Limit: l, Spent: n, At: now}})
				}
			}
			b.mu.Unlock()
			return d, nil
		}
		if !b.busy {
			break
		}
		// The slack is used up: wait for the settlement in flight rather
		// than send another.
		b.settled.Wait()
	}
	// The slack is used up: settle and take in the request.
	n := b.spent
	b.spent, b.inflight, b.busy = 0, n, true
	b.mu.Unlock()
	ds, err := lim.Store.SettleTokens(ctx, []arena.RateSettlement{{Key: key, Limit: l, Spent: n, Take: true, At: now}})
	b.mu.Lock()
	defer b.mu.Unlock()
	var d arena.RateDecision
	if err == nil {
		d = ds[0]
	}
	b.settle(n, d.Remaining, now, err)
	return d, err
}

// settle records the store's answer to a settlement of n grants: the copy
// becomes what the store holds, as of at, less what the copy granted
// while the answer was on its way; a failure keeps the n grants owed for
// the next settlement.
func (b *bucket) settle(n int, left float64, at time.Time, err error) {
	b.inflight -= n
	b.busy = false
	b.settled.Broadcast()
	if err != nil {
		b.spent += n
		return
	}
	b.tokens = left - float64(b.spent+b.inflight)
	if at.After(b.at) {
		b.at = at
	}
}

// flushTimeout bounds a background batch: requests waiting on a bucket's
// settlement must not wait on a stuck database for ever.
const flushTimeout = 10 * time.Second

// flushLinger is how long a background settlement waits for others to
// share its transaction: at most 50 batches a second.
const flushLinger = 20 * time.Millisecond

// enqueue queues a background settlement and starts the flusher if none
// runs.
func (lim *Limiter) enqueue(q queued) {
	lim.qmu.Lock()
	defer lim.qmu.Unlock()
	lim.queue = append(lim.queue, q)
	if !lim.flushing {
		lim.flushing = true
		lim.settling.Add(1)
		go lim.flush()
	}
}

// flush sends what is queued, batch after batch, until the queue is
// empty. A failed batch keeps its grants owed for the next settlement.
func (lim *Limiter) flush() {
	defer lim.settling.Done()
	for {
		// Linger a moment so that one batch carries the settlements of
		// many buckets.
		time.Sleep(flushLinger)
		lim.qmu.Lock()
		batch := lim.queue
		lim.queue = nil
		if len(batch) == 0 {
			lim.flushing = false
			lim.qmu.Unlock()
			return
		}
		lim.qmu.Unlock()
		ss := make([]arena.RateSettlement, len(batch))
		for i, q := range batch {
			ss[i] = q.s
		}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		ds, err := lim.Store.SettleTokens(ctx, ss)
		cancel()
		for i, q := range batch {
			var left float64
			if err == nil {
				left = ds[i].Remaining
			}
			q.b.mu.Lock()
			q.b.settle(q.s.Spent, left, q.s.At, err)
			q.b.mu.Unlock()
		}
	}
}

// Wait returns when no background settlement is in flight.
func (lim *Limiter) Wait() { lim.settling.Wait() }

// refill adds what the time since the copy's clock refilled, up to the
// burst; an earlier stamp (concurrent requests) adds nothing.
func (b *bucket) refill(l arena.RateLimit, now time.Time) {
	if dt := now.Sub(b.at); dt > 0 {
		b.tokens = min(l.Burst, b.tokens+dt.Seconds()*l.PerSecond)
		b.at = now
	}
}

// pruneEvery is how often the copies are swept. A copy idle for twice the
// time its bucket takes to refill from empty is dropped: the shared bucket
// is full again whatever the copy owed, so forgetting it changes nothing.
const pruneEvery = time.Minute

// bucket returns key's copy, made if need be; nil when there is no copy
// and no room for one.
func (lim *Limiter) bucket(key string, l arena.RateLimit, now time.Time) *bucket {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if lim.buckets == nil {
		lim.buckets, lim.lastPrune = map[string]*bucket{}, now
	}
	if now.Sub(lim.lastPrune) >= pruneEvery {
		for k, b := range lim.buckets {
			// The sweep must not wait for a bucket a request holds.
			if b.mu.TryLock() {
				if !b.busy && b.limit.PerSecond > 0 && now.Sub(b.at).Seconds() > 2*b.limit.Burst/b.limit.PerSecond {
					delete(lim.buckets, k)
				}
				b.mu.Unlock()
			}
		}
		lim.lastPrune = now
	}
	b := lim.buckets[key]
	if b == nil {
		if len(lim.buckets) >= cmp.Or(lim.MaxCopies, DefaultMaxCopies) {
			return nil // full: the caller goes to the store
		}
		// A new copy presumes the bucket full: a bucket other replicas
		// (or this process before a restart) emptied passes at most the
		// slack before the first settlement answers.
		b = &bucket{at: now, tokens: l.Burst}
		b.settled = sync.NewCond(&b.mu)
		lim.buckets[key] = b
	}
	return b
}
