package export

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/sync/singleflight"

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

// ---- the log ----

// checkLog checks the log's entries against the export's checkpoint, its
// signed head, and decodes them into the model every table is then
// compared with.
func (v *verifier) checkLog(dir string) {
	const lt = "log_entries"
	t := v.t[lt]
	c := v.readCheckpoint(dir)
	var root []byte // nil when the checkpoint does not check out
	var size uint64 // the entries the export's log holds
	if c != nil {
		root, size = c.Hash, c.Size
		v.rep.LogSize, v.rep.LogRoot = c.Size, hex.EncodeToString(c.Hash)
	} else {
		// Nothing signed says how long the log is: check what is exported.
		for _, r := range t.rows {
			if r.ok("idx") {
				size = max(size, r.u("idx")+1)
			}
		}
	}
	// A checkpoint (even a forged one) claiming far more entries than
	// exported is reported once, not entry by entry.
	n := size
	if limit := uint64(len(t.rows)) + 1024; n > limit {
		v.add(lt, "", "", "%d entries exported, the checkpoint covers %d", len(t.rows), size)
		n = limit
	}
	rows := make([]*row, n)
	for _, r := range t.rows {
		switch i := r.u("idx"); {
		case !r.ok("idx"):
		case i >= size:
			v.add(lt, r.key, "idx", "beyond the checkpoint, which covers %d entries", size)
		case i < n:
			rows[i] = r
		}
	}
	exported, own := make([][]byte, len(rows)), make([][]byte, len(rows))
	for i, r := range rows {
		exported[i] = make([]byte, 32)
		if r == nil {
			v.add(lt, kv(t.spec, strconv.Itoa(i)), "", "missing: the checkpoint covers %d entries", size)
		} else if h, err := hex.DecodeString(r.s("leaf_hash")); err == nil && len(h) == 32 {
			exported[i] = h
		}
		own[i] = exported[i]
		if r != nil && !r.b("sealed") && r.has("leaf") {
			own[i] = tlog.LeafHash([]byte(r.s("leaf")))
		}
	}
	// The authentic leaf hashes: the exported ones if their root is the
	// signed one (then a leaf that hashes otherwise was changed), else the
	// leaves' own if theirs is (then a leaf_hash that differs was). The
	// tree over them, built once, gives every root and proof below.
	tree, err := tlog.NewTree(exported)
	if err != nil {
		v.add(lt, "", "leaf_hash", "%v", err)
		return
	}
	ownRoot := false
	if rx, _ := tree.Root(n); root != nil && !tlog.Equal(rx, root) {
		ot, err := tlog.NewTree(own)
		if err != nil {
			v.add(lt, "", "leaf", "%v", err)
			return
		}
		if ro, _ := ot.Root(n); tlog.Equal(ro, root) {
			tree, ownRoot = ot, true
		} else {
			v.add(lt, "", "leaf_hash", "the exported entries' root is %x, the checkpoint's %x", rx, root)
		}
	}
	hashes := exported
	if ownRoot {
		hashes = own
	}
	leaves := make([]tlog.Leaf, len(rows))
	for i, r := range rows {
		switch {
		case r == nil:
		case r.b("sealed"):
			v.rep.SealedEntries++
			if k := r.s("kind"); r.has("leaf") || (k != tlog.KindCommit && k != tlog.KindReveal) {
				v.add(lt, r.key, "sealed", "true for a %s entry with a leaf: only commits and reveals are sealed, without their leaf", k)
			}
		case !r.has("leaf"):
			v.add(lt, r.key, "leaf", "empty, but the entry is not sealed")
		case ownRoot && !tlog.Equal(own[i], exported[i]):
			v.add(lt, r.key, "leaf_hash", "%s, but the leaf hashes to %x, which the signed root covers", r.s("leaf_hash"), own[i])
		case !tlog.Equal(own[i], exported[i]):
			v.add(lt, r.key, "leaf", "hashes to %x, not to its leaf_hash %s", own[i], r.s("leaf_hash"))
		case arena.CheckUniqueKeys([]byte(r.s("leaf"))) != nil || json.Unmarshal([]byte(r.s("leaf")), &leaves[i]) != nil:
			v.add(lt, r.key, "leaf", "not a JSON leaf with each key once")
			leaves[i] = tlog.Leaf{}
		case leaves[i].Kind != r.s("kind"):
			v.add(lt, r.key, "kind", "%s, but the leaf is a %q entry", r.s("kind"), leaves[i].Kind)
			leaves[i] = tlog.Leaf{}
		}
	}
	v.rep.LogEntries = len(rows)
	if root != nil {
		for i := range hashes {
			p, err := tree.InclusionProof(uint64(i), size)
			if err == nil {
				err = tlog.VerifyInclusion(uint64(i), size, hashes[i], p, root)
			}
			if err != nil {
				v.add(lt, kv(t.spec, strconv.Itoa(i)), "leaf_hash", "inclusion proof: %v", err)
				continue
			}
			v.rep.InclusionProofs++
		}
		v.checkKnown(tree, c)
	}
	v.decodeLog(rows, leaves)
}

// maxCheckpointBytes bounds the checkpoint file: a note with the log's
// signature and a few dozen cosignatures.
const maxCheckpointBytes = 64 << 10

