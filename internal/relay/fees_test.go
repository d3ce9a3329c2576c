package relay

import (
	"math/big"
	"testing"
)

func TestNextFees(t *testing.T) {
	g := func(v int64) *big.Int { return big.NewInt(v) }
	for _, tc := range []struct {
		name             string
		suggested, base  *big.Int
		prev             *fees
		wantTip, wantCap int64
	}{
		{"new: tip, cap twice the base fee plus the tip", g(1_000), g(7_000), nil, 1_000, 15_000},
		{"new on a legacy chain: the gas price", g(5_000), nil, nil, 5_000, 5_000},
		{"replacement: both up by an eighth, rounded up", g(1_000), g(7_000), &fees{tip: g(1_000), cap: g(15_000)}, 1_125, 16_875},
		{"replacement: the suggestion when it is higher", g(4_000), g(20_000), &fees{tip: g(1_000), cap: g(15_000)}, 4_000, 44_000},
		{"replacement: rounding up keeps 10 % more", g(9), g(1), &fees{tip: g(9), cap: g(11)}, 11, 13},
		{"replacement of one wei", g(1), g(0), &fees{tip: g(1), cap: g(1)}, 2, 2},
		{"replacement: cap never below tip", g(1), g(0), &fees{tip: g(100), cap: g(100)}, 113, 113},
		{"legacy replacement", g(5_000), nil, &fees{tip: g(5_000), cap: g(5_000)}, 5_625, 5_625},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := nextFees(tc.suggested, tc.base, tc.prev)
			if f.tip.Int64() != tc.wantTip || f.cap.Int64() != tc.wantCap {
				t.Fatalf("tip %s cap %s, want %d %d", f.tip, f.cap, tc.wantTip, tc.wantCap)
			}
			if p := tc.prev; p != nil {
				// geth's rule for a replacement: 10 % more of each.
				for _, c := range [][2]*big.Int{{f.tip, p.tip}, {f.cap, p.cap}} {
					if new(big.Int).Mul(c[0], g(100)).Cmp(new(big.Int).Mul(c[1], g(110))) < 0 {
						t.Fatalf("%s is less than 110 %% of %s", c[0], c[1])
					}
				}
			}
		})
	}
}
