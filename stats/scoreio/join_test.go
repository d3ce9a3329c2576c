package scoreio

import (
	"fmt"
	"testing"
)

// The join gives the rows of the parts in order, with ids in order of
// first appearance, whether the parts' windows are moved together in
// place, sit in columns grown since, or one outgrew its window.
func TestJoinerMovesParts(t *testing.T) {
	for _, c := range []struct {
		name     string
		hint     int
		windows  []int // each part's window
		rows     []int // the rows each part appends
		inPlace  bool  // the table is the parts' columns
		overflow bool
	}{
		{"windows filled", 100, []int{3, 4, 5}, []int{3, 4, 5}, true, false},
		{"gaps", 100, []int{3, 4, 5}, []int{1, 0, 5}, true, false},
		{"columns grown", 4, []int{3, 4, 5, 6}, []int{2, 4, 3, 6}, true, false},
		{"a part outgrew its window", 100, []int{3, 2, 5}, []int{3, 6, 5}, false, true},
		{"the last part outgrew the columns", 8, []int{3, 5}, []int{2, 40}, false, true},
		{"nothing known", 0, []int{1, 1, 1}, []int{1, 0, 1}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var j joiner
			for _, col := range stringCols {
				j.pools[col] = newPool()
			}
			j.hint = c.hint
			n := 0
			var want []string
			for i, w := range c.windows {
				p := j.add(w)
				for range c.rows[i] {
					// Names repeat across parts, first seen in varied order.
					name := fmt.Sprintf("a%d", (n*7)%5)
					var id [nStrings]int32
					for k, col := range stringCols {
						id[k] = j.pools[col].id([]byte(name))
					}
					p.t.Append(id[0], id[1], id[2], id[3], id[4], float64(n), 0.5, n%2 == 0, 1, n+2)
					want = append(want, name)
					n++
				}
			}
			tab, bad := j.table()
			if bad.Total != 0 {
				t.Fatal(bad)
			}
			if tab.Len() != n {
				t.Fatalf("%d rows, want %d", tab.Len(), n)
			}
			seen := map[string]int32{}
			for r := range n {
				row := tab.Row(r)
				if row.Agent != want[r] || row.Round != want[r] || row.Event != want[r] || row.Forecast != float64(r) ||
					row.HasBenchmark != (r%2 == 0) || tab.Line[r] != int32(r+2) {
					t.Fatalf("row %d: %+v line %d, want agent %s forecast %d", r, row, tab.Line[r], want[r], r)
				}
				id, ok := seen[want[r]]
				if !ok {
					id = int32(len(seen))
					seen[want[r]] = id
				}
				if tab.Agent[r] != id || tab.Market[r] != id {
					t.Fatalf("row %d: id %d, want %d (order of first appearance)", r, tab.Agent[r], id)
				}
			}
			if inPlace := n > 0 && &tab.P[0] == &j.rows.P[:1][0]; inPlace != c.inPlace {
				t.Errorf("in place %v, want %v", inPlace, c.inPlace)
			}
		})
	}
}