// readCheckpoint reads and checks the export's checkpoint, its signed
// head: signed by the log key (under VKey's origin, else its own) and
// cosigned by a quorum of Policy's witnesses when there is one. It
// returns nil, with the reason reported, when it does not check out.
// Its tree is the exported log: checkLog proves every exported entry
// included in it.
func (v *verifier) readCheckpoint(dir string) *tlog.Checkpoint {
	const cf = CheckpointFile
	b, err := readFileBounded(filepath.Join(dir, cf), maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		v.add(cf, "", "", "missing: an export carries the log's checkpoint, the signed head its log is proved against")
		return nil
	}
	if err != nil {
		v.add(cf, "", "", "%v", err)
		return nil
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(b)))
	if err != nil {
		v.add(cf, "", "", "%v", err)
		return nil
	}
	vkey := v.o.VKey
	if vkey == "" {
		if vkey, err = tlog.VerifierKey(c.Origin, v.o.LogKey); err != nil {
			v.add(cf, "", "origin", "%v", err)
			return nil
		}
	}
	if _, err := tlog.OpenCheckpoint(b, vkey); err != nil {
		v.add(cf, "", "signature", "%v", err)
		return nil
	}
	if v.o.Policy != nil {
		lv, err := note.NewVerifier(vkey)
		if err == nil {
			_, err = v.o.Policy.Verify(b, lv)
		}
		if err != nil {
			v.add(cf, "", "cosignatures", "%v", err)
		} else {
			v.rep.Quorum = true
		}
	}
	v.rep.Checkpoint, v.rep.VKey = &c, vkey
	return &c
}

// checkKnown checks the checkpoints the verifier saw before against the
// export's, c, whose tree is tree: each signed by the log key under c's
// origin, none larger (the export would be rolled back), and each a
// prefix of c's tree (a consistency proof from tree each; a root that
// differs at a known size is a fork).
func (v *verifier) checkKnown(tree *tlog.Tree, c *tlog.Checkpoint) {
	for i, b := range v.o.KnownCheckpoints {
		name := fmt.Sprintf("known checkpoint %d", i+1)
		k, err := tlog.OpenCheckpoint(b, v.rep.VKey)
		if err != nil {
			v.add(CheckpointFile, name, "signature", "%v", err)
			continue
		}
		if k.Size > c.Size {
			v.add(CheckpointFile, "", "tree_size", "%d entries: rolled back from %s, seen before, of %d entries", c.Size, name, k.Size)
			continue
		}
		p, err := tree.ConsistencyProof(k.Size, c.Size)
		if err == nil {
			err = tlog.VerifyConsistency(k.Size, c.Size, p, k.Hash, c.Hash)
		}
		if err != nil {
			v.add(CheckpointFile, name, "root_hash", "the log forked: %s's tree of %d entries is not a prefix of the export's (its consistency proof fails)", name, k.Size)
			continue
		}
		v.rep.KnownCheckpoints++
	}
}

