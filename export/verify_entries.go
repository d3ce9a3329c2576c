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
