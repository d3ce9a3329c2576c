package export

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/tlog"
)

// VerifyOptions: LogKey is the log public key the verifier trusts (as
// published by the arena); nil trusts the key the export names, which
// proves only internal consistency.
type VerifyOptions struct {
	LogKey ed25519.PublicKey
}

// Report says what Verify checked.
type Report struct {
	LogEntries      int
	SealedEntries   int // commits and reveals of untriggered rounds: hash only
	Heads           int // signed tree heads checked (signature and consistency with the latest)
	InclusionProofs int
	Signatures      int // EIP-712 commit and reveal signatures recovered
	CommitHashes    int
	Benchmarks      int // markets whose benchmark matched the log
	Outcomes        int // markets whose frozen outcome matched the log
	Scores          int // score rows recomputed
	LeaderboardRows int
	LeaderboardSkip string // why the leaderboard was not recomputed, if it was not
	KeyFromExport   bool
	Rounds, Markets int
	Submissions     int
	LogRoot         string
	LogSize         uint64
}

// Mismatch is the first item of an export that does not check out.
type Mismatch struct {
	Item   string // e.g. "score round 3 agent 0xAb…"
	Reason string
}

func (m *Mismatch) Error() string { return m.Item + ": " + m.Reason }

func fail(item, format string, args ...any) error {
	return &Mismatch{Item: item, Reason: fmt.Sprintf(format, args...)}
}

type key struct {
	round uint64
	agent string
}

type logged[T any] struct {
	idx uint64
	v   T
}

