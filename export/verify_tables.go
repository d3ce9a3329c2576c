package export

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
)

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
		if ven, source := r.s("venue"), r.s("source"); r.ok("venue") && ven != "" && ven != source &&
			!(source == arena.SourceSim && arena.IsVenue(ven)) {
			v.claim(t, r, "venue", "not the market's source %q (nor, for a simulated market, a venue)", source)
		}
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

// inSigned reports whether a request accepted at t meets its signed
// deadline: not after it, and at most MaxDeadlineAhead before it.
func inSigned(t time.Time, deadline uint64) bool {
	n := t.Unix()
	return n >= 0 && deadline >= uint64(n) && deadline-uint64(n) <= uint64(forecast.MaxDeadlineAhead/time.Second)
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

func (v *verifier) checkTraces() {
	t := v.t["traces"]
	for _, r := range t.rows {
		if rr := v.round(r.u("round_id")); rr == nil || !rr.has("triggered_at") {
			v.claim(t, r, "round_id", "not an exported round whose outcomes are triggered")
		}
	}
}
