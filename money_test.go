package arena_test

import (
	"encoding/json"
	"testing"

	"github.com/forecast-arena/arena"
)

func TestDollarsJSON(t *testing.T) {
	for _, c := range []struct {
		m    arena.Micros
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {-1, "-0.000001"}, {10_000 * arena.Dollar, "10000"}, {1_234_567_891, "1234.567891"},
		{-12_500_000, "-12.5"}, {9_666_666_666, "9666.666666"},
	} {
		b, err := json.Marshal(arena.Dollars(c.m))
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%d) = %s %v, want %s", c.m, b, err, c.want)
		}
		var back arena.Dollars
		if err := json.Unmarshal(b, &back); err != nil || arena.Micros(back) != c.m {
			t.Errorf("Unmarshal(%s) = %d %v", b, back, err)
		}
	}
}