// Verify checks an export directory from its files alone: the log (leaf
// hashes, the latest head's signature and root, an inclusion proof for
// every entry, every earlier head's signature and consistency with the
// latest), every submission against its log entries (EIP-712 signatures
// over the signed messages, commit hashes of the revealed predictions),
// benchmarks and frozen outcomes against the log, every score recomputed
// from the logged inputs with the server's own scorer, and the leaderboard
// recomputed from those scores. It returns the first mismatch as a
// *Mismatch naming the item.
func Verify(dir string, o VerifyOptions) (*Report, error) {
	rep := &Report{}
	mb, err := readMeta(dir)
	if err != nil {
		return rep, err
	}
	var meta Meta
	if err := json.Unmarshal(mb, &meta); err != nil {
		return rep, fmt.Errorf("export: meta.json: %w", err)
	}
	pub := o.LogKey
	if pub == nil {
		rep.KeyFromExport = true
		if pub, err = tlog.ParsePublicKey(meta.LogPublicKey); err != nil {
			return rep, fail("meta.json", "%v", err)
		}
	}
	if !common.IsHexAddress(meta.VerifyingContract) {
		return rep, fail("meta.json", "verifying contract %q is not an address", meta.VerifyingContract)
	}
	domain := forecast.Domain{ChainID: meta.ChainID, Contract: common.HexToAddress(meta.VerifyingContract)}
	ts, err := readDir(dir, meta.Format, "rounds", "round_markets", "markets", "submissions", "scores", "agents", "leaderboard", "log_entries")
	if err != nil {
		return rep, err
	}

	// 1. The log.
	lt := ts["log_entries"]
	if err := lt.check("idx", "kind", "leaf", "leaf_hash"); err != nil {
		return rep, err
	}
	head := meta.Head
	root, err := head.Verify(pub)
	if err != nil {
		return rep, fail(fmt.Sprintf("tree head %d", head.TreeSize), "%v", err)
	}
	if uint64(len(lt.Rows)) != head.TreeSize {
		return rep, fail("log", "%d entries exported, the signed head covers %d", len(lt.Rows), head.TreeSize)
	}
	leaves := make([][]byte, len(lt.Rows))
	leafData := make([]tlog.Leaf, len(lt.Rows))
	idxOf, kindOf, leafOf, hashOf, sealedOf := lt.col("idx"), lt.col("kind"), lt.col("leaf"), lt.col("leaf_hash"), lt.col("sealed")
	for i, row := range lt.Rows {
		item := fmt.Sprintf("log entry %d", i)
		if idxOf(row) != strconv.Itoa(i) {
			return rep, fail(item, "index %q out of order", idxOf(row))
		}
		if sealedOf(row) == "true" {
			// A commit or reveal of a round not triggered yet: only its
			// hash is published, which the root and proofs still cover.
			if leafOf(row) != "" || (kindOf(row) != tlog.KindCommit && kindOf(row) != tlog.KindReveal) {
				return rep, fail(item, "sealed, but a %s entry with a leaf", kindOf(row))
			}
			h, err := hex.DecodeString(hashOf(row))
			if err != nil || len(h) != 32 {
				return rep, fail(item, "leaf hash %q is not 32 hex bytes", hashOf(row))
			}
			leaves[i] = h
			rep.SealedEntries++
			continue
		}
		leaf := []byte(leafOf(row))
		leaves[i] = tlog.LeafHash(leaf)
		if hex.EncodeToString(leaves[i]) != hashOf(row) {
			return rep, fail(item, "leaf hashes to %x, the export says %s", leaves[i], hashOf(row))
		}
		if err := json.Unmarshal(leaf, &leafData[i]); err != nil || leafData[i].Kind != kindOf(row) {
			return rep, fail(item, "leaf is not a %s entry", kindOf(row))
		}
	}
	got, err := tlog.Root(leaves)
	if err != nil {
		return rep, err
	}
	if !tlog.Equal(got, root) {
		return rep, fail(fmt.Sprintf("tree head %d", head.TreeSize), "root of the exported entries is %x, the signed root is %x", got, root)
	}
	rep.LogEntries, rep.LogSize, rep.LogRoot = len(leaves), head.TreeSize, head.RootHash
	for i := range leaves {
		p, err := tlog.InclusionProof(leaves, uint64(i))
		if err != nil {
			return rep, err
		}
		if err := tlog.VerifyInclusion(uint64(i), head.TreeSize, leaves[i], p, root); err != nil {
			return rep, fail(fmt.Sprintf("log entry %d", i), "inclusion proof: %v", err)
		}
		rep.InclusionProofs++
	}
	for _, h := range meta.Heads {
		item := fmt.Sprintf("tree head %d", h.TreeSize)
		r1, err := h.Verify(pub)
		if err != nil {
			return rep, fail(item, "%v", err)
		}
		if h.TreeSize > head.TreeSize {
			return rep, fail(item, "larger than the latest head %d", head.TreeSize)
		}
		p, err := tlog.ConsistencyProof(leaves, h.TreeSize)
		if err != nil {
			return rep, err
		}
		if err := tlog.VerifyConsistency(h.TreeSize, head.TreeSize, p, r1, root); err != nil {
			return rep, fail(item, "not a prefix of the latest head: %v", err)
		}
		rep.Heads++
	}

	// 2. Index the logged items.
	commits := map[key]logged[forecast.CommitEntry]{}
	reveals := map[key]logged[forecast.RevealEntry]{}
	benches := map[uint64]logged[forecast.BenchmarkEntry]{}
	outcomes := map[uint64]logged[forecast.OutcomeEntry]{}
	scores := map[key]logged[forecast.ScoreEntry]{}
	for i, l := range leafData {
		idx := uint64(i)
		item := fmt.Sprintf("log entry %d", i)
		var err error
		switch l.Kind {
		case "": // sealed
		case tlog.KindCommit:
			var e forecast.CommitEntry
			if err = json.Unmarshal(l.Data, &e); err == nil {
				k := key{e.RoundID, e.Agent}
				if _, dup := commits[k]; dup {
					return rep, fail(item, "second commit of %s in round %d", e.Agent, e.RoundID)
				}
				commits[k] = logged[forecast.CommitEntry]{idx, e}
			}
		case tlog.KindReveal:
			var e forecast.RevealEntry
			if err = json.Unmarshal(l.Data, &e); err == nil {
				k := key{e.RoundID, e.Agent}
				if _, dup := reveals[k]; dup {
					return rep, fail(item, "second reveal of %s in round %d", e.Agent, e.RoundID)
				}
				reveals[k] = logged[forecast.RevealEntry]{idx, e}
			}
		case tlog.KindBenchmark:
			var e forecast.BenchmarkEntry
			if err = json.Unmarshal(l.Data, &e); err == nil {
				benches[e.RoundID] = logged[forecast.BenchmarkEntry]{idx, e}
			}
		case tlog.KindOutcome:
			var e forecast.OutcomeEntry
			if err = json.Unmarshal(l.Data, &e); err == nil {
				outcomes[e.RoundID] = logged[forecast.OutcomeEntry]{idx, e}
			}
		case tlog.KindScore:
			var e forecast.ScoreEntry
			if err = json.Unmarshal(l.Data, &e); err == nil {
				scores[key{e.RoundID, e.Agent}] = logged[forecast.ScoreEntry]{idx, e}
			}
		case tlog.KindResolution:
		default:
			return rep, fail(item, "unknown kind %q", l.Kind)
		}
		if err != nil {
			return rep, fail(item, "malformed %s entry: %v", l.Kind, err)
		}
	}

	// 3. Rounds, markets, benchmarks and outcomes.
	type roundInfo struct {
		r       *arena.Round
		markets []forecast.MarketOutcome // ids and benchmarks; outcomes once checked against the log
	}
	rounds := map[uint64]*roundInfo{}
	var roundIDs []uint64
	rt := ts["rounds"]
	if err := rt.check("id", "commit_deadline", "reveal_start", "reveal_deadline", "triggered_at", "invalidated"); err != nil {
		return rep, err
	}
	for _, row := range rt.Rows {
		get := rt.col
		id, err := strconv.ParseUint(get("id")(row), 10, 64)
		if err != nil {
			return rep, fail("rounds", "id %q", get("id")(row))
		}
		r := &arena.Round{ID: id}
		for name, dst := range map[string]*time.Time{"commit_deadline": &r.CommitDeadline, "reveal_start": &r.RevealStart,
			"reveal_deadline": &r.RevealDeadline, "triggered_at": &r.TriggeredAt, "benchmark_at": &r.BenchmarkAt} {
			if v := get(name)(row); v != "" {
				if *dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
					return rep, fail(fmt.Sprintf("round %d", id), "%s %q", name, v)
				}
			}
		}
		r.Invalidated = get("invalidated")(row) == "true"
		rounds[id] = &roundInfo{r: r}
		roundIDs = append(roundIDs, id)
	}
	sort.Slice(roundIDs, func(i, j int) bool { return roundIDs[i] < roundIDs[j] })
	rep.Rounds = len(roundIDs)

	mt := ts["markets"]
	if err := mt.check("id", "category", "event_id"); err != nil {
		return rep, err
	}
	markets := map[int64][2]string{} // category, event
	for _, row := range mt.Rows {
		id, _ := strconv.ParseInt(mt.col("id")(row), 10, 64)
		markets[id] = [2]string{mt.col("category")(row), mt.col("event_id")(row)}
	}
	rep.Markets = len(markets)

	rmt := ts["round_markets"]
	if err := rmt.check("round_id", "idx", "market_id", "benchmark_bps", "outcome"); err != nil {
		return rep, err
	}
	frozen := map[uint64][]string{}
	for _, row := range rmt.Rows {
		rid, _ := strconv.ParseUint(rmt.col("round_id")(row), 10, 64)
		ri := rounds[rid]
		item := fmt.Sprintf("round %d market %s", rid, rmt.col("idx")(row))
		if ri == nil {
			return rep, fail(item, "round not in the export")
		}
		if rmt.col("idx")(row) != strconv.Itoa(len(ri.markets)) {
			return rep, fail(item, "markets out of order")
		}
		mid, err := strconv.ParseInt(rmt.col("market_id")(row), 10, 64)
		if _, ok := markets[mid]; err != nil || !ok {
			return rep, fail(item, "market %q not in the export", rmt.col("market_id")(row))
		}
		b := forecast.NoBenchmark
		if v := rmt.col("benchmark_bps")(row); v != "" {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return rep, fail(item, "benchmark %q", v)
			}
			b = int32(n)
		}
		ri.markets = append(ri.markets, forecast.MarketOutcome{MarketID: mid, Outcome: forecast.OutcomeExcluded, Benchmark: b})
		frozen[rid] = append(frozen[rid], rmt.col("outcome")(row))
	}
	for _, id := range roundIDs {
		ri := rounds[id]
		item := fmt.Sprintf("benchmarks of round %d", id)
		lb, ok := benches[id]
		if ri.r.BenchmarkAt.IsZero() {
			if ok {
				return rep, fail(item, "logged (entry %d) but not in the export", lb.idx)
			}
			continue
		}
		if !ok {
			return rep, fail(item, "not in the log")
		}
		if len(lb.v.Benchmarks) != len(ri.markets) {
			return rep, fail(item, "%d markets, the log (entry %d) has %d", len(ri.markets), lb.idx, len(lb.v.Benchmarks))
		}
		for i, m := range ri.markets {
			if m.Benchmark != lb.v.Benchmarks[i] || m.MarketID != lb.v.MarketIDs[i] {
				return rep, fail(fmt.Sprintf("benchmark of round %d market %d", id, i), "%d bps (market %d), the log (entry %d) has %d bps (market %d)",
					m.Benchmark, m.MarketID, lb.idx, lb.v.Benchmarks[i], lb.v.MarketIDs[i])
			}
			rep.Benchmarks++
		}
	}

	// 4. Submissions: signatures and commit hashes, against the log.
	st := ts["submissions"]
	if err := st.check("round_id", "agent", "commit_hash", "reasoning_hash", "commit_nonce", "commit_sig", "predictions", "salt", "reveal_nonce", "reveal_sig"); err != nil {
		return rep, err
	}
	subs := map[uint64][]forecast.Entry{}
	subAgents := map[uint64][]string{}
	seen := map[key]bool{}
	for _, row := range st.Rows {
		g := func(c string) string { return st.col(c)(row) }
		rid, _ := strconv.ParseUint(g("round_id"), 10, 64)
		agent := g("agent")
		item := fmt.Sprintf("submission round %d agent %s", rid, agent)
		if rounds[rid] == nil {
			return rep, fail(item, "round not in the export")
		}
		k := key{rid, agent}
		seen[k] = true
		lc, ok := commits[k]
		if !ok {
			return rep, fail(item, "commit not in the log")
		}
		c := lc.v
		if g("commit_hash") != c.CommitHash || g("reasoning_hash") != c.ReasoningHash || g("commit_nonce") != u64(c.Nonce) || g("commit_sig") != c.Signature {
			return rep, fail(item, "commit differs from log entry %d", lc.idx)
		}
		addr, err := forecast.ParseAddress(agent)
		if err != nil {
			return rep, fail(item, "%v", err)
		}
		msg := forecast.Commit{RoundID: rid, CommitHash: common.HexToHash(c.CommitHash), Agent: addr, Nonce: c.Nonce, Deadline: c.Deadline}
		if c.ReasoningHash != "" {
			msg.ReasoningHash = common.HexToHash(c.ReasoningHash)
		}
		sig, err := forecast.DecodeSignature(c.Signature)
		if err == nil {
			err = domain.VerifyCommit(msg, sig)
		}
		if err != nil {
			return rep, fail(item, "commit signature: %v", err)
		}
		rep.Signatures++
		lr, revealedInLog := reveals[k]
		if g("predictions") == "" {
			if revealedInLog {
				return rep, fail(item, "revealed in log entry %d but not in the export", lr.idx)
			}
			subs[rid], subAgents[rid] = append(subs[rid], forecast.Entry{Forfeit: true}), append(subAgents[rid], agent)
			continue
		}
		if !revealedInLog {
			return rep, fail(item, "reveal not in the log")
		}
		r := lr.v
		ps, err := parsePreds(g("predictions"))
		if err != nil {
			return rep, fail(item, "predictions: %v", err)
		}
		if preds(ps) != preds(r.Predictions) || g("salt") != r.Salt || g("reveal_nonce") != u64(r.Nonce) || g("reveal_sig") != r.Signature {
			return rep, fail(item, "reveal (predictions %s) differs from log entry %d (predictions %s)", g("predictions"), lr.idx, preds(r.Predictions))
		}
		rmsg := forecast.Reveal{RoundID: rid, Predictions: ps, Salt: common.HexToHash(r.Salt), Agent: addr, Nonce: r.Nonce, Deadline: r.Deadline}
		sig, err = forecast.DecodeSignature(r.Signature)
		if err == nil {
			err = domain.VerifyReveal(rmsg, sig)
		}
		if err != nil {
			return rep, fail(item, "reveal signature: %v", err)
		}
		rep.Signatures++
		if h := forecast.CommitHash(rid, addr, ps, rmsg.Salt); h.Hex() != c.CommitHash {
			return rep, fail(item, "predictions and salt hash to %s, the commit was %s", h.Hex(), c.CommitHash)
		}
		rep.CommitHashes++
		subs[rid], subAgents[rid] = append(subs[rid], forecast.Entry{Predictions: ps}), append(subAgents[rid], agent)
	}
	rep.Submissions = len(st.Rows)
	for k, lc := range commits {
		if rounds[k.round] != nil && !seen[k] {
			return rep, fail(fmt.Sprintf("submission round %d agent %s", k.round, k.agent), "in the log (entry %d) but not in the export", lc.idx)
		}
	}

	// 5. Outcomes and scores, recomputed from the logged inputs.
	sct := ts["scores"]
	if err := sct.check("round_id", "agent", "brier", "alpha", "brier_bps2", "alpha_bps2", "scored_markets", "benchmarked", "forfeit"); err != nil {
		return rep, err
	}
	exported := map[key][]string{}
	for _, row := range sct.Rows {
		rid, _ := strconv.ParseUint(sct.col("round_id")(row), 10, 64)
		exported[key{rid, sct.col("agent")(row)}] = row
	}
	var forecasts []arena.ScoredForecast
	checkedScores := map[key]bool{}
	for _, id := range roundIDs {
		ri := rounds[id]
		lo, ok := outcomes[id]
		if ri.r.TriggeredAt.IsZero() {
			if ok {
				return rep, fail(fmt.Sprintf("outcomes of round %d", id), "logged (entry %d) but the round is not scored in the export", lo.idx)
			}
			continue
		}
		if !ok {
			return rep, fail(fmt.Sprintf("outcomes of round %d", id), "not in the log")
		}
		if len(lo.v.Outcomes) != len(ri.markets) {
			return rep, fail(fmt.Sprintf("outcomes of round %d", id), "%d in the log (entry %d), %d markets", len(lo.v.Outcomes), lo.idx, len(ri.markets))
		}
		scored := append([]forecast.MarketOutcome(nil), ri.markets...)
		for i, x := range lo.v.Outcomes {
			if frozen[id][i] != strconv.Itoa(int(x)) {
				return rep, fail(fmt.Sprintf("outcome of round %d market %d", id, i), "%q, the log (entry %d) has %d", frozen[id][i], lo.idx, x)
			}
			rep.Outcomes++
			scored[i].Outcome = forecast.ScoringOutcome(x)
		}
		agents := append(append([]string(nil), subAgents[id]...), forecast.RandomAgent)
		entries := append(append([]forecast.Entry(nil), subs[id]...),
			forecast.Entry{Predictions: forecast.RandomPredictions(id, ri.r.CommitDeadline, len(ri.markets))})
		res, err := forecast.ScoreRound(scored, entries)
		if err != nil {
			return rep, fail(fmt.Sprintf("round %d", id), "scoring: %v", err)
		}
		if res.N == 0 {
			continue // closed without scoreable markets: no scores
		}
		type want struct {
			brier, alpha *float64
			bb           int64
			ab           *int64
			n, an        int
			forfeit      bool
		}
		wants := map[string]want{}
		for a, s := range res.Agents {
			w := want{brier: &s.Brier, bb: s.BrierBps2, n: res.N, an: res.AlphaN, forfeit: s.Forfeit}
			if res.AlphaN > 0 {
				alpha, ab := s.Alpha, s.AlphaBps2
				w.alpha, w.ab = &alpha, &ab
			}
			wants[agents[a]] = w
			for i, mo := range scored {
				if !mo.Scored() {
					continue
				}
				m := markets[mo.MarketID]
				forecasts = append(forecasts, arena.ScoredForecast{RoundID: id, Agent: agents[a], MarketID: mo.MarketID, Category: m[0], Event: m[1],
					Outcome: mo.Outcome, Benchmark: mo.BenchmarkPrice(), Forfeit: s.Forfeit, Forecast: entries[a].Forecast(i, mo.Outcome)})
			}
		}
		if res.AlphaN > 0 {
			zero, zb := 0.0, int64(0)
			base := res.BaseBrier
			wants[forecast.MarketAgent] = want{brier: &base, bb: res.BaseBrierBps2, alpha: &zero, ab: &zb, n: res.AlphaN, an: res.AlphaN}
		}
		for agent, w := range wants {
			k := key{id, agent}
			item := fmt.Sprintf("score round %d agent %s", id, agent)
			row, ok := exported[k]
			if !ok {
				return rep, fail(item, "missing from the export")
			}
			checkedScores[k] = true
			g := func(c string) string { return sct.col(c)(row) }
			wantRow := map[string]string{"brier_bps2": i64(w.bb), "alpha_bps2": optI(w.ab), "scored_markets": strconv.Itoa(w.n),
				"benchmarked": strconv.Itoa(w.an), "forfeit": bl(w.forfeit)}
			for _, c := range []string{"brier_bps2", "alpha_bps2", "scored_markets", "benchmarked", "forfeit"} {
				if g(c) != wantRow[c] {
					return rep, fail(item, "%s is %q, recomputed %q", c, g(c), wantRow[c])
				}
			}
			if !floatEq(g("brier"), w.brier) || !floatEq(g("alpha"), w.alpha) {
				return rep, fail(item, "brier/alpha %s/%s, recomputed %s/%s", g("brier"), g("alpha"), optF(w.brier), optF(w.alpha))
			}
			ls, ok := scores[k]
			if !ok {
				return rep, fail(item, "not in the log")
			}
			if ls.v.BrierBps2 != w.bb || optI(ls.v.AlphaBps2) != optI(w.ab) || ls.v.Forfeit != w.forfeit || ls.v.Scored != w.n || ls.v.Benchmarked != w.an {
				return rep, fail(item, "log entry %d differs from the recomputed score", ls.idx)
			}
			rep.Scores++
		}
	}
	for k := range exported {
		if !checkedScores[k] {
			return rep, fail(fmt.Sprintf("score round %d agent %s", k.round, k.agent), "in the export but not recomputable (no such submission or scored round)")
		}
	}

	// 6. The leaderboard, recomputed with the server's code.
	if meta.Since != nil {
		rep.LeaderboardSkip = "the export holds only rounds since " + meta.Since.Format(time.RFC3339)
		return rep, nil
	}
	sort.SliceStable(forecasts, func(i, j int) bool {
		a, b := forecasts[i], forecasts[j]
		if a.RoundID != b.RoundID {
			return a.RoundID < b.RoundID
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.MarketID < b.MarketID
	})
	names := map[string]string{}
	at := ts["agents"]
	for _, row := range at.Rows {
		if n := at.col("name")(row); n != "" {
			names[at.col("address")(row)] = n
		}
	}
	lb, err := forecast.LeaderboardOf(forecasts, names)
	if err != nil {
		return rep, err
	}
	lbt := ts["leaderboard"]
	if err := lbt.check("rank", "agent", "rounds", "n", "brier", "alpha", "t", "p", "beat_pct"); err != nil {
		return rep, err
	}
	if len(lbt.Rows) != len(lb) {
		return rep, fail("leaderboard", "%d rows, recomputed %d", len(lbt.Rows), len(lb))
	}
	for i, e := range lb {
		row := lbt.Rows[i]
		g := func(c string) string { return lbt.col(c)(row) }
		item := fmt.Sprintf("leaderboard rank %d", i+1)
		if g("agent") != e.Agent || g("rounds") != strconv.Itoa(e.Rounds) || g("n") != strconv.Itoa(e.N) {
			return rep, fail(item, "%s (%s rounds, n=%s), recomputed %s (%d rounds, n=%d)", g("agent"), g("rounds"), g("n"), e.Agent, e.Rounds, e.N)
		}
		for c, v := range map[string]*float64{"brier": &e.Brier, "brier_se": e.BrierSE, "alpha": e.Alpha, "alpha_se": e.AlphaSE, "t": e.T, "p": e.P, "beat_pct": e.BeatPct} {
			if !floatEq(g(c), v) {
				return rep, fail(item, "%s of %s is %s, recomputed %s", c, e.Agent, g(c), optF(v))
			}
		}
		rep.LeaderboardRows++
	}
	return rep, nil
}

func parsePreds(s string) ([]uint16, error) {
	f := strings.Fields(s)
	out := make([]uint16, len(f))
	for i, v := range f {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return nil, err
		}
		out[i] = uint16(n)
	}
	return out, nil
}

// floatEq compares an exported float cell with a recomputed value; both
// come from the same code on the same inputs, so they agree to rounding.
func floatEq(cell string, v *float64) bool {
	if v == nil || math.IsNaN(*v) {
		return cell == "" || (v != nil && cell == "NaN")
	}
	got, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return false
	}
	return got == *v || math.Abs(got-*v) <= 1e-12*math.Max(1, math.Abs(*v))
}
