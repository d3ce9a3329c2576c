// Package export writes everything needed to recompute the forecast track
// (rounds, markets, benchmarks, signed submissions, outcomes, scores, the
// leaderboard, the tamper-evident log and its C2SP checkpoint) as CSV or JSON
// Lines tables, and verifies such an export from its files alone (Verify).
// The dashboard's downloads stream the same tables (Stream).
package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
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
	ExportedAt        time.Time  `json:"exported_at"`
	Format            string     `json:"format"`
	Since             *time.Time `json:"since,omitempty"`
	ChainID           uint64     `json:"chain_id"`
	VerifyingContract string     `json:"verifying_contract"`
	LogPublicKey      string     `json:"log_public_key"`
	// Bootstrap and Seed are the analysis's bootstrap, with which the
	// leaderboard's intervals, P(rank 1) and tie groups are recomputed.
	Bootstrap int    `json:"bootstrap"`
	Seed      uint64 `json:"seed"`
	// The scoring method the leaderboard was computed with: its version,
	// its entry rules and the digest of its whole configuration.
	MethodVersion      string `json:"methodology_version"`
	MethodDigest       string `json:"methodology_digest"`
	MinForecasts       int    `json:"min_forecasts"`
	MaxPerOrganisation int    `json:"max_per_organisation"`
}

// Source is what an export reads.
type Source struct {
	Forecast Forecasts
	Log      *tlog.Log
	// Traces serves the LLM agents' traces for Options.WithPrompts.
	Traces arena.TraceStore
}

// Options select the format and the rounds (those whose commit deadline
// is at or after Since; zero: all). The log is always exported whole:
// its proofs need every leaf.
type Options struct {
	Format string
	Since  time.Time
	// WithPrompts adds traces (TracesSpec): what each LLM agent was
	// shown and answered, prompts included. Exports leave them out by
	// default: they are large, and verification does not need them.
	WithPrompts bool
	// Redact masks secrets (API keys, passwords in URLs) in the traces'
	// text; required with WithPrompts, since a prompt or an error may
	// carry one.
	Redact func(string) string
	// Sign gives the checkpoint of the log as the export reads it (see
	// Signer), written as the file checkpoint: the export's signed head.
	// Without it, Checkpoint is that head: a C2SP checkpoint note with the
	// witness cosignatures collected for it (tlog.Publisher.Checkpoint),
	// signed by the log's key, of the log as it stands when the export
	// reads it (a log that grew past it is refused: ECONFLICT wrapping
	// ErrLogGrew). One of them is required.
	Sign       Signer
	Checkpoint []byte
	// Progress, when set, is told after each table file how many of the
	// export's tables are written.
	Progress func(done, total int)
}

// Forecasts is the forecast track as an export reads it (the arena's round
// service is one).
type Forecasts interface {
	// SigningDomain is the EIP-712 domain the track's submissions are signed under.
	SigningDomain() forecast.Domain
	// ScoringMethod is the method the track's leaderboard is computed with.
	ScoringMethod() scoring.Method
	// Snapshot calls fn with the track's store as of one moment (its
	// markets, rounds, submissions, scores and log) and board, the
	// leaderboard over every round scored in that state: every table of
	// an export is read from one state, its leaderboard included.
	Snapshot(ctx context.Context, fn func(st arena.StoreSnapshot, board func(context.Context) (scoring.Board, error)) error) error
}

