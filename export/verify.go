package export

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// VerifyOptions: LogKey is the log public key the verifier trusts (as
// published by the arena); nil trusts the key the export names, which
// proves only internal consistency.
type VerifyOptions struct {
	LogKey ed25519.PublicKey
	// KnownCheckpoints are checkpoint notes of the log the verifier saw
	// before (an earlier export's, a witness's): each must be signed by
	// the log key under the export's checkpoint's origin, be a prefix of
	// the export's tree, and none may be larger. An export alone cannot
	// show that it was rolled back to an earlier, consistent state; a
	// checkpoint seen before can.
	KnownCheckpoints [][]byte
	// VKey is the log's note verifier key (tlog.VerifierKey): it pins the
	// origin and the key the export's checkpoint is signed with, and is
	// the log key when LogKey is nil.
	VKey string
	// Policy, when set, requires the export's checkpoint to be cosigned
	// by a quorum of the policy's witnesses.
	Policy *witness.Policy
	// Progress, when set, is told after each table read and each check
	// how many of the verification's steps are done.
	Progress func(done, total int)
}

// Report says what Verify checked.
type Report struct {
	LogEntries       int
	SealedEntries    int // commits and reveals of untriggered rounds: hash only
	KnownCheckpoints int // VerifyOptions.KnownCheckpoints checked (signature and consistency with the export's)
	InclusionProofs  int
	Signatures       int // EIP-712 commit, reveal and profile signatures recovered
	CommitHashes     int
	Benchmarks       int // markets whose benchmark matched the log
	Outcomes         int // markets whose frozen outcome matched the log
	Scores           int // score rows recomputed
	Profiles         int // agents whose profile matched their latest logged one
	LeaderboardRows  int
	LeaderboardSkip  string // why the leaderboard was not recomputed, if it was not
	KeyFromExport    bool
	Rounds, Markets  int
	Submissions      int
	Cells            int // cells read and checked, over every table
	LogRoot          string
	LogSize          uint64
	// Checkpoint is the export's checkpoint, when it checked out, and
	// VKey the log verifier key it verified under; Quorum says it met
	// Policy's quorum.
	Checkpoint *tlog.Checkpoint
	VKey       string
	Quorum     bool
}

// Mismatch is one difference between an export and what its signed
// values and the contract say it must hold.
type Mismatch struct {
	Table  string // a table, or meta.json
	Key    string // the row, by its key columns ("round_id=3 agent=0x…"); empty for the table
	Column string // empty for a whole row
	Reason string
}

func (m *Mismatch) Error() string {
	var b strings.Builder
	b.WriteString(m.Table)
	if m.Key != "" {
		b.WriteString(" [" + m.Key + "]")
	}
	if m.Column != "" {
		b.WriteString(" " + m.Column)
	}
	return b.String() + ": " + m.Reason
}

// MaxMismatches bounds the differences a Failed error keeps; it counts
// them all.
const MaxMismatches = 1000

// Failed is Verify's error: the differences found, in the order the
// checks ran (the tables first, then the log, then each table against
// it), the first being the one to look at. It unwraps to the first.
type Failed struct {
	Mismatches []Mismatch
	Total      int
}

func (f *Failed) Error() string {
	if f.Total == 1 {
		return f.Mismatches[0].Error()
	}
	return fmt.Sprintf("%v (and %d more differences)", &f.Mismatches[0], f.Total-1)
}

func (f *Failed) Unwrap() error { return &f.Mismatches[0] }

type key struct {
	round uint64
	agent string
}

// sortedKeys are a map's round and agent keys, in order.
func sortedKeys[T any](m map[key]T) []key {
	ks := make([]key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b key) int { return cmp.Or(cmp.Compare(a.round, b.round), strings.Compare(a.agent, b.agent)) })
	return ks
}

type logged[T any] struct {
	idx uint64
	v   T
}

// verifier holds an export being verified: its tables, the model the
// log's entries make, and the differences found so far.
type verifier struct {
	o    VerifyOptions
	rep  *Report
	fail Failed
	meta Meta
	dom  forecast.Domain
	t    map[string]*table
	// method is the scoring method meta.json names, which the
	// leaderboard is recomputed with.
	method scoring.Method

	// The log, decoded.
	commits  map[key]logged[forecast.CommitEntry]
	reveals  map[key]logged[forecast.RevealEntry]
	benches  map[uint64]logged[forecast.BenchmarkEntry]
	resolved map[int64]logged[forecast.ResolutionEntry] // the latest per market
	outcomes map[uint64]logged[forecast.OutcomeEntry]   // the latest per round
	scores   map[uint64]map[string]logged[forecast.ScoreEntry]
	profiles map[string]logged[forecast.ProfileEntry] // the latest per agent
	named    map[uint64]uint64                        // rounds the log names: first entry naming each

	sealedRow int // the first sealed log entry, or -1

	subsOf map[uint64][]*row // exported submissions by round
	rmOf   map[uint64][]*row // exported round markets by round
	blamed map[string]bool   // round schedule cells found at fault ("id=3 commit_deadline")
}

