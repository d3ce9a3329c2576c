package stats

import (
	"fmt"
	"math"
)

// Row is one scored prediction: an agent's forecast on a
// market in a round, with the market's benchmark price when it has one
// (a market without a benchmark is excluded from Alpha, never given a
// silent 0.5) and its outcome.
type Row struct {
	Agent        string
	Round        string
	Market       string
	Category     string
	Event        string // optional cluster id; "" means the market is its own cluster
	Forecast     float64
	Benchmark    float64 // meaningful only when HasBenchmark
	HasBenchmark bool
	Outcome      float64 // 0 or 1
}

// Validate checks the ranges of S7: p, b ∈ [0,1], x ∈ {0,1}, ids present.
func (r Row) Validate() error {
	switch {
	case r.Agent == "":
		return fmt.Errorf("empty agent")
	case r.Round == "":
		return fmt.Errorf("empty round")
	case r.Market == "":
		return fmt.Errorf("empty market")
	}
	if err := CheckProb("forecast", r.Forecast); err != nil {
		return err
	}
	if r.HasBenchmark {
		if err := CheckProb("benchmark", r.Benchmark); err != nil {
			return err
		}
	}
	return CheckOutcome(r.Outcome)
}

// CheckProb reports a probability outside [0,1] (or NaN).
func CheckProb(name string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s %v outside [0,1]", name, v)
	}
	return nil
}

// CheckOutcome reports an outcome other than 0 or 1.
func CheckOutcome(x float64) error {
	if x != 0 && x != 1 {
		return fmt.Errorf("outcome %v is not 0 or 1", x)
	}
	return nil
}

// Dict interns strings to dense int32 ids in order of first appearance.
type Dict struct {
	ids   map[string]int32 // nil until needed in a DictOf
	Names []string
}

// NewDict returns an empty dictionary.
func NewDict() *Dict { return &Dict{ids: map[string]int32{}} }

// NewDictSize returns an empty dictionary with room for about n strings,
// sparing a parser the rehashing of a growing map.
func NewDictSize(n int) *Dict {
	return &Dict{ids: make(map[string]int32, n), Names: make([]string, 0, n)}
}

// DictOf returns the dictionary of names, which must be distinct: the id
// of names[i] is i. A parser that found the names itself gives them so,
// and the map from names to ids is built only at the first ID or
// IDBytes, which an analysis never calls.
func DictOf(names []string) *Dict { return &Dict{Names: names} }

// index builds the map of a DictOf.
func (d *Dict) index() {
	if d.ids == nil {
		d.ids = make(map[string]int32, len(d.Names))
		for i, s := range d.Names {
			d.ids[s] = int32(i)
		}
	}
}

// ID interns s.
func (d *Dict) ID(s string) int32 {
	d.index()
	if id, ok := d.ids[s]; ok {
		return id
	}
	id := int32(len(d.Names))
	d.ids[s] = id
	d.Names = append(d.Names, s)
	return id
}

// IDBytes interns b without allocating when b is already known; it exists
// so parsers can intern fields straight from their input buffer.
func (d *Dict) IDBytes(b []byte) int32 {
	d.index()
	if id, ok := d.ids[string(b)]; ok {
		return id
	}
	s := string(b)
	id := int32(len(d.Names))
	d.ids[s] = id
	d.Names = append(d.Names, s)
	return id
}

// Len is the number of distinct strings.
func (d *Dict) Len() int { return len(d.Names) }

// Table is a column store of rows with interned ids, built once and read by
// Analyze. Columnar layout keeps the kernels on contiguous float64 slices
// and lets a parser fill it without a string allocation per field.
type Table struct {
	Agents, Rounds, Markets, Categories, Events *Dict

	Agent, Round, Market, Category, Event []int32
	P, X                                  []float64
	// B holds benchmarks; NaN marks "no benchmark" (input validation
	// guarantees no real NaN gets in).
	B []float64
	// Line is the input line of each row (optional; 0 = unknown), used
	// only to point error messages at the input.
	Line []int32
}

// NewTable returns an empty table with capacity for n rows.
func NewTable(n int) *Table {
	// Markets, rounds and events grow with the input; agents and
	// categories stay few.
	hint := min(n/8, 1<<20)
	return &Table{
		Agents: NewDict(), Rounds: NewDictSize(hint / 4), Markets: NewDictSize(hint), Categories: NewDict(), Events: NewDictSize(hint / 2),
		Agent: make([]int32, 0, n), Round: make([]int32, 0, n), Market: make([]int32, 0, n),
		Category: make([]int32, 0, n), Event: make([]int32, 0, n),
		P: make([]float64, 0, n), X: make([]float64, 0, n), B: make([]float64, 0, n), Line: make([]int32, 0, n),
	}
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.P) }

// Append adds a row by ids. It does not validate: use Add for untrusted rows.
func (t *Table) Append(agent, round, market, category, event int32, p, b float64, hasB bool, x float64, line int) {
	if !hasB {
		b = math.NaN()
	}
	t.Agent = append(t.Agent, agent)
	t.Round = append(t.Round, round)
	t.Market = append(t.Market, market)
	t.Category = append(t.Category, category)
	t.Event = append(t.Event, event)
	t.P = append(t.P, p)
	t.B = append(t.B, b)
	t.X = append(t.X, x)
	t.Line = append(t.Line, int32(line))
}

// Add validates and appends a row; line is its input line (0 if none).
func (t *Table) Add(r Row, line int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	t.Append(t.Agents.ID(r.Agent), t.Rounds.ID(r.Round), t.Markets.ID(r.Market),
		t.Categories.ID(r.Category), t.Events.ID(r.Event), r.Forecast+0, r.Benchmark+0, r.HasBenchmark, r.Outcome, line)
	return nil
}

// FromRows builds a table from validated rows; the error names the index
// of the first bad row.
func FromRows(rows []Row) (*Table, error) {
	t := NewTable(len(rows))
	for i, r := range rows {
		if err := t.Add(r, 0); err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	return t, nil
}

// HasB reports whether row i has a benchmark.
func (t *Table) HasB(i int) bool { return t.B[i] == t.B[i] }

// Row returns row i with its strings.
func (t *Table) Row(i int) Row {
	return Row{
		Agent: t.Agents.Names[t.Agent[i]], Round: t.Rounds.Names[t.Round[i]], Market: t.Markets.Names[t.Market[i]],
		Category: t.Categories.Names[t.Category[i]], Event: t.Events.Names[t.Event[i]],
		Forecast: t.P[i], Benchmark: t.B[i], HasBenchmark: t.HasB(i), Outcome: t.X[i],
	}
}

// where names row i for an error message: its input line when known.
func (t *Table) where(i int) string {
	if i < len(t.Line) && t.Line[i] > 0 {
		return fmt.Sprintf("line %d", t.Line[i])
	}
	return fmt.Sprintf("row %d", i+1)
}