// state is what the tables of one export are read from: one state of the
// store, its leaderboard, and the traces.
type state struct {
	st     arena.StoreSnapshot
	board  func(context.Context) (scoring.Board, error)
	traces arena.TraceStore
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

// scope selects what a table holds: rounds whose commit deadline is at or
// after since (zero: all), and the first logSize log entries (all of them
// unless limitLog).
type scope struct {
	since    time.Time
	limitLog bool
	logSize  uint64
	redact   func(string) string // of the traces' text
	// logFrom is the first log entry written (0: all); sealed, when set,
	// is told of each entry written sealed, with its round.
	logFrom uint64
	sealed  func(round, index uint64)
}

// Stream writes the table called name to w in format, one row at a time,
// with the rounds whose commit deadline is at or after since (zero: all)
// and the log as it stands, read from one state of the store. It returns
// an ENOTFOUND error for an unknown table and EINVALID for an unknown
// format before writing anything.
func Stream(ctx context.Context, w io.Writer, src Source, name, format string, since time.Time) (int, error) {
	// Refused before the store is read.
	if _, err := tableSpec(name, format, scope{}, false); err != nil {
		return 0, err
	}
	n := 0
	err := src.Forecast.Snapshot(ctx, func(st arena.StoreSnapshot, board func(context.Context) (scoring.Board, error)) (err error) {
		n, err = stream(ctx, w, state{st, board, src.Traces}, name, format, scope{since: since})
		return err
	})
	return n, err
}

// tableSpec is the table called name, checked with the format: traces
// are a table only with a trace store and a redaction (an export with
// prompts); the HTTP exports have none.
func tableSpec(name, format string, sc scope, traces bool) (Spec, error) {
	sp, ok := SpecOf(name)
	if name == TracesSpec.Name && traces && sc.redact != nil {
		sp, ok = TracesSpec, true
	}
	if !ok {
		return sp, arena.Errorf(arena.ENOTFOUND, "export: no table %q", name)
	}
	if format != CSV && format != JSONL {
		return sp, arena.Errorf(arena.EINVALID, "export: format %q: want csv or jsonl", format)
	}
	return sp, nil
}

func stream(ctx context.Context, w io.Writer, rd state, name, format string, sc scope) (int, error) {
	sp, err := tableSpec(name, format, sc, rd.traces != nil)
	if err != nil {
		return 0, err
	}
	rw, err := NewRowWriter(w, format, sp.Columns)
	if err != nil {
		return 0, err
	}
	n := 0
	if err := rows(ctx, rd, name, sc, func(r []string) error {
		n++
		return rw.Write(r)
	}); err != nil {
		return n, err
	}
	return n, rw.Flush()
}

// rows produces the rows of one table. A round's submissions, and the log
// leaves of its commits and reveals, stay out until its outcomes are
// triggered: before that they would show predictions, salts and
// signatures that every page and API keeps private (the sealed log
// entries keep their leaf hash, so inclusion still checks).
func rows(ctx context.Context, rd state, name string, sc scope, emit func([]string) error) error {
	st := rd.st
	if name == "log_entries" {
		return logRows(ctx, st, sc, emit)
	}
	rounds, err := roundsSince(ctx, st, sc.since)
	if err != nil {
		return err
	}
	switch name {
	case "rounds":
		return roundRows(rounds, emit)
	case "round_markets":
		return roundMarketRows(rounds, emit)
	case "markets":
		return marketRows(ctx, st, rounds, emit)
	case "submissions":
		return submissionRows(ctx, st, rounds, emit)
	case "traces":
		return traceRows(ctx, rd.traces, rounds, sc, emit)
	case "scores":
		return scoreRows(ctx, st, rounds, emit)
	case "agents":
		return agentRows(ctx, st, emit)
	case "leaderboard":
		return boardRows(ctx, rd.board, emit)
	default:
		return arena.Errorf(arena.ENOTFOUND, "export: no table %q", name)
	}
}

// roundsSince are the rounds whose commit deadline is not before since
// (every round when since is zero), by id.
func roundsSince(ctx context.Context, st arena.StoreSnapshot, since time.Time) ([]*arena.Round, error) {
	all, err := st.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	var rounds []*arena.Round
	for _, r := range all {
		if since.IsZero() || !r.CommitDeadline.Before(since) {
			rounds = append(rounds, r)
		}
	}
	return rounds, nil
}

// roundRows produces the rounds table.
func roundRows(rounds []*arena.Round, emit func([]string) error) error {
	for _, r := range rounds {
		if err := emit([]string{u64(r.ID), tm(r.CommitDeadline), tm(r.RevealStart), tm(r.RevealDeadline), i64(int64(r.Grace / time.Second)),
			tm(r.CreatedAt), tm(r.BenchmarkAt), tm(r.TriggeredAt), bl(r.Invalidated)}); err != nil {
			return err
		}
	}
	return nil
}

// roundMarketRows produces the round_markets table.
func roundMarketRows(rounds []*arena.Round, emit func([]string) error) error {
	for _, r := range rounds {
		for _, m := range r.Markets {
			bps, out := "", ""
			if m.Benchmark != nil {
				bps = i64(int64(m.BenchmarkBps))
			}
			if m.Outcome != nil {
				out = i64(int64(*m.Outcome))
			}
			if err := emit([]string{u64(r.ID), strconv.Itoa(m.Index), i64(m.MarketID), bps, tm(m.BenchmarkTime), string(m.BenchmarkSource), out}); err != nil {
				return err
			}
		}
	}
	return nil
}

// marketRows produces the markets table: every market of the rounds, by
// id, read from the store in chunks.
func marketRows(ctx context.Context, st arena.StoreSnapshot, rounds []*arena.Round, emit func([]string) error) error {
	seen := map[int64]bool{}
	var ids []int64
	for _, r := range rounds {
		for _, m := range r.Markets {
			if !seen[m.MarketID] {
				seen[m.MarketID] = true
				ids = append(ids, m.MarketID)
			}
		}
	}
	slices.Sort(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		ms, err := st.MarketsByID(ctx, chunk)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			m := ms[id]
			if m == nil {
				return fmt.Errorf("export: market %d of a round is missing", id)
			}
			if err := emit([]string{i64(m.ID), m.Source, m.SourceID, m.Venue(), m.Question, m.Category, m.EventID, string(m.Status), m.Resolution, m.ConditionID}); err != nil {
				return err
			}
		}
	}
	return nil
}