// decodeLog reads the unsealed entries into the model: commits and
// reveals (their signatures and commit hashes checked), benchmarks,
// resolutions, and each round's latest outcomes with the scores logged
// after them.
func (v *verifier) decodeLog(rows []*row, leaves []tlog.Leaf) {
	const lt = "log_entries"
	v.commits, v.reveals = map[key]logged[forecast.CommitEntry]{}, map[key]logged[forecast.RevealEntry]{}
	v.benches, v.resolved = map[uint64]logged[forecast.BenchmarkEntry]{}, map[int64]logged[forecast.ResolutionEntry]{}
	v.outcomes, v.scores = map[uint64]logged[forecast.OutcomeEntry]{}, map[uint64]map[string]logged[forecast.ScoreEntry]{}
	v.named, v.profiles = map[uint64]uint64{}, map[string]logged[forecast.ProfileEntry]{}
	nonces := map[string]map[uint64]uint64{} // agent → nonce → entry
	var agents []string
	var sigFaults []Mismatch
	for i, l := range leaves {
		if l.Kind == "" {
			continue // sealed, missing or already reported
		}
		idx, rk := uint64(i), rows[i].key
		bad := func(format string, args ...any) { v.add(lt, rk, "leaf", format, args...) }
		e, err := decodeEntry(l)
		if err != nil {
			bad("%v", err)
			continue
		}
		name := func(round uint64) {
			if _, ok := v.named[round]; !ok {
				v.named[round] = idx
			}
		}
		useNonce := func(agent string, n uint64) {
			if nonces[agent] == nil {
				nonces[agent] = map[uint64]uint64{}
				agents = append(agents, agent)
			}
			if j, dup := nonces[agent][n]; dup {
				bad("nonce %d of %s was used by entry %d already", n, agent, j)
			}
			nonces[agent][n] = idx
		}
		switch e := e.(type) {
		case *forecast.CommitEntry:
			name(e.RoundID)
			k := key{e.RoundID, e.Agent}
			if _, dup := v.commits[k]; dup {
				bad("a second commit of %s in round %d", e.Agent, e.RoundID)
				continue
			}
			addr, err := forecast.ParseAddress(e.Agent)
			if err != nil || addr.Hex() != e.Agent {
				bad("agent %q is not a checksummed address", e.Agent)
				continue
			}
			msg := forecast.Commit{RoundID: e.RoundID, CommitHash: common.HexToHash(e.CommitHash), Agent: addr, Nonce: e.Nonce, Deadline: e.Deadline}
			if e.ReasoningHash != "" {
				msg.ReasoningHash = common.HexToHash(e.ReasoningHash)
			}
			if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyCommit(msg, sig) }); err != nil {
				sigFaults = append(sigFaults, Mismatch{lt, rk, "leaf", "commit signature: " + err.Error()})
			}
			useNonce(e.Agent, e.Nonce)
			v.commits[k] = logged[forecast.CommitEntry]{idx, *e}
		case *forecast.RevealEntry:
			name(e.RoundID)
			k := key{e.RoundID, e.Agent}
			c, committed := v.commits[k]
			if _, dup := v.reveals[k]; dup || !committed {
				bad("a reveal of %s in round %d without a commit before it, or a second one", e.Agent, e.RoundID)
				continue
			}
			addr := common.HexToAddress(e.Agent)
			salt := common.HexToHash(e.Salt)
			msg := forecast.Reveal{RoundID: e.RoundID, Predictions: e.Predictions, Salt: salt, Agent: addr, Nonce: e.Nonce, Deadline: e.Deadline}
			if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyReveal(msg, sig) }); err != nil {
				sigFaults = append(sigFaults, Mismatch{lt, rk, "leaf", "reveal signature: " + err.Error()})
			}
			if err := forecast.CheckPredictions(e.Predictions, len(e.Predictions)); err != nil || !isHex(e.Salt, "0x", 32) {
				bad("predictions %v or salt %q out of range", e.Predictions, e.Salt)
				continue
			}
			if h := forecast.CommitHash(e.RoundID, addr, e.Predictions, salt); h.Hex() != c.v.CommitHash {
				bad("predictions and salt hash to %s, the commit (entry %d) was %s", h.Hex(), c.idx, c.v.CommitHash)
				continue
			}
			v.rep.CommitHashes++
			useNonce(e.Agent, e.Nonce)
			v.reveals[k] = logged[forecast.RevealEntry]{idx, *e}
		case *forecast.BenchmarkEntry:
			name(e.RoundID)
			if b, dup := v.benches[e.RoundID]; dup {
				bad("a second benchmark entry of round %d (entry %d has one)", e.RoundID, b.idx)
				continue
			}
			ok := len(e.MarketIDs) == len(e.Benchmarks) && len(e.MarketIDs) > 0
			for _, b := range e.Benchmarks {
				ok = ok && (b == scoring.NoBenchmark || (b >= 0 && b <= forecast.MaxBps))
			}
			if !ok {
				bad("%d markets with %d benchmarks %v: want one in 0 … %d (or %d for none) per market", len(e.MarketIDs), len(e.Benchmarks), e.Benchmarks, forecast.MaxBps, scoring.NoBenchmark)
				continue
			}
			v.benches[e.RoundID] = logged[forecast.BenchmarkEntry]{idx, *e}
		case *forecast.ResolutionEntry:
			v.resolved[e.MarketID] = logged[forecast.ResolutionEntry]{idx, *e}
		case *forecast.OutcomeEntry:
			name(e.RoundID)
			ok := len(e.Outcomes) > 0
			for _, x := range e.Outcomes {
				ok = ok && x >= scoring.OutcomeUnresolved && x <= scoring.OutcomeYes
			}
			if !ok {
				bad("outcomes %v: want 1, 0, −1 or −2 per market", e.Outcomes)
				continue
			}
			v.outcomes[e.RoundID] = logged[forecast.OutcomeEntry]{idx, *e}
			v.scores[e.RoundID] = map[string]logged[forecast.ScoreEntry]{} // a re-score replaces the earlier scores
		case *forecast.ScoreEntry:
			set, ok := v.scores[e.RoundID]
			if !ok {
				bad("a score of round %d before its outcomes", e.RoundID)
				continue
			}
			if s, dup := set[e.Agent]; dup {
				bad("a second score of %s in round %d after its outcomes (entry %d has one)", e.Agent, e.RoundID, s.idx)
				continue
			}
			set[e.Agent] = logged[forecast.ScoreEntry]{idx, *e}
		case *forecast.ProfileEntry:
			addr, err := forecast.ParseAddress(e.Agent)
			if err != nil || addr.Hex() != e.Agent {
				bad("agent %q is not a checksummed address", e.Agent)
				continue
			}
			f := forecast.ProfileFields{Name: e.Name, Organisation: e.Organisation, Model: e.Model, Homepage: e.Homepage, Description: e.Description}
			if err := forecast.CheckProfile(f); err != nil {
				bad("a profile the arena accepts none of: %v", err)
				continue
			}
			msg := forecast.Profile{Agent: addr, ProfileFields: f, Version: e.Version, Deadline: e.Deadline}
			if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyProfile(msg, sig) }); err != nil {
				sigFaults = append(sigFaults, Mismatch{lt, rk, "leaf", "profile signature: " + err.Error()})
			}
			// Each accepted update takes the next version: a gap is an
			// accepted update the log lacks.
			prev := v.profiles[e.Agent]
			if e.Version != prev.v.Version+1 {
				bad("version %d of %s's profile follows version %d (entry %d): want %d", e.Version, e.Agent, prev.v.Version, prev.idx, prev.v.Version+1)
				continue
			}
			v.profiles[e.Agent] = logged[forecast.ProfileEntry]{idx, *e}
		case *forecast.DisputeEntry:
			if !auditText(e.Admin, arena.MaxNameChars) || !auditText(e.Reason, arena.MaxReasonChars) {
				bad("a dispute whose admin or reason the arena accepts none of")
			}
		case *forecast.DecisionEntry:
			if _, ok := arena.OracleDecision(e.Decision).MarketResolution(); !ok || !auditText(e.Arbiter, arena.MaxNameChars) || !auditText(e.Reason, arena.MaxReasonChars) {
				bad("a decision %q, or an arbiter or reason, the arena accepts none of", e.Decision)
			}
		}
	}
	// Under another domain no signature recovers: that is the domain's
	// fault, not each entry's.
	if len(sigFaults) > 0 && v.rep.Signatures == 0 {
		v.add("meta.json", "EIP-712 domain", "", "no agent signature in the log recovers under chain_id %d and verifying_contract %s (%s)",
			v.meta.ChainID, v.meta.VerifyingContract, sigFaults[0].Reason)
	} else {
		for _, m := range sigFaults {
			v.add(m.Table, m.Key, m.Column, "%s", m.Reason)
		}
	}
	// A commit or reveal is published once its round's outcomes are
	// logged, and stays sealed until then.
	for _, k := range sortedKeys(v.commits) {
		if _, ok := v.outcomes[k.round]; !ok {
			v.add(lt, rows[v.commits[k].idx].key, "sealed", "false, but round %d has no logged outcomes", k.round)
		}
	}
	v.sealedRow = slices.IndexFunc(rows, func(r *row) bool { return r != nil && r.b("sealed") })
	// Each accepted commit and reveal takes the agent's next nonce: with
	// every entry readable, a gap is an accepted request the log lacks.
	if v.rep.SealedEntries == 0 {
		for _, a := range agents {
			for n := range uint64(len(nonces[a])) {
				if _, ok := nonces[a][n]; !ok {
					v.add(lt, "", "leaf", "agent %s's nonces skip %d: an accepted commit or reveal is not in the log", a, n)
					break
				}
			}
		}
	}
}

