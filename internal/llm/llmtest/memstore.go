package llmtest

import (
	"context"
	"sync"
)

// MemStore is an in-memory llm.CacheStore, for tests of the model-call
// cache that need no files. Its zero value is empty and ready to use.
type MemStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Get returns the value stored under key; a missing key is (nil, false,
// nil), as llm.CacheStore asks.
func (s *MemStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// Put stores a copy of value under key, so the caller may reuse value.
func (s *MemStore) Put(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = append([]byte(nil), value...)
	return nil
}
