package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/tlog"
)

// decodeLog reads the unsealed entries into the model: commits and
// reveals (their signatures and commit hashes checked), benchmarks,
// resolutions, and each round's latest outcomes with the scores logged
// after them.
func (v *verifier) decodeLog(rows []*row, leaves []tlog.Leaf) {
	v.commits, v.reveals = map[key]logged[forecast.CommitEntry]{}, map[key]logged[forecast.RevealEntry]{}
	v.benches, v.resolved = map[uint64]logged[forecast.BenchmarkEntry]{}, map[int64]logged[forecast.ResolutionEntry]{}
	v.outcomes, v.scores = map[uint64]logged[forecast.OutcomeEntry]{}, map[uint64]map[string]logged[forecast.ScoreEntry]{}
	v.named, v.profiles = map[uint64]uint64{}, map[string]logged[forecast.ProfileEntry]{}
	d := &entryDecoder{v: v, nonces: map[string]map[uint64]uint64{}}
	for i, l := range leaves {
		if l.Kind == "" {
			continue // sealed, missing or already reported
		}
		d.decode(logEntry{uint64(i), rows[i].key}, l)
	}
	d.reportSignatures()
	v.checkUnsealed(rows)
	v.sealedRow = slices.IndexFunc(rows, func(r *row) bool { return r != nil && r.b("sealed") })
	// Each accepted commit and reveal takes the agent's next nonce: with
	// every entry readable, a gap is an accepted request the log lacks.
	if v.rep.SealedEntries == 0 {
		d.checkNonces()
	}
}

// logEntry is a log entry being decoded: its index and its row's key.
type logEntry struct {
	idx uint64
	key string
}

// entryDecoder holds what decodeLog tracks across the entries: the
// nonces each agent used and the signatures that did not recover.
type entryDecoder struct {
	v         *verifier
	nonces    map[string]map[uint64]uint64 // agent → nonce → entry
	agents    []string                     // in the order of their first nonce
	sigFaults []Mismatch
}

// bad reports an entry the model cannot take.
func (d *entryDecoder) bad(en logEntry, format string, args ...any) {
	d.v.add("log_entries", en.key, "leaf", format, args...)
}

// sigFault keeps a signature that did not recover, for reportSignatures.
func (d *entryDecoder) sigFault(en logEntry, reason string) {
	d.sigFaults = append(d.sigFaults, Mismatch{"log_entries", en.key, "leaf", reason})
}

// name records the first entry naming a round.
func (d *entryDecoder) name(en logEntry, round uint64) {
	if _, ok := d.v.named[round]; !ok {
		d.v.named[round] = en.idx
	}
}

// useNonce records an agent's nonce, reporting one used before.
func (d *entryDecoder) useNonce(en logEntry, agent string, n uint64) {
	if d.nonces[agent] == nil {
		d.nonces[agent] = map[uint64]uint64{}
		d.agents = append(d.agents, agent)
	}
	if j, dup := d.nonces[agent][n]; dup {
		d.bad(en, "nonce %d of %s was used by entry %d already", n, agent, j)
	}
	d.nonces[agent][n] = en.idx
}

// decode reads one unsealed entry into the model.
func (d *entryDecoder) decode(en logEntry, l tlog.Leaf) {
	v := d.v
	e, err := decodeEntry(l)
	if err != nil {
		d.bad(en, "%v", err)
		return
	}
	switch e := e.(type) {
	case *forecast.CommitEntry:
		d.commit(en, e)
	case *forecast.RevealEntry:
		d.reveal(en, e)
	case *forecast.BenchmarkEntry:
		d.benchmark(en, e)
	case *forecast.ResolutionEntry:
		v.resolved[e.MarketID] = logged[forecast.ResolutionEntry]{en.idx, *e}
	case *forecast.OutcomeEntry:
		d.outcome(en, e)
	case *forecast.ScoreEntry:
		d.score(en, e)
	case *forecast.ProfileEntry:
		d.profile(en, e)
	case *forecast.DisputeEntry:
		if !auditText(e.Admin, arena.MaxNameChars) || !auditText(e.Reason, arena.MaxReasonChars) {
			d.bad(en, "a dispute whose admin or reason the arena accepts none of")
		}
	case *forecast.DecisionEntry:
		if _, ok := arena.OracleDecision(e.Decision).MarketResolution(); !ok || !auditText(e.Arbiter, arena.MaxNameChars) || !auditText(e.Reason, arena.MaxReasonChars) {
			d.bad(en, "a decision %q, or an arbiter or reason, the arena accepts none of", e.Decision)
		}
	}
}

