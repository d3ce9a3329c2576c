package scoreio

import (
	"bytes"
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
// hash, each with its lock: a shard's table stays small and workers
// seldom wait for one another.
//
// A shard is an open-addressing table of its own rather than a Go map:
// the one hash picks the shard and the slot, and the names go back to
// back into one byte slice instead of a string each. On a million rows
// with 150,000 distinct names, map inserts and their growth were a third
// of the parse.
type pool struct {
	seed   maphash.Seed
	shards [poolShards]poolShard
}

const poolShards = 16

type poolShard struct {
	mu     sync.Mutex
	slots  []int32  // linear probing; k+1 for the shard's k-th name, 0 when empty
	hashes []uint64 // of each name, to compare and to grow without hashing again
	ends   []int    // where each name ends in text
	text   []byte   // the names, back to back
	names  []string // each name, made by seal
}

// firstSlots is a shard's first table size (a power of two).
const firstSlots = 64

func newPool() *pool {
	p := &pool{seed: maphash.MakeSeed()}
	for i := range p.shards {
		p.shards[i].slots = make([]int32, firstSlots)
	}
	return p
}

// id returns b's provisional id: in shard s, its k-th name has id
// k·poolShards + s.
func (p *pool) id(b []byte) int32 {
	h := maphash.Bytes(p.seed, b)
	s := int(h % poolShards)
	sh := &p.shards[s]
	sh.mu.Lock()
	k := sh.find(h, b)
	sh.mu.Unlock()
	return int32(k*poolShards + s)
}

// find returns the index of the name b, of hash h, adding it when new.
func (sh *poolShard) find(h uint64, b []byte) int {
	mask := uint64(len(sh.slots) - 1)
	for i := (h / poolShards) & mask; ; i = (i + 1) & mask {
		e := sh.slots[i]
		if e == 0 {
			break
		}
		k := int(e - 1)
		if sh.hashes[k] == h && bytes.Equal(sh.name(k), b) {
			return k
		}
	}
	k := len(sh.hashes)
	sh.hashes = append(sh.hashes, h)
	sh.text = append(sh.text, b...)
	sh.ends = append(sh.ends, len(sh.text))
	if 2*len(sh.hashes) > len(sh.slots) { // at most half full: probes stay short
		sh.grow()
	} else {
		sh.put(k)
	}
	return k
}

// put puts name k in its slot.
func (sh *poolShard) put(k int) {
	mask := uint64(len(sh.slots) - 1)
	i := (sh.hashes[k] / poolShards) & mask
	for sh.slots[i] != 0 {
		i = (i + 1) & mask
	}
	sh.slots[i] = int32(k + 1)
}

// grow doubles the table and puts every name back.
func (sh *poolShard) grow() {
	sh.slots = make([]int32, 2*len(sh.slots))
	for k := range sh.hashes {
		sh.put(k)
	}
}

// name is the shard's k-th name, in text.
func (sh *poolShard) name(k int) []byte {
	start := 0
	if k > 0 {
		start = sh.ends[k-1]
	}
	return sh.text[start:sh.ends[k]]
}

// seal makes the names strings once every id is given: one string per
// shard that the names are slices of.
func (p *pool) seal() {
	for s := range p.shards {
		sh := &p.shards[s]
		all := string(sh.text)
		sh.names = make([]string, len(sh.ends))
		start := 0
		for k, end := range sh.ends {
			sh.names[k] = all[start:end]
			start = end
		}
	}
}

// name is the name of a provisional id, once sealed.
func (p *pool) name(id int32) string { return p.shards[id%poolShards].names[id/poolShards] }

// span is one past the largest provisional id given.
func (p *pool) span() int {
	n := 0
	for s := range p.shards {
		n = max(n, len(p.shards[s].hashes)*poolShards)
	}
	return n
}
