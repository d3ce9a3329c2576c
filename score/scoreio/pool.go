package scoreio

import (
	"hash/maphash"
	"sync"
)

// nStrings is the count of string columns, the first ones of scoreColumns
// but for the numbers: agent, round, market, category, event.
const nStrings = 5

// stringCols are those columns, in the order of the table's dictionaries.
var stringCols = [nStrings]int{colAgent, colRound, colMarket, colCategory, colEvent}

// pool interns one string column's names for all the workers at once: a
// name gets a provisional id at its first sight by any of them, so each
// name is hashed into one table once, not into a table per piece and
// then into the table's dictionary. The join renumbers the ids in order
// of first appearance in the input. Names are spread over shards by a
// hash, each with its lock: a shard's map stays small and workers seldom
// wait for one another.
type pool struct {
	seed   maphash.Seed
	shards [poolShards]poolShard
}

const poolShards = 16

type poolShard struct {
	mu    sync.Mutex
	ids   map[string]int32
	names []string
}

func newPool() *pool {
	p := &pool{seed: maphash.MakeSeed()}
	for i := range p.shards {
		p.shards[i].ids = map[string]int32{}
	}
	return p
}

// id returns b's provisional id: in shard s, its k-th name has id
// k·poolShards + s.
func (p *pool) id(b []byte) int32 {
	s := int(maphash.Bytes(p.seed, b) % poolShards)
	sh := &p.shards[s]
	sh.mu.Lock()
	id, ok := sh.ids[string(b)]
	if !ok {
		id = int32(len(sh.names)*poolShards + s)
		name := string(b)
		sh.ids[name] = id
		sh.names = append(sh.names, name)
	}
	sh.mu.Unlock()
	return id
}

// name is the name of a provisional id.
func (p *pool) name(id int32) string { return p.shards[id%poolShards].names[id/poolShards] }

// span is one past the largest provisional id given.
func (p *pool) span() int {
	n := 0
	for s := range p.shards {
		n = max(n, len(p.shards[s].names)*poolShards)
	}
	return n
}
