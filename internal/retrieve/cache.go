package retrieve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
)

// Cache stores packets by (provider, question id) so a rerun shows every
// resolver exactly the evidence of the first run, including its
// retrieved_at, and an offline rerun needs no provider at all. Only
// successful retrievals are stored. In cache-only mode a packet never
// stored fails with llm.ErrCacheMiss.
type Cache struct {
	Next      arena.Retriever
	Provider  string
	Store     llm.CacheStore // e.g. llm.DirStore{Dir: ...}: one atomic file per packet
	CacheOnly bool
	Logger    *slog.Logger

	hits, misses atomic.Int64
}

// Key is the store key of a packet: the hex SHA-256 of provider and id.
func Key(provider, questionID string) string {
	// The provider's length comes first so no (provider, id) pair can
	// spell another's bytes.
	sum := sha256.Sum256(fmt.Appendf(nil, "evidence/v1\x00%d:%s\x00%s", len(provider), provider, questionID))
	return hex.EncodeToString(sum[:])
}

// Stats returns the hits and misses so far.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

func (c *Cache) Retrieve(ctx context.Context, q arena.EvidenceQuery) (arena.EvidencePacket, error) {
	key := Key(c.Provider, q.QuestionID)
	b, ok, err := c.Store.Get(ctx, key)
	if err != nil {
		return arena.EvidencePacket{}, fmt.Errorf("retrieve: cache get %s/%s: %w", c.Provider, q.QuestionID, err)
	}
	if ok {
		p, err := ParsePacket(b)
		if err == nil {
			c.hits.Add(1)
			return p, nil
		}
		c.logger().Warn("evidence cache: corrupt entry ignored", "provider", c.Provider, "question", q.QuestionID, "error", err)
	}
	c.misses.Add(1)
	if c.CacheOnly {
		return arena.EvidencePacket{}, fmt.Errorf("retrieve: evidence %s/%s: %w", c.Provider, q.QuestionID, llm.ErrCacheMiss)
	}
	p, err := c.Next.Retrieve(ctx, q)
	if err != nil {
		return p, err
	}
	if b, err := json.Marshal(p); err == nil {
		if err := c.Store.Put(ctx, key, b); err != nil {
			c.logger().Warn("evidence cache: put failed", "provider", c.Provider, "question", q.QuestionID, "error", err)
		}
	}
	return p, nil
}

func (c *Cache) logger() *slog.Logger {
	return arena.Logger(c.Logger)
}
