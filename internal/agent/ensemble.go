package agent

import (
	"fmt"
	"math"
	"sort"
)

// Combine merges member forecasts (basis points, one slice per member, all
// of length k) into one, per market:
//   - "mean": the weighted mean (equal weights when weights is nil);
//   - "median": the weighted median — the smallest value whose cumulative
//     weight reaches half the total, or the mean of the two middle values
//     when the cumulative weight lands exactly on half (so with equal
//     weights and an even count it is the usual mean of the middle pair).
//
// Results are rounded to the nearest basis point, halves up. Members with
// weight 0 do not count.
func Combine(method string, members [][]uint16, weights []float64) ([]uint16, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("combine: no member forecasts")
	}
	if weights != nil && len(weights) != len(members) {
		return nil, fmt.Errorf("combine: %d weights for %d members", len(weights), len(members))
	}
	k := len(members[0])
	w := make([]float64, len(members))
	total := 0.0
	for j := range members {
		if len(members[j]) != k {
			return nil, fmt.Errorf("combine: member %d has %d forecasts, want %d", j, len(members[j]), k)
		}
		w[j] = 1
		if weights != nil {
			w[j] = weights[j]
		}
		total += w[j]
	}
	if !(total > 0) {
		return nil, fmt.Errorf("combine: weights sum to %v", total)
	}
	out := make([]uint16, k)
	type vw struct{ v, w float64 }
	col := make([]vw, 0, len(members))
	for i := 0; i < k; i++ {
		var v float64
		switch method {
		case "mean":
			for j := range members {
				v += w[j] * float64(members[j][i])
			}
			v /= total
		case "median":
			col = col[:0]
			for j := range members {
				if w[j] > 0 {
					col = append(col, vw{float64(members[j][i]), w[j]})
				}
			}
			sort.SliceStable(col, func(a, b int) bool { return col[a].v < col[b].v })
			half, cum := total/2, 0.0
			for n, c := range col {
				cum += c.w
				if cum > half {
					v = c.v
					break
				}
				if cum == half && n+1 < len(col) {
					v = (c.v + col[n+1].v) / 2
					break
				}
				v = c.v
			}
		default:
			return nil, fmt.Errorf("combine: method %q: want mean or median", method)
		}
		out[i] = uint16(math.Floor(v + 0.5))
	}
	return out, nil
}