func (v *verifier) checkSig(s string, verify func([]byte) error) error {
	if !isHex(s, "0x", forecast.SignatureLen) {
		return fmt.Errorf("%q is not written as the arena writes signatures", s)
	}
	sig, err := forecast.DecodeSignature(s)
	if err == nil {
		err = verify(sig)
	}
	if err == nil {
		v.rep.Signatures++
	}
	return err
}

// auditText reports whether s is a dispute's or decision's text as the
// arena accepts and stores it (see arena.CleanText).
func auditText(s string, max int) bool {
	c, err := arena.CleanText("", s, max, false)
	return err == nil && c == s
}

// decodeEntry decodes a leaf strictly: a known kind, no unknown or
// missing field, and the very bytes the arena writes for it.
func decodeEntry(l tlog.Leaf) (any, error) {
	var e any
	switch l.Kind {
	case tlog.KindCommit:
		e = new(forecast.CommitEntry)
	case tlog.KindReveal:
		e = new(forecast.RevealEntry)
	case tlog.KindBenchmark:
		e = new(forecast.BenchmarkEntry)
	case tlog.KindResolution:
		e = new(forecast.ResolutionEntry)
	case tlog.KindOutcome:
		e = new(forecast.OutcomeEntry)
	case tlog.KindScore:
		e = new(forecast.ScoreEntry)
	case tlog.KindProfile:
		e = new(forecast.ProfileEntry)
	case tlog.KindDispute:
		e = new(forecast.DisputeEntry)
	case tlog.KindDecision:
		e = new(forecast.DecisionEntry)
	default:
		return nil, fmt.Errorf("unknown kind %q", l.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(l.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(e); err != nil {
		return nil, fmt.Errorf("malformed %s entry: %v", l.Kind, err)
	}
	canon, err := json.Marshal(e)
	if err != nil || !bytes.Equal(canon, l.Data) {
		return nil, fmt.Errorf("not written as the arena writes this %s entry (%s)", l.Kind, canon)
	}
	return e, nil
}

// ---- the tables ----

// cmp reports a cell that differs from the value the model says it must
// hold; a cell already reported as malformed is skipped.
func (v *verifier) cmp(t *table, r *row, column, want, why string) bool {
	if !r.ok(column) || r.s(column) == want {
		return true
	}
	if want == "" {
		v.add(t.spec.Name, r.key, column, "%q, but %s has none", r.s(column), why)
	} else {
		v.add(t.spec.Name, r.key, column, "%q, but %s: %q", r.s(column), why, want)
	}
	return false
}

// claim reports a claimed cell that contradicts another value.
func (v *verifier) claim(t *table, r *row, column, format string, args ...any) {
	v.add(t.spec.Name, r.key, column, "%q: "+format, append([]any{r.s(column)}, args...)...)
}

func (v *verifier) round(id uint64) *row {
	return v.t["rounds"].byKey[kv(v.t["rounds"].spec, u64(id))]
}

func (v *verifier) checkRounds() {
	t := v.t["rounds"]
	v.rep.Rounds = len(t.rows)
	ids := make([]uint64, 0, len(v.named))
	for id := range v.named {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if v.round(id) == nil && v.meta.Since == nil {
			v.add(t.spec.Name, kv(t.spec, u64(id)), "", "missing: log entry %d names it", v.named[id])
		}
	}
	for _, r := range t.rows {
		id := r.u("id")
		cd, rs, rd := r.t("commit_deadline"), r.t("reveal_start"), r.t("reveal_deadline")
		if v.meta.Since != nil && cd.Before(*v.meta.Since) {
			v.add("meta.json", "", "since", "%s, after round %d's commit deadline %s", tm(*v.meta.Since), id, tm(cd))
		}
		if !cd.Before(rs) {
			v.claim(t, r, "reveal_start", "not after commit_deadline %s", tm(cd))
		}
		if rd.Before(rs) {
			v.claim(t, r, "reveal_deadline", "before reveal_start %s", tm(rs))
		}
		if !r.t("created_at").Before(cd) {
			v.claim(t, r, "created_at", "not before commit_deadline %s", tm(cd))
		}
		b, benched := v.benches[id]
		if benched != r.has("benchmark_at") {
			v.presence(t, r, "benchmark_at", "benchmarks", b.idx, benched)
		} else if benched && r.t("benchmark_at").Before(cd) {
			v.claim(t, r, "benchmark_at", "before commit_deadline %s", tm(cd))
		}
		o, triggered := v.outcomes[id]
		if triggered != r.has("triggered_at") {
			v.presence(t, r, "triggered_at", "outcomes", o.idx, triggered)
		} else if triggered {
			if !r.t("triggered_at").After(rd) {
				v.claim(t, r, "triggered_at", "not after reveal_deadline %s", tm(rd))
			} else if benched && r.t("benchmark_at").After(r.t("triggered_at")) {
				v.claim(t, r, "benchmark_at", "after triggered_at %s", r.s("triggered_at"))
			}
		}
		if triggered && r.b("invalidated") {
			v.claim(t, r, "invalidated", "the log scored the round (entry %d)", o.idx)
		}
		v.checkSchedule(t, r)
	}
}

// checkSchedule checks a round's schedule against its submissions' times.
// A time of the round that contradicts every submission is the round's
// fault, and the submissions are not blamed for it; one that a few
// submissions contradict is theirs (checkSubmissions).
func (v *verifier) checkSchedule(t *table, r *row) {
	var committed, revealed []time.Time
	for _, s := range v.subsOf[r.u("id")] {
		committed = append(committed, s.t("committed_at"))
		if s.has("revealed_at") {
			revealed = append(revealed, s.t("revealed_at"))
		}
	}
	all := func(ts []time.Time, f func(time.Time) bool) bool {
		return len(ts) > 0 && !slices.ContainsFunc(ts, func(x time.Time) bool { return !f(x) })
	}
	blame := func(column, format string, args ...any) {
		v.claim(t, r, column, format, args...)
		v.blamed[r.key+" "+column] = true
	}
	if cd := r.t("commit_deadline"); all(committed, cd.Before) {
		blame("commit_deadline", "before every committed_at of the round")
	}
	if ca := r.t("created_at"); all(committed, ca.After) {
		blame("created_at", "after every committed_at of the round")
	}
	if rs := r.t("reveal_start"); all(revealed, rs.After) {
		blame("reveal_start", "after every revealed_at of the round")
	}
	if rd := r.t("reveal_deadline"); all(revealed, rd.Before) {
		blame("reveal_deadline", "before every revealed_at of the round")
	}
}

// checkSealed checks that a sealed log entry has a round to belong to:
// with every round exported, one not triggered.
func (v *verifier) checkSealed() {
	if v.sealedRow < 0 || v.meta.Since != nil || slices.ContainsFunc(v.t["rounds"].rows, func(r *row) bool { return !r.has("triggered_at") }) {
		return
	}
	t := v.t["log_entries"]
	v.add(t.spec.Name, kv(t.spec, strconv.Itoa(v.sealedRow)), "sealed", "true, but every exported round is triggered")
}

// presence reports a cell set without a logged item, or empty with one.
func (v *verifier) presence(t *table, r *row, column, what string, idx uint64, logged bool) {
	if logged {
		v.add(t.spec.Name, r.key, column, "empty, but the round's %s are logged (entry %d)", what, idx)
	} else {
		v.claim(t, r, column, "the log has no %s of the round", what)
	}
}

// roundMarket is an exported round's market at idx i, or nil.
func (v *verifier) roundMarket(id uint64, i int) *row {
	t := v.t["round_markets"]
	return t.byKey[kv(t.spec, u64(id), strconv.Itoa(i))]
}

func (v *verifier) checkMarkets() {
	t, rmt := v.t["markets"], v.t["round_markets"]
	v.rep.Markets = len(t.rows)
	used := map[string]*row{}
	for _, rm := range rmt.rows {
		k := kv(t.spec, rm.s("market_id"))
		if used[k] == nil && rm.ok("market_id") {
			used[k] = rm
			if t.byKey[k] == nil {
				v.add(t.spec.Name, k, "", "missing: round_markets [%s] names it", rm.key)
			}
		}
	}
	sources := map[string]string{}
	for _, r := range t.rows {
		if used[r.key] == nil {
			v.add(t.spec.Name, r.key, "", "in no exported round")
		}
		src := r.s("source") + "\x00" + r.s("source_id")
		if other, dup := sources[src]; dup {
			v.claim(t, r, "source_id", "market %s has it too", other)
		}
		sources[src] = r.key
		res, status := r.s("resolution"), arena.MarketStatus(r.s("status"))
		if res != "" && status != arena.StatusResolved {
			v.claim(t, r, "status", "but the resolution is %q", res)
		}
		if l, ok := v.resolved[r.i("id")]; ok && !strings.EqualFold(l.v.Resolution, res) {
			v.cmp(t, r, "resolution", l.v.Resolution, fmt.Sprintf("log entry %d", l.idx))
		}
	}
}

func (v *verifier) checkRoundMarkets() {
	t, mt := v.t["round_markets"], v.t["markets"]
	for _, r := range t.rows {
		if v.round(r.u("round_id")) == nil {
			v.claim(t, r, "round_id", "not an exported round")
		}
	}
	tol := forecast.BenchmarkTolerance
	for _, rr := range v.t["rounds"].rows {
		id := rr.u("id")
		b, benched := v.benches[id]
		o, triggered := v.outcomes[id]
		k := 0 // without a logged market count, the exported one
		for _, r := range v.rmOf[id] {
			k = max(k, int(min(r.u("idx"), uint64(len(t.rows))))+1)
		}
		switch {
		case benched:
			k = len(b.v.MarketIDs)
		case triggered:
			k = len(o.v.Outcomes)
		}
		if benched && triggered && len(o.v.Outcomes) != k {
			v.add("log_entries", kv(v.t["log_entries"].spec, u64(o.idx)), "leaf", "%d outcomes for the %d markets of round %d's benchmarks (entry %d)", len(o.v.Outcomes), k, id, b.idx)
		}
		if k == 0 {
			v.add(t.spec.Name, kv(t.spec, u64(id), "0"), "", "missing: a round has at least one market")
		}
		for _, r := range v.rmOf[id] {
			if r.u("idx") >= uint64(k) {
				v.add(t.spec.Name, r.key, "idx", "beyond the %d markets of the round's logged benchmarks or outcomes", k)
			}
		}
		events := map[string]string{}
		seen := map[string]string{}
		for i := range k {
			r := v.roundMarket(id, i)
			if r == nil {
				v.add(t.spec.Name, kv(t.spec, u64(id), strconv.Itoa(i)), "", "missing: round %d has %d markets", id, k)
				continue
			}
			if other, dup := seen[r.s("market_id")]; dup {
				v.claim(t, r, "market_id", "the round has it at %s too", other)
			}
			seen[r.s("market_id")] = r.key
			if m := mt.byKey[kv(mt.spec, r.s("market_id"))]; m != nil && m.has("event_id") {
				if other, dup := events[m.s("event_id")]; dup {
					v.claim(t, r, "market_id", "a second market on event %q (with %s)", m.s("event_id"), other)
				}
				events[m.s("event_id")] = r.key
			}
			bps := ""
			if benched {
				v.cmp(t, r, "market_id", i64(b.v.MarketIDs[i]), fmt.Sprintf("the logged benchmarks (entry %d)", b.idx))
				if x := b.v.Benchmarks[i]; x != scoring.NoBenchmark {
					bps = i64(int64(x))
				}
				if v.cmp(t, r, "benchmark_bps", bps, fmt.Sprintf("log entry %d", b.idx)) {
					v.rep.Benchmarks++
				}
			} else {
				v.cmp(t, r, "benchmark_bps", "", "the log")
			}
			if (r.s("benchmark_time") != "") != (bps != "") {
				v.claim(t, r, "benchmark_time", "set exactly with benchmark_bps")
			} else if d := r.t("benchmark_time").Sub(rr.t("commit_deadline")); bps != "" && (d > tol || d < -tol) {
				v.claim(t, r, "benchmark_time", "%s from the commit deadline, beyond %s", d, tol)
			}
			if (r.s("benchmark_source") != "") != (bps != "") {
				v.claim(t, r, "benchmark_source", "set exactly with benchmark_bps")
			}
			out := ""
			if triggered {
				out = strconv.Itoa(int(o.v.Outcomes[i]))
			}
			if v.cmp(t, r, "outcome", out, fmt.Sprintf("the round's latest outcomes (entry %d)", o.idx)) && triggered {
				v.rep.Outcomes++
				v.checkResolution(r, o.v.Outcomes[i], o.idx)
			}
		}
	}
}

// checkResolution checks a market's resolution against an outcome the
// log froze for it.
func (v *verifier) checkResolution(rm *row, x int8, idx uint64) {
	t := v.t["markets"]
	m := t.byKey[kv(t.spec, rm.s("market_id"))]
	if m == nil || x == scoring.OutcomeUnresolved {
		return
	}
	res := m.s("resolution")
	ok := map[int8]bool{scoring.OutcomeYes: res == arena.Yes, scoring.OutcomeNo: res == arena.No,
		scoring.OutcomeExcluded: res != "" && res != arena.Yes && res != arena.No}[x]
	if !ok && m.ok("resolution") {
		v.claim(t, m, "resolution", "round_markets [%s] is frozen as %d (log entry %d)", rm.key, x, idx)
	}
	if m.s("status") != string(arena.StatusResolved) && m.ok("status") {
		v.claim(t, m, "status", "round_markets [%s] is frozen as %d (log entry %d)", rm.key, x, idx)
	}
}

func (v *verifier) checkSubmissions() {
	t := v.t["submissions"]
	v.rep.Submissions = len(t.rows)
	for _, r := range t.rows {
		rr := v.round(r.u("round_id"))
		if rr == nil || !rr.has("triggered_at") {
			v.claim(t, r, "round_id", "not an exported round whose outcomes are triggered")
		}
		if _, ok := v.commits[key{r.u("round_id"), r.s("agent")}]; !ok && r.ok("agent") {
			v.add(t.spec.Name, r.key, "", "not in the log: no logged commit of this agent in this round")
		}
	}
	for _, k := range sortedKeys(v.commits) {
		c := v.commits[k]
		rr := v.round(k.round)
		if rr == nil {
			continue // a round before since
		}
		r := t.byKey[kv(t.spec, u64(k.round), k.agent)]
		if r == nil {
			v.add(t.spec.Name, kv(t.spec, u64(k.round), k.agent), "", "missing: committed in log entry %d", c.idx)
			continue
		}
		why := fmt.Sprintf("log entry %d", c.idx)
		v.cmp(t, r, "commit_hash", c.v.CommitHash, why)
		v.cmp(t, r, "reasoning_hash", c.v.ReasoningHash, why)
		v.cmp(t, r, "commit_nonce", u64(c.v.Nonce), why)
		v.cmp(t, r, "commit_sig", c.v.Signature, why)
		at := r.t("committed_at")
		switch {
		case at.After(rr.t("commit_deadline")) && !v.blamed[rr.key+" commit_deadline"]:
			v.claim(t, r, "committed_at", "after the round's commit deadline %s", rr.s("commit_deadline"))
		case at.Before(rr.t("created_at")) && !v.blamed[rr.key+" created_at"]:
			v.claim(t, r, "committed_at", "before the round was created (%s)", rr.s("created_at"))
		case !inSigned(at, c.v.Deadline):
			v.claim(t, r, "committed_at", "the agent signed the commit to be valid until %s (and for at most %s before it)", tm(time.Unix(int64(c.v.Deadline), 0)), forecast.MaxDeadlineAhead)
		}
		rv, revealed := v.reveals[k]
		if !revealed {
			for _, c := range []string{"predictions", "salt", "reveal_nonce", "reveal_sig", "revealed_at"} {
				v.cmp(t, r, c, "", "the log (no reveal: a forfeit)")
			}
			continue
		}
		why = fmt.Sprintf("log entry %d", rv.idx)
		v.cmp(t, r, "predictions", preds(rv.v.Predictions), why)
		v.cmp(t, r, "salt", rv.v.Salt, why)
		v.cmp(t, r, "reveal_nonce", u64(rv.v.Nonce), why)
		v.cmp(t, r, "reveal_sig", rv.v.Signature, why)
		at2 := r.t("revealed_at")
		switch {
		case !r.has("revealed_at"):
			v.add(t.spec.Name, r.key, "revealed_at", "empty, but the reveal is logged (%s)", why)
		case (at2.Before(rr.t("reveal_start")) && !v.blamed[rr.key+" reveal_start"]) || (at2.After(rr.t("reveal_deadline")) && !v.blamed[rr.key+" reveal_deadline"]):
			v.claim(t, r, "revealed_at", "outside the round's reveal window [%s, %s]", rr.s("reveal_start"), rr.s("reveal_deadline"))
		case !inSigned(at2, rv.v.Deadline):
			v.claim(t, r, "revealed_at", "the agent signed the reveal to be valid until %s (and for at most %s before it)", tm(time.Unix(int64(rv.v.Deadline), 0)), forecast.MaxDeadlineAhead)
		}
	}
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

// inSigned reports whether a request accepted at t meets its signed
// deadline: not after it, and at most MaxDeadlineAhead before it.
func inSigned(t time.Time, deadline uint64) bool {
	n := t.Unix()
	return n >= 0 && deadline >= uint64(n) && deadline-uint64(n) <= uint64(forecast.MaxDeadlineAhead/time.Second)
}

// checkScores recomputes every exported round's scores from the logged
// reveals, benchmarks and outcomes, compares them with the latest logged
// scores and the exported ones, and returns the scored forecasts the
// leaderboard is recomputed from.
func (v *verifier) checkScores() []arena.ScoredForecast {
	t, lt, mt := v.t["scores"], v.t["log_entries"], v.t["markets"]
	checked := map[string]bool{}
	var forecasts []arena.ScoredForecast
	commits := sortedKeys(v.commits)
	for _, rr := range v.t["rounds"].rows {
		id := rr.u("id")
		o, triggered := v.outcomes[id]
		if !triggered {
			continue
		}
		b, benched := v.benches[id]
		k := len(o.v.Outcomes)
		ms := make([]scoring.MarketOutcome, k)
		for i, x := range o.v.Outcomes {
			ms[i] = scoring.MarketOutcome{Outcome: scoring.ScoringOutcome(x), Benchmark: scoring.NoBenchmark}
			switch rm := v.roundMarket(id, i); {
			case benched && i < len(b.v.MarketIDs):
				ms[i].MarketID, ms[i].Benchmark = b.v.MarketIDs[i], b.v.Benchmarks[i]
			case rm != nil:
				ms[i].MarketID = rm.i("market_id")
			}
		}
		var agents []string
		var entries []scoring.Entry
		for _, ck := range commits {
			if ck.round != id {
				continue
			}
			e := scoring.Entry{Forfeit: true}
			if rv, ok := v.reveals[ck]; ok {
				if len(rv.v.Predictions) != k {
					v.add(lt.spec.Name, kv(lt.spec, u64(rv.idx)), "leaf", "%d predictions for the %d markets of round %d", len(rv.v.Predictions), k, id)
					continue
				}
				e = scoring.Entry{Predictions: rv.v.Predictions}
			}
			agents, entries = append(agents, ck.agent), append(entries, e)
		}
		agents = append(agents, forecast.RandomAgent)
		entries = append(entries, scoring.Entry{Predictions: scoring.RandomPredictions(id, rr.t("commit_deadline"), k)})
		res, err := scoring.ScoreRound(ms, entries)
		if err != nil {
			v.add(lt.spec.Name, kv(lt.spec, u64(o.idx)), "leaf", "round %d cannot be scored: %v", id, err)
			continue
		}
		if res.N > 0 && !benched {
			v.add(lt.spec.Name, kv(lt.spec, u64(o.idx)), "leaf", "round %d is scored without logged benchmarks", id)
		}
		want := map[string][]string{} // agent → the scores row
		row := func(brier float64, alpha *float64, bb int64, ab *int64, n, an int, forfeit bool) []string {
			return []string{u64(id), "", flt(brier), optF(alpha), i64(bb), optI(ab), strconv.Itoa(n), strconv.Itoa(an), bl(forfeit)}
		}
		if res.N > 0 {
			for a, s := range res.Agents {
				var alpha *float64
				var ab *int64
				if res.AlphaN > 0 {
					alpha, ab = &s.Alpha, &s.AlphaBps2
				}
				want[agents[a]] = row(s.Brier, alpha, s.BrierBps2, ab, res.N, res.AlphaN, s.Forfeit)
				for i, mo := range ms {
					if !mo.Scored() {
						continue
					}
					var cat, event string
					if m := mt.byKey[kv(mt.spec, i64(mo.MarketID))]; m != nil {
						cat, event = m.s("category"), m.s("event_id")
					}
					forecasts = append(forecasts, arena.ScoredForecast{RoundID: id, Agent: agents[a], MarketID: mo.MarketID, Category: cat, Event: event,
						Outcome: mo.Outcome, Benchmark: mo.BenchmarkPrice(), Forfeit: s.Forfeit, Forecast: entries[a].Forecast(i, mo.Outcome)})
				}
			}
			if res.AlphaN > 0 {
				zero, zb := 0.0, int64(0)
				want[forecast.MarketAgent] = row(res.BaseBrier, &zero, res.BaseBrierBps2, &zb, res.AlphaN, res.AlphaN, false)
			}
		}
		names := slices.Sorted(maps.Keys(want))
		// The log's scores.
		logged := v.scores[id]
		blamed := map[string]bool{}
		for _, a := range names {
			w := want[a]
			ls, ok := logged[a]
			if !ok {
				v.add(lt.spec.Name, kv(lt.spec, u64(o.idx)), "leaf", "round %d's outcomes are not followed by a score of %s", id, a)
				continue
			}
			got := row(0, nil, ls.v.BrierBps2, ls.v.AlphaBps2, ls.v.Scored, ls.v.Benchmarked, ls.v.Forfeit)
			for i, c := range t.spec.Names() {
				if c == "brier" || c == "alpha" || c == "round_id" || c == "agent" || got[i] == w[i] {
					continue
				}
				// The random baseline is seeded by the commit deadline: a
				// logged score the export agrees with, recomputing only
				// otherwise, means the deadline was changed.
				if r := t.byKey[kv(t.spec, u64(id), a)]; a == forecast.RandomAgent && r != nil && r.s(c) == got[i] {
					v.claim(v.t["rounds"], rr, "commit_deadline", "it seeds the random baseline, whose logged score (entry %d) has %s %s, recomputed %s", ls.idx, c, got[i], w[i])
					blamed[a] = true // the row agrees with the log: not blamed again
					break
				}
				v.add(lt.spec.Name, kv(lt.spec, u64(ls.idx)), "leaf", "the score of %s in round %d has %s %s, recomputed %s", a, id, c, got[i], w[i])
				break
			}
		}
		for _, a := range slices.Sorted(maps.Keys(logged)) {
			if ls := logged[a]; want[a] == nil {
				v.add(lt.spec.Name, kv(lt.spec, u64(ls.idx)), "leaf", "a score of %s in round %d, which recomputes to none", a, id)
			}
		}
		// The exported scores.
		for _, a := range names {
			w := want[a]
			r := t.byKey[kv(t.spec, u64(id), a)]
			if r == nil {
				v.add(t.spec.Name, kv(t.spec, u64(id), a), "", "missing: recomputed from round %d's logged outcomes (entry %d)", id, o.idx)
				continue
			}
			checked[r.key] = true
			if blamed[a] {
				continue
			}
			ok := true
			for i, c := range t.spec.Names() {
				if c != "round_id" && c != "agent" {
					ok = v.cmp(t, r, c, w[i], "recomputed") && ok
				}
			}
			if ok {
				v.rep.Scores++
			}
		}
	}
	for _, r := range t.rows {
		if !checked[r.key] {
			v.add(t.spec.Name, r.key, "", "recomputes to nothing: not a committed agent or baseline of an exported round scored in the log")
		}
	}
	return forecasts
}

func (v *verifier) checkAgents() {
	t := v.t["agents"]
	listed := map[string]bool{}
	for _, k := range sortedKeys(v.commits) {
		if !listed[k.agent] {
			listed[k.agent] = true
			if t.byKey[kv(t.spec, k.agent)] == nil {
				v.add(t.spec.Name, kv(t.spec, k.agent), "", "missing: committed in log entry %d", v.commits[k].idx)
			}
		}
	}
	// A signed profile is the agent's latest logged one, cell by cell.
	for _, agent := range slices.Sorted(maps.Keys(v.profiles)) {
		p := v.profiles[agent]
		r := t.byKey[kv(t.spec, agent)]
		if r == nil {
			v.add(t.spec.Name, kv(t.spec, agent), "", "missing: its profile is logged in entry %d", p.idx)
			continue
		}
		why := fmt.Sprintf("its latest logged profile (entry %d)", p.idx)
		ok := true
		for _, c := range [][2]string{{"name", p.v.Name}, {"organisation", p.v.Organisation}, {"model", p.v.Model},
			{"homepage", p.v.Homepage}, {"description", p.v.Description}, {"profile_version", u64(p.v.Version)}} {
			ok = v.cmp(t, r, c[0], c[1], why) && ok
		}
		if ok {
			v.rep.Profiles++
		}
	}
	// The baselines' names are taken before any agent's.
	names := forecast.BaselineNameSet()
	for _, r := range t.rows {
		if _, logged := v.profiles[r.s("address")]; !logged && r.s("profile_version") != "0" && r.ok("profile_version") {
			v.claim(t, r, "profile_version", "the log holds no profile of the agent (0 for an unsigned one)")
		}
		if !r.has("name") {
			continue
		}
		if other, dup := names.Holder(r.s("name")); dup && other != r.s("address") {
			v.claim(t, r, "name", "the name of %s too, or one it passes for (ignoring case, compatibility forms and look-alike characters)", other)
			continue
		}
		names.Add(r.s("name"), r.s("address"))
	}
}

// checkLeaderboard recomputes the leaderboard from the recomputed scored
// forecasts, with the server's analysis, and compares every row.
func (v *verifier) checkLeaderboard(forecasts []arena.ScoredForecast) {
	t := v.t["leaderboard"]
	if v.meta.Since != nil {
		v.rep.LeaderboardSkip = "the export holds only rounds since " + tm(*v.meta.Since)
		return
	}
	if v.method.Validate() != nil {
		v.rep.LeaderboardSkip = "meta.json names no valid scoring method"
		return
	}
	a, err := analyze(forecasts, v.method)
	if err != nil {
		v.add(t.spec.Name, "", "", "cannot be recomputed: %v", err)
		return
	}
	names := forecast.BaselineNames()
	for _, r := range v.t["agents"].rows {
		if r.has("name") {
			names[r.s("address")] = r.s("name")
		}
	}
	want := map[string]bool{}
	for _, w := range leaderboardRows(a.Board(scoring.ProfilesOf(names))) {
		rk := kv(t.spec, w[1])
		want[rk] = true
		r := t.byKey[rk]
		if r == nil {
			v.add(t.spec.Name, rk, "", "missing: recomputed at rank %s", w[0])
			continue
		}
		ok := true
		for i, c := range t.spec.Names() {
			why := "recomputed"
			if c == "name" {
				why = "the agents table"
			}
			ok = v.cmp(t, r, c, w[i], why) && ok
		}
		if ok {
			v.rep.LeaderboardRows++
		}
	}
	for _, r := range t.rows {
		if !want[r.key] {
			v.add(t.spec.Name, r.key, "", "recomputes to nothing: the agent has no recomputed score")
		}
	}
}

// analyses keeps the analysis Verify computed last, by a digest of its
// scored forecasts: the analysis is a pure function of them, and its
// bootstraps cost most of a verification, so verifying copies of one
// export (a tamper catalogue, a verifier checking again) computes it once.
// Verifications of different exports compute theirs side by side; those
// of one export at the same time wait for a single computation.
var analyses struct {
	flight singleflight.Group
	mu     sync.Mutex
	digest [32]byte
	last   *scoring.Analysis
}

func analyze(fs []arena.ScoredForecast, m scoring.Method) (*scoring.Analysis, error) {
	slices.SortFunc(fs, scoring.CompareForecasts)
	b, err := json.Marshal(fs)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(append(b, m.Digest()...))
	analyses.mu.Lock()
	if analyses.last != nil && analyses.digest == digest {
		defer analyses.mu.Unlock()
		return analyses.last, nil
	}
	analyses.mu.Unlock()
	a, err, _ := analyses.flight.Do(string(digest[:]), func() (any, error) {
		// One computation serves every verification of these forecasts
		// waiting for it: none of them alone may cancel it.
		a, err := scoring.AnalyzeForecasts(context.Background(), fs, m, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		analyses.mu.Lock()
		analyses.digest, analyses.last = digest, a
		analyses.mu.Unlock()
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	return a.(*scoring.Analysis), nil
}

func (v *verifier) checkTraces() {
	t := v.t["traces"]
	for _, r := range t.rows {
		if rr := v.round(r.u("round_id")); rr == nil || !rr.has("triggered_at") {
			v.claim(t, r, "round_id", "not an exported round whose outcomes are triggered")
		}
	}
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