// submissionRows produces the submissions table: those of the triggered
// rounds.
func submissionRows(ctx context.Context, st arena.StoreSnapshot, rounds []*arena.Round, emit func([]string) error) error {
	for _, r := range rounds {
		if r.TriggeredAt.IsZero() {
			continue
		}
		subs, err := st.Submissions(ctx, r.ID)
		if err != nil {
			return err
		}
		for _, s := range subs {
			rn, rs := "", ""
			if s.Revealed() {
				rn, rs = u64(s.RevealNonce), s.RevealSig
			}
			if err := emit([]string{u64(s.RoundID), s.Agent, s.CommitHash, s.ReasoningHash, u64(s.CommitNonce), s.CommitSig, tm(s.CommittedAt),
				preds(s.Predictions), s.Salt, rn, rs, tm(s.RevealedAt)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// traceRows produces the traces table. Like submissions, a round's traces
// stay out until its outcomes are triggered.
func traceRows(ctx context.Context, traces arena.TraceStore, rounds []*arena.Round, sc scope, emit func([]string) error) error {
	for _, r := range rounds {
		if r.TriggeredAt.IsZero() {
			continue
		}
		ts, err := traces.RoundTraces(ctx, r.ID)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if err := emit([]string{u64(t.RoundID), t.Agent, t.AgentID, bl(t.Submitted), sc.redact(t.Failure), i64(t.Calls), i64(t.CachedCalls),
				i64(t.InputTokens), i64(t.OutputTokens), i64(int64(t.Cost)), i64(t.LatencyMS), tm(t.CreatedAt), sc.redact(string(t.Trace))}); err != nil {
				return err
			}
		}
	}
	return nil
}

// scoreRows produces the scores table.
func scoreRows(ctx context.Context, st arena.StoreSnapshot, rounds []*arena.Round, emit func([]string) error) error {
	for _, r := range rounds {
		scores, err := st.RoundScores(ctx, r.ID)
		if err != nil {
			return err
		}
		for _, s := range scores {
			if err := emit([]string{u64(s.RoundID), s.Agent, flt(s.Brier), optF(s.Alpha), i64(s.BrierBps2), optI(s.AlphaBps2),
				strconv.Itoa(s.Scored), strconv.Itoa(s.Benchmarked), bl(s.Forfeit)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// agentRows produces the agents table.
func agentRows(ctx context.Context, st arena.StoreSnapshot, emit func([]string) error) error {
	agents, err := st.Agents(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if err := emit([]string{a.Address, a.Name, a.Kind, a.Organisation, a.Model, a.Homepage, a.Description, u64(a.ProfileVersion)}); err != nil {
			return err
		}
	}
	return nil
}

// boardRows produces the leaderboard table: the analysis the
// dashboard shows, whose figures, seeded ones included, reproduce from the
// exported scores (meta.json names the bootstrap).
func boardRows(ctx context.Context, board func(context.Context) (scoring.Board, error), emit func([]string) error) error {
	b, err := board(ctx)
	if err != nil {
		return err
	}
	for _, r := range leaderboardRows(b) {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// logRows produces the log_entries table: the entries from sc.logFrom to
// the log's size (sc.logSize, unless !sc.limitLog: the store's). The
// leaves of a round's commits and reveals are sealed (left out, their
// hash kept) until the round is triggered.
func logRows(ctx context.Context, st arena.StoreSnapshot, sc scope, emit func([]string) error) error {
	size := sc.logSize
	if !sc.limitLog {
		var err error
		if size, err = st.LogSize(ctx); err != nil {
			return err
		}
	}
	triggered := map[uint64]bool{} // of the rounds sealable entries name, read once each
	isTriggered := func(id uint64) (bool, error) {
		t, ok := triggered[id]
		if !ok {
			r, err := st.Round(ctx, id)
			switch {
			case arena.ErrorKind(err) == arena.ENOTFOUND:
			case err != nil:
				return false, err
			default:
				t = !r.TriggeredAt.IsZero()
			}
			triggered[id] = t
		}
		return t, nil
	}
	for from := sc.logFrom; from < size; from += 5000 {
		es, err := st.LogEntries(ctx, from, min(size, from+5000))
		if err != nil {
			return err
		}
		for _, e := range es {
			leaf, sealed := string(e.Data), false
			if round, sealable, ok := forecast.SealedUntilTrigger(e.Kind, e.Data); sealable {
				open := false
				if ok {
					if open, err = isTriggered(round); err != nil {
						return err
					}
				}
				if !open {
					leaf, sealed = "", true
					if sc.sealed != nil && ok {
						sc.sealed(round, e.Index)
					}
				}
			}
			if err := emit([]string{u64(e.Index), e.Kind, leaf, hex.EncodeToString(e.LeafHash), tm(e.CreatedAt), bl(sealed)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Counts are how many rows each table of an export has.
type Counts map[string]int

// Write exports src into dir (created if needed): one file per table and
// meta.json with the domain and the log key, and the checkpoint file.
func Write(ctx context.Context, src Source, dir string, o Options) (Counts, error) {
	counts, files, err := write(ctx, src, o, dirSink(dir))
	if err != nil {
		return nil, err
	}
	// The index goes last: a directory with one holds every file it lists.
	if err := writeIndex(dir, files); err != nil {
		return nil, err
	}
	return counts, nil
}

// A sink stores one file of an export: write produces its bytes; the
// sink returns the file's size and SHA-256.
type sink func(name string, write func(io.Writer) error) (IndexEntry, error)

// dirSink writes each file into dir, created with the first: an export
// refused before its first file leaves no directory behind.
func dirSink(dir string) sink {
	return func(name string, write func(io.Writer) error) (e IndexEntry, err error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return e, fmt.Errorf("export: %w", err)
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return e, fmt.Errorf("export: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("export: %w", cerr)
			}
		}()
		hw := newHashWriter(f)
		bw := bufio.NewWriter(hw)
		if err := write(bw); err != nil {
			return e, err
		}
		if err := bw.Flush(); err != nil {
			return e, fmt.Errorf("export: %w", err)
		}
		return hw.entry(name), nil
	}
}

// write produces every file of an export but the index into sink, and
// returns the tables' row counts and the files' entries, in index order.
func write(ctx context.Context, src Source, o Options, sink sink) (Counts, []IndexEntry, error) {
	if o.Format == "" {
		o.Format = JSONL
	}
	if o.Format != CSV && o.Format != JSONL {
		return nil, nil, arena.Errorf(arena.EINVALID, "export: format %q: want csv or jsonl", o.Format)
	}
	sign := o.Sign
	if sign == nil {
		if o.Checkpoint == nil {
			return nil, nil, arena.Errorf(arena.EINVALID, "export: no checkpoint: an export carries the log's checkpoint, its signed head (publish one first)")
		}
		sign = Note(o.Checkpoint)
	}
	counts := Counts{}
	specs := Specs
	if o.WithPrompts {
		if src.Traces == nil || o.Redact == nil {
			return nil, nil, arena.Errorf(arena.EINVALID, "export: with prompts: no trace store or no redaction")
		}
		specs = append(slices.Clip(specs), TracesSpec)
	}
	// Every table is read from one state of the store, the one whose log
	// holds exactly the checkpoint's entries: every logged item is
	// stored in the transaction that logs it, so the tables hold what
	// those entries record and nothing logged after.
	var tables []IndexEntry
	var note []byte
	err := src.Forecast.Snapshot(ctx, func(st arena.StoreSnapshot, board func(context.Context) (scoring.Board, error)) error {
		size, err := st.LogSize(ctx)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if note, err = signed(ctx, src.Log, sign, size); err != nil {
			return err
		}
		sc := scope{since: o.Since, limitLog: true, logSize: size, redact: o.Redact}
		rd := state{st, board, src.Traces}
		for i, sp := range specs {
			e, err := sink(sp.Name+"."+o.Format, func(w io.Writer) error {
				n, err := stream(ctx, w, rd, sp.Name, o.Format, sc)
				counts[sp.Name] = n
				return err
			})
			if err != nil {
				return err
			}
			tables = append(tables, e)
			if o.Progress != nil {
				o.Progress(i+1, len(specs))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	b, err := metaFile(src, o.Format, o.Since)
	if err != nil {
		return nil, nil, err
	}
	me, err := sink("meta.json", func(w io.Writer) error { _, err := w.Write(b); return err })
	if err != nil {
		return nil, nil, err
	}
	ce, err := sink(CheckpointFile, func(w io.Writer) error { _, err := w.Write(note); return err })
	if err != nil {
		return nil, nil, err
	}
	return counts, append(append([]IndexEntry{me}, tables...), ce), nil
}

// metaFile is meta.json of an export of src in format.
func metaFile(src Source, format string, since time.Time) ([]byte, error) {
	d := src.Forecast.SigningDomain()
	meta := Meta{ExportedAt: time.Now().UTC(), Format: format, ChainID: d.ChainID, VerifyingContract: d.Contract.Hex(),
		LogPublicKey: src.Log.PublicKeyHex()}
	m := src.Forecast.ScoringMethod()
	meta.Bootstrap, meta.Seed, meta.MinForecasts, meta.MaxPerOrganisation = m.Bootstrap, m.Seed, m.MinForecasts, m.MaxPerOrganisation
	meta.MethodVersion, meta.MethodDigest = scoring.MethodVersion, m.Digest()
	if !since.IsZero() {
		s := since.UTC()
		meta.Since = &s
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrLogGrew is wrapped by Write's refusal (ECONFLICT) of a checkpoint
// the log grew past before the export started: the tables would hold
// what the checkpoint does not cover. Publishing a checkpoint of the log
// as it stands and exporting again is the remedy.
var ErrLogGrew = errors.New("the log grew past the checkpoint: publish a checkpoint of the log as it stands, then export")

// signed is sign's checkpoint of the log's first size entries, checked:
// signed by the log's key, of exactly those entries of this log.
func signed(ctx context.Context, l *tlog.Log, sign Signer, size uint64) ([]byte, error) {
	note, err := sign(ctx, size)
	if err != nil {
		return nil, err
	}
	if c, err := checkNote(ctx, l, note); err != nil {
		return nil, err
	} else if c != size {
		return nil, arena.Errorf(arena.ECONFLICT, "export: the checkpoint covers %d entries, but the log has %d: %w", c, size, ErrLogGrew)
	}
	return note, nil
}

// checkNote checks that note is a checkpoint signed by l's key of a
// prefix of the log, and returns its size.
func checkNote(ctx context.Context, l *tlog.Log, note []byte) (uint64, error) {
	if note == nil {
		return 0, arena.Errorf(arena.EINVALID, "export: no checkpoint: an export carries the log's checkpoint, its signed head (publish one first)")
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(note)))
	if err != nil {
		return 0, arena.Errorf(arena.EINVALID, "export: checkpoint: %w", err)
	}
	vkey, err := tlog.VerifierKey(c.Origin, l.PublicKey())
	if err != nil {
		return 0, fmt.Errorf("export: checkpoint: %w", err)
	}
	if _, err := tlog.OpenCheckpoint(note, vkey); err != nil {
		return 0, arena.Errorf(arena.EINVALID, "export: checkpoint: %w", err)
	}
	logSize, err := l.Size(ctx)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	if c.Size > logSize {
		return 0, arena.Errorf(arena.EINVALID, "export: the checkpoint covers %d entries, but the log has %d: it is not this log's", c.Size, logSize)
	}
	root, err := l.RootAt(ctx, c.Size)
	if err != nil {
		return 0, fmt.Errorf("export: checkpoint: %w", err)
	}
	if !tlog.Equal(root, c.Hash) {
		return 0, arena.Errorf(arena.EINVALID, "export: the checkpoint's root for %d entries is %x, but the log's first %d entries hash to %x: it is not this log's", c.Size, c.Hash, c.Size, root)
	}
	return c.Size, nil
}

// WriteTable writes t as CSV (header row first; cells that a spreadsheet
// would run as a formula are escaped) or as JSON Lines (one object per row).
func WriteTable(w io.Writer, format string, t Table) error {
	rw, err := NewRowWriter(w, format, t.Columns)
	if err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := rw.Write(r); err != nil {
			return err
		}
	}
	return rw.Flush()
}

// RowWriter writes a table row by row: CSV with a header row and formula
// cells escaped, or JSON Lines with one object per row, its keys in column
// order.
type RowWriter struct {
	cols []string
	cw   *csv.Writer
	w    io.Writer // JSON Lines
	line []byte
	buf  []string
}

// NewRowWriter starts a table of cols on w (writing the CSV header).
func NewRowWriter(w io.Writer, format string, cols []string) (*RowWriter, error) {
	rw := &RowWriter{cols: cols, buf: make([]string, len(cols))}
	switch format {
	case CSV:
		rw.cw = csv.NewWriter(w)
		if err := rw.cw.Write(cols); err != nil {
			return nil, err
		}
	case JSONL:
		rw.w = w
	default:
		return nil, arena.Errorf(arena.EINVALID, "export: format %q: want csv or jsonl", format)
	}
	return rw, nil
}

// Write writes one row; it must have a cell per column.
func (rw *RowWriter) Write(r []string) error {
	if len(r) != len(rw.cols) {
		return fmt.Errorf("export: row of %d cells, want %d", len(r), len(rw.cols))
	}
	if rw.cw != nil {
		for i, c := range r {
			rw.buf[i] = EscapeCell(c)
		}
		return rw.cw.Write(rw.buf)
	}
	// One object per line, its keys in column order, each string as
	// encoding/json writes it.
	rw.line = append(rw.line[:0], '{')
	for i, c := range rw.cols {
		if i > 0 {
			rw.line = append(rw.line, ',')
		}
		rw.line = appendJSONString(rw.line, c)
		rw.line = append(rw.line, ':')
		rw.line = appendJSONString(rw.line, r[i])
	}
	rw.line = append(rw.line, '}', '\n')
	_, err := rw.w.Write(rw.line)
	return err
}

// appendJSONString appends s as json.Marshal encodes it: a string of
// printable ASCII that needs no escape is copied as it is (the cells are
// mostly numbers, hashes and times), any other through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Flush writes out what the CSV writer buffers.
func (rw *RowWriter) Flush() error {
	if rw.cw != nil {
		rw.cw.Flush()
		return rw.cw.Error()
	}
	return nil
}

// EscapeCell defuses CSV formula injection: a text cell starting with
// = + - @ (or a tab or carriage return, or the apostrophe itself) gets a
// leading apostrophe, which spreadsheets show as text. A number, negative
// ones included, stays as it is, so that a spreadsheet, pandas or R reads
// a numeric column as numbers: a cell that is wholly a decimal number
// cannot run as a formula. UnescapeCell undoes it.
func EscapeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r'", rune(s[0])) && !decimal.MatchString(s) {
		return "'" + s
	}
	return s
}

// decimal is a number as the export writes one (integers, and floats in
// Go's shortest form, with an exponent where Go uses one).
var decimal = regexp.MustCompile(`^-?(\d+(\.\d+)?|\.\d+)([eE][-+]?\d+)?$`)

// UnescapeCell is the inverse of EscapeCell.
func UnescapeCell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r'", rune(s[1])) {
		return s[1:]
	}
	return s
}

// leaderboardRows are the leaderboard table of a board, row by row.
func leaderboardRows(b scoring.Board) [][]string {
	out := make([][]string, 0, len(b.Rows))
	for _, r := range b.Rows {
		out = append(out, []string{strconv.Itoa(r.Rank), r.Agent, r.Name, bl(r.Preliminary), optF(r.Score), optF(r.ScoreCILo), optF(r.ScoreCIHi),
			strconv.Itoa(r.Rounds), strconv.Itoa(r.N), flt(r.Brier), optF(r.BrierSE), flt(r.BrierIndex), flt(r.BSS), optF(r.Peer), strconv.Itoa(r.PeerN),
			optF(r.Adjusted), optF(r.AdjustedCILo), optF(r.AdjustedCIHi), optF(r.Alpha), optF(r.AlphaSE), optF(r.AlphaCILo), optF(r.AlphaCIHi),
			optF(r.T), optF(r.P), optF(r.BeatPct), bl(r.Provisional), optF(r.PRank1), optF(r.PTop), strconv.Itoa(r.TieGroup)})
	}
	return out
}
