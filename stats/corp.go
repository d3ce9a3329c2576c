package stats

import (
	"math"
	"slices"
)

// CORP is the CORP decomposition of the Brier score (Dimitriadis, Gneiting &
// Jordan 2021): with p̂ the isotonic (PAV) recalibration of p,
// MCB = S(p) − S(p̂), DSC = S(ō) − S(p̂), UNC = S(ō), so
// Score = MCB − DSC + UNC.
type CORP struct {
	Score float64 `json:"score"`
	MCB   float64 `json:"mcb"`
	DSC   float64 `json:"dsc"`
	UNC   float64 `json:"unc"`
	// Blocks are the PAV blocks: the CORP reliability diagram is the step
	// function p ↦ Recal over [PLo, PHi] (S3 "reliability diagram data").
	Blocks []Block `json:"-"`
}

// Block is one PAV block: forecasts in [PLo, PHi] all recalibrate to Recal
// (the block's observed frequency), over N predictions.
type Block struct {
	PLo   float64 `json:"p_lo"`
	PHi   float64 `json:"p_hi"`
	Recal float64 `json:"recal"`
	N     int     `json:"n"`
}

// DecomposeCORP computes the CORP decomposition. Tied forecasts are pooled first, so p̂ is a
// function of p (the unique isotonic regression). Sorting uses a radix
// sort of the float bits, which keeps 10⁶ predictions in tens of ms.
func DecomposeCORP(p, x []float64) CORP {
	var keys, buf []uint64
	return decomposeCORP(p, x, &keys, &buf)
}

// decomposeCORP is DecomposeCORP sorting in *keys and *buf, grown as
// needed (a caller decomposing many agents reuses them).
func decomposeCORP(p, x []float64, keyBuf, sortBuf *[]uint64) CORP {
	n := len(p)
	if n == 0 {
		return CORP{}
	}
	x = x[:n]
	// key = bits(p)<<1 | x: for p ∈ [0,1] the sign bit is 0, so shifting
	// keeps the order of p and puts x in the free low bit.
	keys := grow(keyBuf, n)
	var sse, sx float64
	for i, pi := range p {
		if pi == 0 {
			pi = 0 // −0 → +0 so its bits sort first
		}
		d := pi - x[i]
		sse += d * d
		sx += x[i]
		keys[i] = math.Float64bits(pi)<<1 | uint64(x[i])
	}
	radixSort(keys, grow(sortBuf, n))

	// PAV over tie groups: a stack of blocks (count, sum of x, p range).
	type blk struct {
		n, s     float64
		plo, phi uint64 // key>>1 of the first and last member
	}
	st := make([]blk, 0, 64)
	for i := 0; i < n; {
		pk := keys[i] >> 1
		j := i
		var s float64
		for j < n && keys[j]>>1 == pk {
			s += float64(keys[j] & 1)
			j++
		}
		cur := blk{n: float64(j - i), s: s, plo: pk, phi: pk}
		i = j
		// Merge while the previous block's mean exceeds the current's.
		for len(st) > 0 {
			top := st[len(st)-1]
			if top.s*cur.n <= cur.s*top.n { // top mean ≤ cur mean: monotone
				break
			}
			cur = blk{n: top.n + cur.n, s: top.s + cur.s, plo: top.plo, phi: cur.phi}
			st = st[:len(st)-1]
		}
		st = append(st, cur)
	}
	// S(p̂) = (1/N) Σ_blocks Σ (p̂ − x)² = (1/N) Σ_blocks (s − s²/n) since x² = x.
	var shat float64
	blocks := make([]Block, len(st))
	for i, b := range st {
		shat += b.s - b.s*b.s/b.n
		blocks[i] = Block{PLo: math.Float64frombits(b.plo), PHi: math.Float64frombits(b.phi), Recal: b.s / b.n, N: int(b.n)}
	}
	fn := float64(n)
	shat /= fn
	obar := sx / fn
	c := CORP{Score: sse / fn, UNC: obar * (1 - obar), Blocks: blocks}
	c.MCB = c.Score - shat
	c.DSC = c.UNC - shat
	return c
}

// Recalibrate returns p̂ for each forecast, from the blocks of c (the CORP
// reliability diagram evaluated at p).
func (c CORP) Recalibrate(p float64) float64 {
	i, _ := slices.BinarySearchFunc(c.Blocks, p, func(b Block, p float64) int {
		switch {
		case b.PHi < p:
			return -1
		case b.PLo > p:
			return 1
		}
		return 0
	})
	if i >= len(c.Blocks) {
		i = len(c.Blocks) - 1
	}
	return c.Blocks[i].Recal
}

// radixSort sorts keys ascending with an LSD radix sort on 11-bit digits
// (a count table of 16 KiB, which stays in the first-level cache where
// one of 16-bit digits took 512 KiB to clear and scan every pass),
// skipping digits on which all keys agree (the high bits of
// probabilities mostly do).
func radixSort(keys, buf []uint64) {
	n := len(keys)
	if n < 256 {
		slices.Sort(keys)
		return
	}
	const digit = 11
	src, dst := keys, buf[:n]
	count := make([]int, 1<<digit)
	for shift := uint(0); shift < 64; shift += digit {
		clear(count)
		for _, k := range src {
			count[(k>>shift)&(1<<digit-1)]++
		}
		if count[(src[0]>>shift)&(1<<digit-1)] == n {
			continue
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range src {
			d := (k >> shift) & (1<<digit - 1)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
