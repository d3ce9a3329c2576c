// Package export writes everything needed to recompute the forecast track
// (rounds, markets, benchmarks, signed submissions, outcomes, scores, the
// leaderboard, the tamper-evident log and its signed heads) as CSV or JSON
// Lines tables, and verifies such an export from its files alone (Verify).
// The dashboard's downloads use the same tables (Tables, WriteTable).
package export

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/tlog"
)

// Formats.
const (
	CSV   = "csv"
	JSONL = "jsonl"
)

// Table is one exported table: named columns and string cells ("" for
// NULL), so that CSV and JSON Lines carry the same values.
type Table struct {
	Name    string
	Columns []string
	Rows    [][]string
}

// Meta is meta.json: what the export is of, and the key material a
// verifier needs besides the tables.
type Meta struct {
	ExportedAt        time.Time   `json:"exported_at"`
	Format            string      `json:"format"`
	Since             *time.Time  `json:"since,omitempty"`
	ChainID           uint64      `json:"chain_id"`
	VerifyingContract string      `json:"verifying_contract"`
	LogPublicKey      string      `json:"log_public_key"`
	Head              tlog.Head   `json:"head"`  // the latest signed tree head
	Heads             []tlog.Head `json:"heads"` // every head the server signed
}

// Source is what an export reads.
type Source struct {
	Forecast *forecast.Service
	Log      *tlog.Log
}

// Options select the format and the rounds (those whose commit deadline
// is at or after Since; zero: all). The log is always exported whole:
// its proofs need every leaf.
type Options struct {
	Format string
	Since  time.Time
}