// commit takes an agent's commit: one per round, signed by the agent.
func (d *entryDecoder) commit(en logEntry, e *forecast.CommitEntry) {
	v := d.v
	d.name(en, e.RoundID)
	k := key{e.RoundID, e.Agent}
	if _, dup := v.commits[k]; dup {
		d.bad(en, "a second commit of %s in round %d", e.Agent, e.RoundID)
		return
	}
	addr, err := forecast.ParseAddress(e.Agent)
	if err != nil || addr.Hex() != e.Agent {
		d.bad(en, "agent %q is not a checksummed address", e.Agent)
		return
	}
	msg := forecast.Commit{RoundID: e.RoundID, CommitHash: common.HexToHash(e.CommitHash), Agent: addr, Nonce: e.Nonce, Deadline: e.Deadline}
	if e.ReasoningHash != "" {
		msg.ReasoningHash = common.HexToHash(e.ReasoningHash)
	}
	if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyCommit(msg, sig) }); err != nil {
		d.sigFault(en, "commit signature: "+err.Error())
	}
	d.useNonce(en, e.Agent, e.Nonce)
	v.commits[k] = logged[forecast.CommitEntry]{en.idx, *e}
}

// reveal takes an agent's reveal: one per commit, signed by the agent,
// its predictions and salt hashing to the commit's hash.
func (d *entryDecoder) reveal(en logEntry, e *forecast.RevealEntry) {
	v := d.v
	d.name(en, e.RoundID)
	k := key{e.RoundID, e.Agent}
	c, committed := v.commits[k]
	if _, dup := v.reveals[k]; dup || !committed {
		d.bad(en, "a reveal of %s in round %d without a commit before it, or a second one", e.Agent, e.RoundID)
		return
	}
	addr := common.HexToAddress(e.Agent)
	salt := common.HexToHash(e.Salt)
	msg := forecast.Reveal{RoundID: e.RoundID, Predictions: e.Predictions, Salt: salt, Agent: addr, Nonce: e.Nonce, Deadline: e.Deadline}
	if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyReveal(msg, sig) }); err != nil {
		d.sigFault(en, "reveal signature: "+err.Error())
	}
	if err := forecast.CheckPredictions(e.Predictions, len(e.Predictions)); err != nil || !isHex(e.Salt, "0x", 32) {
		d.bad(en, "predictions %v or salt %q out of range", e.Predictions, e.Salt)
		return
	}
	if h := forecast.CommitHash(e.RoundID, addr, e.Predictions, salt); h.Hex() != c.v.CommitHash {
		d.bad(en, "predictions and salt hash to %s, the commit (entry %d) was %s", h.Hex(), c.idx, c.v.CommitHash)
		return
	}
	v.rep.CommitHashes++
	d.useNonce(en, e.Agent, e.Nonce)
	v.reveals[k] = logged[forecast.RevealEntry]{en.idx, *e}
}

// benchmark takes a round's benchmarks: one entry per round, a benchmark
// in range per market.
func (d *entryDecoder) benchmark(en logEntry, e *forecast.BenchmarkEntry) {
	v := d.v
	d.name(en, e.RoundID)
	if b, dup := v.benches[e.RoundID]; dup {
		d.bad(en, "a second benchmark entry of round %d (entry %d has one)", e.RoundID, b.idx)
		return
	}
	ok := len(e.MarketIDs) == len(e.Benchmarks) && len(e.MarketIDs) > 0
	for _, b := range e.Benchmarks {
		ok = ok && (b == scoring.NoBenchmark || (b >= 0 && b <= forecast.MaxBps))
	}
	if !ok {
		d.bad(en, "%d markets with %d benchmarks %v: want one in 0 … %d (or %d for none) per market", len(e.MarketIDs), len(e.Benchmarks), e.Benchmarks, forecast.MaxBps, scoring.NoBenchmark)
		return
	}
	v.benches[e.RoundID] = logged[forecast.BenchmarkEntry]{en.idx, *e}
}