func (v *verifier) add(table, key, column, format string, args ...any) {
	v.fail.Total++
	if len(v.fail.Mismatches) < MaxMismatches {
		v.fail.Mismatches = append(v.fail.Mismatches, Mismatch{Table: table, Key: key, Column: column, Reason: fmt.Sprintf(format, args...)})
	}
}

// Verify checks an export directory from its files alone, against the
// contract (Contract): every table is read strictly (each value written
// one way, keys unique, references resolved); the log is checked (leaf
// hashes, the checkpoint's signature and root, an inclusion proof per
// entry, every known checkpoint's consistency with it, every EIP-712 signature and
// commit hash in it); then every exported value is compared with what the
// log holds or what follows from it (benchmarks, outcomes, submissions,
// scores recomputed with the server's scorer, the leaderboard recomputed
// with the server's analysis) or, for what rests on the operator's word,
// checked for consistency (a round's schedule against its submissions'
// times). Nothing logged may be missing and nothing unlogged may be
// extra. It returns a *Failed naming every difference.
func Verify(dir string, o VerifyOptions) (*Report, error) {
	if o.VKey != "" {
		_, pub, err := tlog.ParseVerifierKey(o.VKey)
		if err != nil {
			return &Report{}, err
		}
		if o.LogKey == nil {
			o.LogKey = pub
		} else if !o.LogKey.Equal(pub) {
			return &Report{}, arena.Errorf(arena.EINVALID, "export: the log verifier key holds the key %x, not the log key %x", []byte(pub), []byte(o.LogKey))
		}
	}
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return &Report{}, arena.Errorf(arena.ENOTFOUND, "export: %s: no such directory", dir)
	} else if err != nil {
		return &Report{}, fmt.Errorf("export: %w", err)
	} else if !fi.IsDir() {
		return &Report{}, arena.Errorf(arena.EINVALID, "export: %s is not a directory: give the directory an export was written to", dir)
	}
	v := &verifier{o: o, rep: &Report{}, t: map[string]*table{}}
	if !v.readMeta(dir) {
		return v.rep, &v.fail
	}
	// The checks after the tables are read, in order; each table read and
	// each check is a step of the progress report.
	var forecasts []arena.ScoredForecast
	checks := []func(){func() { v.checkLog(dir) }, v.checkRounds, v.checkSealed, v.checkMarkets, v.checkRoundMarkets, v.checkSubmissions,
		func() { forecasts = v.checkScores() }, v.checkAgents, func() { v.checkLeaderboard(forecasts) }, v.checkTraces}
	steps := len(Contract) + len(checks)
	for i, spec := range Contract {
		t := readTable(dir, v.meta.Format, spec, func(m Mismatch) { v.add(m.Table, m.Key, m.Column, "%s", m.Reason) })
		if t.tooLarge != nil {
			return v.rep, fmt.Errorf("export: %s: %w", spec.Name, t.tooLarge)
		}
		if !t.found && spec.Name != TracesSpec.Name {
			v.add(spec.Name, "", "", "missing: no %s.%s", spec.Name, v.meta.Format)
		}
		v.t[spec.Name] = t
		v.rep.Cells += len(t.rows) * len(spec.Columns)
		v.progress(i+1, steps)
	}
	v.subsOf, v.rmOf, v.blamed = map[uint64][]*row{}, map[uint64][]*row{}, map[string]bool{}
	for _, r := range v.t["submissions"].rows {
		v.subsOf[r.u("round_id")] = append(v.subsOf[r.u("round_id")], r)
	}
	for _, r := range v.t["round_markets"].rows {
		v.rmOf[r.u("round_id")] = append(v.rmOf[r.u("round_id")], r)
	}
	for i, check := range checks {
		check()
		v.progress(len(Contract)+i+1, steps)
	}
	if v.fail.Total > 0 {
		return v.rep, &v.fail
	}
	return v.rep, nil
}

func (v *verifier) progress(done, total int) {
	if v.o.Progress != nil {
		v.o.Progress(done, total)
	}
}