func i64(v int64) string   { return strconv.FormatInt(v, 10) }
func u64(v uint64) string  { return strconv.FormatUint(v, 10) }
func flt(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
func bl(v bool) string     { return strconv.FormatBool(v) }
func tm(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func optF(v *float64) string {
	if v == nil {
		return ""
	}
	return flt(*v)
}

func optI(v *int64) string {
	if v == nil {
		return ""
	}
	return i64(*v)
}

func preds(p []uint16) string {
	if p == nil {
		return ""
	}
	s := make([]string, len(p))
	for i, v := range p {
		s[i] = strconv.Itoa(int(v))
	}
	return strings.Join(s, " ")
}

// Tables reads the tables of an export from src.
func Tables(ctx context.Context, src Source, since time.Time) ([]Table, error) {
	st := src.Forecast.Store
	rounds, err := st.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return nil, err
	}
	sort.Slice(rounds, func(i, j int) bool { return rounds[i].ID < rounds[j].ID })
	rt := Table{Name: "rounds", Columns: []string{"id", "commit_deadline", "reveal_start", "reveal_deadline", "grace_seconds", "created_at", "benchmark_at", "triggered_at", "invalidated"}}
	rm := Table{Name: "round_markets", Columns: []string{"round_id", "idx", "market_id", "benchmark", "benchmark_bps", "benchmark_time", "benchmark_source", "outcome"}}
	sub := Table{Name: "submissions", Columns: []string{"round_id", "agent", "commit_hash", "reasoning_hash", "commit_nonce", "commit_sig", "committed_at",
		"predictions", "salt", "reveal_nonce", "reveal_sig", "revealed_at"}}
	sc := Table{Name: "scores", Columns: []string{"round_id", "agent", "brier", "alpha", "brier_bps2", "alpha_bps2", "scored_markets", "benchmarked", "forfeit"}}
	marketIDs := map[int64]bool{}
	for _, r := range rounds {
		if !since.IsZero() && r.CommitDeadline.Before(since) {
			continue
		}
		rt.Rows = append(rt.Rows, []string{u64(r.ID), tm(r.CommitDeadline), tm(r.RevealStart), tm(r.RevealDeadline), i64(int64(r.Grace / time.Second)),
			tm(r.CreatedAt), tm(r.BenchmarkAt), tm(r.TriggeredAt), bl(r.Invalidated)})
		for _, m := range r.Markets {
			marketIDs[m.MarketID] = true
			bps, out := "", ""
			if m.Benchmark != nil {
				bps = i64(int64(m.BenchmarkBps))
			}
			if m.Outcome != nil {
				out = i64(int64(*m.Outcome))
			}
			rm.Rows = append(rm.Rows, []string{u64(r.ID), strconv.Itoa(m.Index), i64(m.MarketID), optF(m.Benchmark), bps, tm(m.BenchmarkTime), string(m.BenchmarkSource), out})
		}
		subs, err := st.Submissions(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			rn, rs := "", ""
			if s.Revealed() {
				rn, rs = u64(s.RevealNonce), s.RevealSig
			}
			sub.Rows = append(sub.Rows, []string{u64(s.RoundID), s.Agent, s.CommitHash, s.ReasoningHash, u64(s.CommitNonce), s.CommitSig, tm(s.CommittedAt),
				preds(s.Predictions), s.Salt, rn, rs, tm(s.RevealedAt)})
		}
		scores, err := st.RoundScores(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range scores {
			sc.Rows = append(sc.Rows, []string{u64(s.RoundID), s.Agent, flt(s.Brier), optF(s.Alpha), i64(s.BrierBps2), optI(s.AlphaBps2),
				strconv.Itoa(s.Scored), strconv.Itoa(s.Benchmarked), bl(s.Forfeit)})
		}
	}
	ids := make([]int64, 0, len(marketIDs))
	for id := range marketIDs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	ms, err := st.MarketsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	mt := Table{Name: "markets", Columns: []string{"id", "source", "source_id", "question", "category", "event_id", "status", "resolution"}}
	for _, id := range ids {
		m := ms[id]
		if m == nil {
			return nil, fmt.Errorf("export: market %d of a round is missing", id)
		}
		mt.Rows = append(mt.Rows, []string{i64(m.ID), m.Source, m.SourceID, m.Question, m.Category, m.EventID, string(m.Status), m.Resolution})
	}
	agents, err := st.Agents(ctx)
	if err != nil {
		return nil, err
	}
	at := Table{Name: "agents", Columns: []string{"address", "name", "kind"}}
	for _, a := range agents {
		at.Rows = append(at.Rows, []string{a.Address, a.Name, a.Kind})
	}
	lb, err := src.Forecast.Leaderboard(ctx)
	if err != nil {
		return nil, err
	}
	lt := Table{Name: "leaderboard", Columns: []string{"rank", "agent", "name", "rounds", "n", "brier", "brier_se", "alpha", "alpha_se", "t", "p", "beat_pct", "provisional"}}
	for i, e := range lb {
		lt.Rows = append(lt.Rows, []string{strconv.Itoa(i + 1), e.Agent, e.Name, strconv.Itoa(e.Rounds), strconv.Itoa(e.N), flt(e.Brier), optF(e.BrierSE),
			optF(e.Alpha), optF(e.AlphaSE), optF(e.T), optF(e.P), optF(e.BeatPct), bl(e.Provisional)})
	}
	lg := Table{Name: "log_entries", Columns: []string{"idx", "kind", "leaf", "leaf_hash", "created_at"}}
	size, err := src.Log.Store.LogSize(ctx)
	if err != nil {
		return nil, err
	}
	for from := uint64(0); from < size; from += 5000 {
		es, err := src.Log.Entries(ctx, from, min(size, from+5000))
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			lg.Rows = append(lg.Rows, []string{u64(e.Index), e.Kind, string(e.Data), hex.EncodeToString(e.LeafHash), tm(e.CreatedAt)})
		}
	}
	return []Table{rt, rm, mt, sub, sc, at, lt, lg}, nil
}

// Counts are how many rows each table of an export has.
type Counts map[string]int

// Write exports src into dir (created if needed): one file per table and
// meta.json with the domain, the log key and the signed tree heads.
func Write(ctx context.Context, src Source, dir string, o Options) (Counts, error) {
	if o.Format == "" {
		o.Format = JSONL
	}
	if o.Format != CSV && o.Format != JSONL {
		return nil, arena.Errorf(arena.EINVALID, "export: format %q: want csv or jsonl", o.Format)
	}
	// Sign a head first, so that every exported entry is covered by it.
	head, err := src.Log.SignedHead(ctx)
	if err != nil {
		return nil, err
	}
	tables, err := Tables(ctx, src, o.Since)
	if err != nil {
		return nil, err
	}
	heads, err := src.Log.Heads(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	counts := Counts{}
	for _, t := range tables {
		if t.Name == "log_entries" {
			// Entries appended after the head was signed wait for the next export.
			t.Rows = t.Rows[:min(len(t.Rows), int(head.TreeSize))]
		}
		if err := writeFile(filepath.Join(dir, t.Name+"."+o.Format), o.Format, t); err != nil {
			return nil, err
		}
		counts[t.Name] = len(t.Rows)
	}
	d := src.Forecast.Domain
	meta := Meta{ExportedAt: time.Now().UTC(), Format: o.Format, ChainID: d.ChainID, VerifyingContract: d.Contract.Hex(),
		LogPublicKey: src.Log.PublicKeyHex(), Head: head, Heads: heads}
	if !o.Since.IsZero() {
		s := o.Since.UTC()
		meta.Since = &s
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return counts, nil
}

func writeFile(path, format string, t Table) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: %w", cerr)
		}
	}()
	return WriteTable(f, format, t)
}

// WriteTable writes t as CSV (header row first; cells that a spreadsheet
// would run as a formula are escaped) or as JSON Lines (one object per row).
func WriteTable(w io.Writer, format string, t Table) error {
	switch format {
	case CSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(t.Columns); err != nil {
			return err
		}
		row := make([]string, len(t.Columns))
		for _, r := range t.Rows {
			for i, c := range r {
				row[i] = EscapeCell(c)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case JSONL:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, r := range t.Rows {
			obj := make(orderedRow, len(t.Columns))
			for i, c := range t.Columns {
				obj[i] = [2]string{c, r[i]}
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
		return nil
	}
	return arena.Errorf(arena.EINVALID, "export: format %q: want csv or jsonl", format)
}

// orderedRow encodes as a JSON object with the columns in table order.
type orderedRow [][2]string

func (o orderedRow) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[0])
		v, _ := json.Marshal(kv[1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// EscapeCell defuses CSV formula injection: a cell starting with = + - @
// (or a tab or carriage return) gets a leading apostrophe, which
// spreadsheets show as text. UnescapeCell undoes it.
func EscapeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r'", rune(s[0])) {
		return "'" + s
	}
	return s
}

// UnescapeCell is the inverse of EscapeCell.
func UnescapeCell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r'", rune(s[1])) {
		return s[1:]
	}
	return s
}