// outcome takes a round's outcomes, the latest replacing any before it
// together with the scores logged after those.
func (d *entryDecoder) outcome(en logEntry, e *forecast.OutcomeEntry) {
	v := d.v
	d.name(en, e.RoundID)
	ok := len(e.Outcomes) > 0
	for _, x := range e.Outcomes {
		ok = ok && x >= scoring.OutcomeUnresolved && x <= scoring.OutcomeYes
	}
	if !ok {
		d.bad(en, "outcomes %v: want 1, 0, −1 or −2 per market", e.Outcomes)
		return
	}
	v.outcomes[e.RoundID] = logged[forecast.OutcomeEntry]{en.idx, *e}
	v.scores[e.RoundID] = map[string]logged[forecast.ScoreEntry]{} // a re-score replaces the earlier scores
}

// score takes an agent's score of a round: one per agent after the
// round's latest outcomes.
func (d *entryDecoder) score(en logEntry, e *forecast.ScoreEntry) {
	set, ok := d.v.scores[e.RoundID]
	if !ok {
		d.bad(en, "a score of round %d before its outcomes", e.RoundID)
		return
	}
	if s, dup := set[e.Agent]; dup {
		d.bad(en, "a second score of %s in round %d after its outcomes (entry %d has one)", e.Agent, e.RoundID, s.idx)
		return
	}
	set[e.Agent] = logged[forecast.ScoreEntry]{en.idx, *e}
}

// profile takes an agent's profile: one the arena accepts, signed by the
// agent, at the next version.
func (d *entryDecoder) profile(en logEntry, e *forecast.ProfileEntry) {
	v := d.v
	addr, err := forecast.ParseAddress(e.Agent)
	if err != nil || addr.Hex() != e.Agent {
		d.bad(en, "agent %q is not a checksummed address", e.Agent)
		return
	}
	f := forecast.ProfileFields{Name: e.Name, Organisation: e.Organisation, Model: e.Model, Homepage: e.Homepage, Description: e.Description}
	if err := forecast.CheckProfile(f); err != nil {
		d.bad(en, "a profile the arena accepts none of: %v", err)
		return
	}
	msg := forecast.Profile{Agent: addr, ProfileFields: f, Version: e.Version, Deadline: e.Deadline}
	if err := v.checkSig(e.Signature, func(sig []byte) error { return v.dom.VerifyProfile(msg, sig) }); err != nil {
		d.sigFault(en, "profile signature: "+err.Error())
	}
	// Each accepted update takes the next version: a gap is an
	// accepted update the log lacks.
	prev := v.profiles[e.Agent]
	if e.Version != prev.v.Version+1 {
		d.bad(en, "version %d of %s's profile follows version %d (entry %d): want %d", e.Version, e.Agent, prev.v.Version, prev.idx, prev.v.Version+1)
		return
	}
	v.profiles[e.Agent] = logged[forecast.ProfileEntry]{en.idx, *e}
}

// reportSignatures reports the signatures that did not recover.
func (d *entryDecoder) reportSignatures() {
	v := d.v
	// Under another domain no signature recovers: that is the domain's
	// fault, not each entry's.
	if len(d.sigFaults) > 0 && v.rep.Signatures == 0 {
		v.add("meta.json", "EIP-712 domain", "", "no agent signature in the log recovers under chain_id %d and verifying_contract %s (%s)",
			v.meta.ChainID, v.meta.VerifyingContract, d.sigFaults[0].Reason)
	} else {
		for _, m := range d.sigFaults {
			v.add(m.Table, m.Key, m.Column, "%s", m.Reason)
		}
	}
}

// checkUnsealed checks that a commit or reveal is published only once
// its round's outcomes are logged: it stays sealed until then.
func (v *verifier) checkUnsealed(rows []*row) {
	for _, k := range sortedKeys(v.commits) {
		if _, ok := v.outcomes[k.round]; !ok {
			v.add("log_entries", rows[v.commits[k].idx].key, "sealed", "false, but round %d has no logged outcomes", k.round)
		}
	}
}

// checkNonces reports an agent whose nonces skip one.
func (d *entryDecoder) checkNonces() {
	for _, a := range d.agents {
		for n := range uint64(len(d.nonces[a])) {
			if _, ok := d.nonces[a][n]; !ok {
				d.v.add("log_entries", "", "leaf", "agent %s's nonces skip %d: an accepted commit or reveal is not in the log", a, n)
				break
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
