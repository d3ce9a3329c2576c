package scoreio

import (
	"fmt"
	"sync"
	"testing"
)

// A pool gives each name one id, from any worker, through its tables'
// growth; the ids name their names once sealed, the empty name too.
func TestPool(t *testing.T) {
	p := newPool()
	names := []string{""}
	for i := range 20_000 {
		names = append(names, fmt.Sprintf("mkt-%d", i), fmt.Sprintf("a-rather-long-market-name-%d", i))
	}
	ids := make([][]int32, 2)
	var wg sync.WaitGroup
	for w := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				for _, n := range names {
					ids[w] = append(ids[w], p.id([]byte(n)))
				}
			}
		}()
	}
	wg.Wait()
	p.seal()
	seen := map[int32]string{}
	for w := range ids {
		for k, id := range ids[w] {
			n := names[k%len(names)]
			if got := p.name(id); got != n {
				t.Fatalf("id %d names %q, want %q", id, got, n)
			}
			if o, ok := seen[id]; ok && o != n {
				t.Fatalf("id %d for %q and %q", id, o, n)
			}
			seen[id] = n
			if int(id) >= p.span() {
				t.Fatalf("id %d past span %d", id, p.span())
			}
		}
	}
	if len(seen) != len(names) {
		t.Fatalf("%d ids for %d names", len(seen), len(names))
	}
}