// readMeta reads meta.json strictly and checks what it says of the key
// and domain; false when the tables cannot be read without it.
func (v *verifier) readMeta(dir string) bool {
	const m = "meta.json"
	b, err := readFileBounded(filepath.Join(dir, m), MaxMetaBytes)
	if err != nil {
		v.add(m, "", "", "%v", err)
		return false
	}
	if err := arena.CheckUniqueKeys(b); err != nil {
		v.add(m, "", "", "%v", err)
		return false
	}
	if retired := retiredHeads(b); retired != "" {
		v.add(m, "", retired, "%s", errRetiredHeads)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v.meta); err != nil {
		v.add(m, "", "", "%v", err)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		v.add(m, "", "", "data after the object")
	}
	if v.meta.Format != CSV && v.meta.Format != JSONL {
		v.add(m, "", "format", "%q: want csv or jsonl", v.meta.Format)
		return false
	}
	if !isAddress(v.meta.VerifyingContract) {
		v.add(m, "", "verifying_contract", "%q is not a checksummed address", v.meta.VerifyingContract)
	}
	v.dom = forecast.Domain{ChainID: v.meta.ChainID, Contract: common.HexToAddress(v.meta.VerifyingContract)}
	pub := v.o.LogKey
	if pub == nil {
		v.rep.KeyFromExport = true
		if pub, err = tlog.ParsePublicKey(v.meta.LogPublicKey); err != nil {
			v.add(m, "", "log_public_key", "%v", err)
		}
	} else if v.meta.LogPublicKey != hex.EncodeToString(pub) {
		v.add(m, "", "log_public_key", "%s, not the log key %x", v.meta.LogPublicKey, []byte(pub))
	}
	v.o.LogKey = pub
	if v.meta.Bootstrap != scoring.AnalysisBootstrap {
		v.add(m, "", "bootstrap", "%d replicates; the analysis this verifier recomputes draws %d", v.meta.Bootstrap, scoring.AnalysisBootstrap)
	}
	if v.meta.Seed != scoring.AnalysisSeed {
		v.add(m, "", "seed", "%d; the analysis this verifier recomputes is seeded with %d", v.meta.Seed, scoring.AnalysisSeed)
	}
	v.method = scoring.DefaultMethod()
	v.method.MinForecasts, v.method.MaxPerOrganisation = v.meta.MinForecasts, v.meta.MaxPerOrganisation
	if v.meta.MethodVersion != scoring.MethodVersion {
		v.add(m, "", "methodology_version", "%q; this verifier recomputes scoring method %s", v.meta.MethodVersion, scoring.MethodVersion)
	}
	if err := v.method.Validate(); err != nil {
		v.add(m, "", "min_forecasts", "%v", err)
	} else if d := v.method.Digest(); v.meta.MethodDigest != d {
		v.add(m, "", "methodology_digest", "%s; the method meta.json names digests to %s", v.meta.MethodDigest, d)
	}
	if !slices.ContainsFunc(Contract, func(t TableSpec) bool {
		_, err := os.Stat(filepath.Join(dir, t.Name+"."+v.meta.Format))
		return err == nil
	}) {
		v.add(m, "", "format", "%s, but no table is written so", v.meta.Format)
		return false
	}
	return true
}

// errRetiredHeads is the reason an export of the retired format is
// refused: its meta.json carries "forecast-arena tree head v1" heads.
const errRetiredHeads = `an export of the retired format: meta.json carries signed tree heads ("forecast-arena tree head v1"), ` +
	`which the log no longer signs and this verifier does not read; an export's signed head is its C2SP checkpoint file. ` +
	`Export the arena again (its log and checkpoints verify the same entries), or verify this export with the arena version that wrote it`

// retiredHeads names the field of meta.json that only the retired
// format has ("head" or "heads"), or is "" when there is none.
func retiredHeads(meta []byte) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta, &fields) != nil {
		return "" // reported by the strict decoding
	}
	for _, f := range []string{"head", "heads"} {
		if _, ok := fields[f]; ok {
			return f
		}
	}
	return ""
}

// readTables reads an export's tables strictly, for a caller that trusts
// them (Load, after Verify): the first fault fails.
func readTables(dir string) (Meta, map[string]*table, error) {
	var meta Meta
	b, err := readFileBounded(filepath.Join(dir, "meta.json"), MaxMetaBytes)
	if err != nil {
		return meta, nil, fmt.Errorf("export: %w", err)
	}
	if err := arena.CheckUniqueKeys(b); err != nil {
		return meta, nil, fmt.Errorf("export: meta.json: %w", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, nil, fmt.Errorf("export: meta.json: %w", err)
	}
	ts := map[string]*table{}
	var first error
	for _, spec := range Contract {
		ts[spec.Name] = readTable(dir, meta.Format, spec, func(m Mismatch) {
			if first == nil {
				first = &m
			}
		})
		if tl := ts[spec.Name].tooLarge; tl != nil {
			return meta, nil, fmt.Errorf("export: %s: %w", spec.Name, tl)
		}
	}
	if first != nil {
		return meta, nil, first
	}
	return meta, ts, nil
}
