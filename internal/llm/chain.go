package llm

import (
	"context"
	"errors"
)

// Metrics counts model calls and cache lookups by agent (a
// *metrics.Metrics does).
type Metrics interface {
	ModelCall(agent string, ok bool, inputTokens, outputTokens, costMicros int64)
	ModelCacheLookup(agent string, hit bool)
}

// ChainConfig says what a Chain puts over its client. Every part is
// optional.
type ChainConfig struct {
	// Cache, when set, keeps every successful answer (see Cache).
	Cache CacheStore
	// CacheOnly answers from Cache only: a miss fails with ErrCacheMiss
	// and no model is called, so a replay costs nothing.
	CacheOnly bool
	// Meter accounts the calls and enforces its caps.
	Meter *Meter
	// Metrics counts the calls that reached the provider, after their
	// retries, and the cache's hits and misses.
	Metrics Metrics
}

// Chain is the model-call path of one agent, built once per agent and
// shared by all its calls (every round of a run, every decision of a
// cohort):
//
//	client → cache → meter
//
// The cache answers what it holds and stores what the client answers. The
// meter accounts every answer by agent and by the round named in the
// context (WithRound), telling a cached answer (Response.Cached) from a
// paid one. Its caps are checked where a call leaves for the provider,
// below the cache, so a cached answer passes a spent cap; the metrics
// count the calls there too. It is safe for concurrent use.
type Chain struct {
	spec  ModelSpec
	next  Model // the cache, or the metered client without one
	cache *Cache
	meter *Meter
}

// NewChain builds the chain of one agent over its client.
func NewChain(client Model, cfg ChainConfig) *Chain {
	spec := client.Spec()
	c := &Chain{spec: spec, meter: cfg.Meter}
	c.next = paid{Model: client, agent: spec.ID, meter: cfg.Meter, metrics: cfg.Metrics}
	if cfg.Cache != nil {
		c.cache = newCache(c.next, cfg.Cache, cfg.Metrics)
		c.cache.cacheOnly = cfg.CacheOnly
		c.next = c.cache
	}
	return c
}

// Spec implements Model.
func (c *Chain) Spec() ModelSpec { return c.spec }

// Cache returns the chain's cache (nil without one), for its Stats.
func (c *Chain) Cache() *Cache { return c.cache }

// Complete implements Completer. A call refused by a cap fails with a
// *BudgetError; a miss in cache-only mode with ErrCacheMiss.
func (c *Chain) Complete(ctx context.Context, req Request) (Response, error) {
	r, err := c.next.Complete(ctx, req)
	if err == nil && c.meter != nil {
		c.meter.Record(c.spec.ID, roundOf(ctx), r)
	}
	return r, err
}

// paid is the client as the chain sees it: the one layer whose calls cost
// money. A call is sent only if its upper-bound cost fits the meter's caps
// (see Meter), and every call that reached the provider is counted.
type paid struct {
	Model
	agent   string
	meter   *Meter
	metrics Metrics
}

func (p paid) Complete(ctx context.Context, req Request) (Response, error) {
	if p.meter != nil {
		bound := Bound(p.Spec(), req)
		if err := p.meter.reserve(p.agent, roundOf(ctx), bound); err != nil {
			return Response{}, err
		}
		defer p.meter.release(p.agent, bound)
	}
	r, err := p.Model.Complete(ctx, req)
	if p.metrics != nil {
		var le *Error
		if err == nil || errors.As(err, &le) && le.Attempts > 0 {
			p.metrics.ModelCall(p.agent, err == nil, r.InputTokens, r.OutputTokens, r.CostMicros)
		}
	}
	return r, err
}

type roundKey struct{}

// WithRound names the round the calls made under ctx belong to: the meter
// accounts them under it and a budget stop names it.
func WithRound(ctx context.Context, round string) context.Context {
	return context.WithValue(ctx, roundKey{}, round)
}

func roundOf(ctx context.Context) string {
	r, _ := ctx.Value(roundKey{}).(string)
	return r
}
