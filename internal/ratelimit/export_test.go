package ratelimit

// Len is the number of bucket copies the limiter holds, for the tests of
// its bound and its sweep of idle copies.
func (lim *Limiter) Len() int {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	return len(lim.buckets)
}
