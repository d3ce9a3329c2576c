package export_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/tlog"
)

var both = []string{export.JSONL, export.CSV}

// catalogue is every tamper case: edits generated for every column of
// every table (badly typed, emptied, changed), then the edits written by
// hand (rows duplicated, deleted, added, swapped and reordered, files
// truncated, meta.json and the log's heads, a log rewritten and re-signed
// by its operator, the schedule's times), the edits that must not
// matter, edits of a witnessed checkpoint, and look-alike names.
func catalogue() []tamper {
	var cs []tamper
	for _, spec := range export.Contract {
		if spec.Name == export.TracesSpec.Name {
			continue // not in a default export
		}
		for _, c := range spec.Columns {
			cs = append(cs, badlyTyped(spec, c))
			if x, ok := emptied(spec, c); ok {
				cs = append(cs, x)
			}
			if x, ok := changed(spec, c); ok {
				cs = append(cs, x)
			}
		}
	}
	cs = append(cs, rowCases()...)
	cs = append(cs, fileCases()...)
	cs = append(cs, metaCases()...)
	cs = append(cs, logCases()...)
	cs = append(cs, claimCases()...)
	cs = append(cs, harmless()...)
	cs = append(cs, checkpointCases()...)
	return append(cs, nameCases()...)
}

// firstSet is the first row whose column is set (else row 0); in the
// agents table, a row whose profile is signed if one has the column set
// (an unsigned profile is a claim, which an edit leaves verifying).
func firstSet(e *edited, table, column string) int {
	if table == "agents" {
		for i := range e.table(table).Rows {
			if e.get(table, i, column) != "" && e.get(table, i, "profile_version") != "0" {
				return i
			}
		}
	}
	for i := range e.table(table).Rows {
		if e.get(table, i, column) != "" {
			return i
		}
	}
	return 0
}

func isKey(spec export.TableSpec, column string) bool { return slices.Contains(spec.Key, column) }

// badlyTyped writes a cell the column's type does not allow.
func badlyTyped(spec export.TableSpec, c export.Column) tamper {
	return tamper{name: fmt.Sprintf("`%s.%s`: not a %s", spec.Name, c.Name, c.Type()), edit: func(e *edited) want {
		i := firstSet(e, spec.Name, c.Name)
		v := e.get(spec.Name, i, c.Name)
		bad := map[string]string{"uint": "one", "int": "1.5", "float": "0,5", "bool": "TRUE", "time": "2026-01-05 01:00:00",
			"predictions": "5000,5000", "text": "bad\x00text"}[c.Type()]
		switch c.Type() {
		case "address", "agent":
			bad = strings.ToLower(v)
			if !strings.HasPrefix(v, "0x") {
				bad = strings.ToUpper(v)
			}
		case "hash", "hex32":
			bad = strings.ToUpper(v)
			if v == "" {
				bad = "0x12"
			}
		case "signature":
			bad = v[:len(v)-2]
		case "":
			panic(c.Name)
		}
		if bad == "" {
			bad = "unknown" // an enum
		}
		e.set(spec.Name, i, c.Name, bad)
		return e.at(spec.Name, i, c.Name)
	}}
}

// emptied empties a cell: a required one, or an optional one that is set.
func emptied(spec export.TableSpec, c export.Column) (tamper, bool) {
	if c.Optional() && slices.Contains([]string{"condition_id"}, c.Name) {
		return tamper{}, false // never set in the fixture
	}
	return tamper{name: fmt.Sprintf("`%s.%s`: emptied", spec.Name, c.Name), edit: func(e *edited) want {
		i := firstSet(e, spec.Name, c.Name)
		e.set(spec.Name, i, c.Name, "")
		return e.at(spec.Name, i, c.Name)
	}}, true
}

// changed gives a signed or recomputed cell another valid value.
func changed(spec export.TableSpec, c export.Column) (tamper, bool) {
	if c.Class == export.Claimed || isKey(spec, c.Name) || c.Name == "market_id" {
		return tamper{}, false // claims and keys: written by hand
	}
	what := map[string]string{"uint": "plus one", "int": "plus one", "float": "nudged by 1e-9", "bool": "flipped", "hash": "one digit changed",
		"signature": "another agent's", "predictions": "one changed", "text": "appended to", "hex32": "one digit changed"}[c.Type()]
	if what == "" {
		what = "another value" // an enum
	}
	return tamper{name: fmt.Sprintf("`%s.%s`: %s", spec.Name, c.Name, what), edit: func(e *edited) want {
		i := firstSet(e, spec.Name, c.Name)
		v := e.get(spec.Name, i, c.Name)
		switch c.Type() {
		case "uint", "int":
			n, _ := strconv.ParseInt(v, 10, 64)
			v = strconv.FormatInt(n+1, 10)
		case "float":
			x, _ := strconv.ParseFloat(v, 64)
			v = strconv.FormatFloat(x*(1+1e-9)+1e-12, 'g', -1, 64)
		case "bool":
			v = strconv.FormatBool(v != "true")
		case "hash", "hex32":
			v = v[:len(v)-1] + map[bool]string{true: "1", false: "0"}[v[len(v)-1] == '0']
		case "signature":
			// another agent's signature, from another row
			j := e.find(spec.Name, func(get func(string) string) bool {
				return get(c.Name) != "" && get(c.Name) != v && get("agent") != e.get(spec.Name, i, "agent")
			})
			v = e.get(spec.Name, j, c.Name)
		case "predictions":
			p := strings.Split(v, " ")
			p[0] = map[bool]string{true: "1", false: "0"}[p[0] == "0"]
			v = strings.Join(p, " ")
		case "text":
			v += " (edited)"
		default: // the log's kind
			v = map[bool]string{true: "reveal", false: "commit"}[v == "commit"]
		}
		e.set(spec.Name, i, c.Name, v)
		return e.at(spec.Name, i, c.Name)
	}}, true
}

// lineKey is how Verify names a structural fault: by line in JSON Lines;
// in CSV by line, or "" for the header.
func lineKey(e *edited, line int, header bool) string {
	if header && e.format == export.CSV {
		return ""
	}
	return fmt.Sprintf("line %d", line)
}

// twoAgents are the rows of two agents (addresses, smaller first) in one
// round of a table.
func twoAgents(e *edited, table string) (int, int) {
	a := e.find(table, isAgent)
	round, agent := e.get(table, a, "round_id"), e.get(table, a, "agent")
	b := e.find(table, func(get func(string) string) bool {
		return get("round_id") == round && isAgent(get) && get("agent") != agent
	})
	if e.get(table, b, "agent") < agent {
		a, b = b, a
	}
	return a, b
}

func swap(e *edited, table string, a, b int, columns ...string) {
	for _, c := range columns {
		va, vb := e.get(table, a, c), e.get(table, b, c)
		e.set(table, a, c, vb)
		e.set(table, b, c, va)
	}
}

// rankOf is the row of the agent at a leaderboard rank.
func rankOf(e *edited, rank int) int {
	return e.find("leaderboard", func(get func(string) string) bool { return get("rank") == strconv.Itoa(rank) })
}

// simAgents are the rows of the simulated agents (their profiles the
// operator's, unsigned), in table order.
func simAgents(e *edited) []int {
	var out []int
	for i := range e.table("agents").Rows {
		if e.get("agents", i, "kind") == "sim" {
			out = append(out, i)
		}
	}
	return out
}

func rowCases() []tamper {
	return []tamper{
		{name: "`scores`: a forged duplicate row placed before the real one", formats: both, edit: func(e *edited) want {
			i := e.find("scores", isAgent)
			forged := e.copyRow("scores", i)
			e.insert("scores", i, forged)
			e.set("scores", i, "brier_bps2", "1")
			e.set("scores", i, "brier", "1e-08")
			return want{"scores", e.key("scores", i), ""}
		}},
		{name: "`markets`: a forged duplicate row, with another resolution, placed before the real one", formats: both, edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool { return get("resolution") == "Yes" })
			e.insert("markets", i, e.copyRow("markets", i))
			e.set("markets", i, "resolution", "No")
			return want{"markets", e.key("markets", i), ""}
		}},
		{name: "`submissions`: a forged duplicate row placed before the real one", formats: both, edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("predictions") != "" })
			e.insert("submissions", i, e.copyRow("submissions", i))
			e.set("submissions", i, "predictions", strings.Repeat("5000 ", len(strings.Fields(e.get("submissions", i, "predictions")))-1)+"5000")
			return want{"submissions", e.key("submissions", i), ""}
		}},
		{name: "`round_markets`: a forged duplicate row placed before the real one", formats: both, edit: func(e *edited) want {
			e.insert("round_markets", 0, e.copyRow("round_markets", 0))
			e.set("round_markets", 0, "benchmark_bps", "5000")
			return want{"round_markets", e.key("round_markets", 0), ""}
		}},
		{name: "`rounds`: a duplicate row placed before the real one", formats: both, edit: func(e *edited) want {
			e.insert("rounds", 0, e.copyRow("rounds", 0))
			return want{"rounds", e.key("rounds", 0), ""}
		}},
		{name: "`agents`: the table duplicated", formats: both, edit: func(e *edited) want {
			tb := e.table("agents")
			n := len(tb.Rows)
			for i := range n {
				tb.Rows = append(tb.Rows, slices.Clone(tb.Rows[i]))
			}
			return want{"agents", e.key("agents", 0), ""}
		}},
		{name: "`leaderboard`: a duplicate row", formats: both, edit: func(e *edited) want {
			e.insert("leaderboard", 1, e.copyRow("leaderboard", 0))
			return want{"leaderboard", e.key("leaderboard", 0), ""}
		}},
		{name: "`log_entries`: a duplicate row", formats: both, edit: func(e *edited) want {
			e.insert("log_entries", 1, e.copyRow("log_entries", 0))
			return want{"log_entries", e.key("log_entries", 0), ""}
		}},
		{name: "`rounds`: a row deleted", edit: func(e *edited) want {
			k := e.key("rounds", 1)
			e.remove("rounds", 1)
			return want{"rounds", k, ""}
		}},
		{name: "`round_markets`: the last market of a round deleted", edit: func(e *edited) want {
			round := e.get("round_markets", 0, "round_id")
			last := -1
			for i := range e.table("round_markets").Rows {
				if e.get("round_markets", i, "round_id") == round {
					last = i
				}
			}
			k := e.key("round_markets", last)
			e.remove("round_markets", last)
			return want{"round_markets", k, ""}
		}},
		{name: "`round_markets`: a middle market of a round deleted", edit: func(e *edited) want {
			i := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "2" && get("idx") == "3" })
			k := e.key("round_markets", i)
			e.remove("round_markets", i)
			return want{"round_markets", k, ""}
		}},
		{name: "`markets`: a row deleted", edit: func(e *edited) want {
			k := e.key("markets", 0)
			e.remove("markets", 0)
			return want{"markets", k, ""}
		}},
		{name: "`submissions`: a row deleted", edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			k := e.key("submissions", i)
			e.remove("submissions", i)
			return want{"submissions", k, ""}
		}},
		{name: "`scores`: a row deleted", edit: func(e *edited) want {
			k := e.key("scores", 2)
			e.remove("scores", 2)
			return want{"scores", k, ""}
		}},
		{name: "`leaderboard`: a row deleted", edit: func(e *edited) want {
			k := e.key("leaderboard", 3)
			e.remove("leaderboard", 3)
			return want{"leaderboard", k, ""}
		}},
		{name: "`agents`: a row deleted", edit: func(e *edited) want {
			i := e.find("agents", func(get func(string) string) bool { return get("kind") == "sim" })
			k := e.key("agents", i)
			e.remove("agents", i)
			return want{"agents", k, ""}
		}},
		{name: "`agents`: the table emptied", formats: both, edit: func(e *edited) want {
			first := minAgent(e, "1")
			e.table("agents").Rows = nil
			return want{"agents", "address=" + first, ""}
		}},
		{name: "`log_entries`: an entry deleted", edit: func(e *edited) want {
			k := e.key("log_entries", 10)
			e.remove("log_entries", 10)
			return want{"log_entries", k, ""}
		}},
		{name: "`log_entries`: the last entry deleted", edit: func(e *edited) want {
			n := len(e.table("log_entries").Rows)
			k := e.key("log_entries", n-1)
			e.remove("log_entries", n-1)
			return want{"log_entries", k, ""}
		}},
		{name: "`rounds`: a scored round the log does not know added", edit: func(e *edited) want {
			r := e.copyRow("rounds", 0)
			e.insert("rounds", 0, r)
			e.set("rounds", 0, "id", "99")
			return want{"rounds", "id=99", "benchmark_at"}
		}},
		{name: "`rounds`: an open round without markets added", edit: func(e *edited) want {
			e.insert("rounds", 0, e.copyRow("rounds", 0))
			e.set("rounds", 0, "id", "99")
			e.set("rounds", 0, "benchmark_at", "")
			e.set("rounds", 0, "triggered_at", "")
			return want{"round_markets", "round_id=99 idx=0", ""}
		}},
		{name: "`markets`: a market of no round added", edit: func(e *edited) want {
			e.insert("markets", 0, e.copyRow("markets", 0))
			e.set("markets", 0, "id", "9999")
			e.set("markets", 0, "source_id", "added")
			return want{"markets", "id=9999", ""}
		}},
		{name: "`round_markets`: a market beyond the round's logged ones added", edit: func(e *edited) want {
			r := e.copyRow("round_markets", 0)
			e.insert("round_markets", 0, r)
			e.set("round_markets", 0, "idx", "7")
			return want{"round_markets", e.key("round_markets", 0), "idx"}
		}},
		{name: "`submissions`: a row of an agent that never committed added", edit: func(e *edited) want {
			i := e.find("submissions", isAgent)
			e.insert("submissions", i, e.copyRow("submissions", i))
			e.set("submissions", i, "agent", common.HexToAddress("0x1").Hex())
			return want{"submissions", e.key("submissions", i), ""}
		}},
		{name: "`scores`: a score of an agent that never committed added", edit: func(e *edited) want {
			e.insert("scores", 0, e.copyRow("scores", 0))
			e.set("scores", 0, "agent", common.HexToAddress("0x1").Hex())
			return want{"scores", e.key("scores", 0), ""}
		}},
		{name: "`leaderboard`: a row of an agent never scored added", edit: func(e *edited) want {
			e.insert("leaderboard", 0, e.copyRow("leaderboard", 0))
			e.set("leaderboard", 0, "agent", common.HexToAddress("0x1").Hex())
			return want{"leaderboard", e.key("leaderboard", 0), ""}
		}},
		{name: "`log_entries`: an entry beyond the checkpoint added", edit: func(e *edited) want {
			n := len(e.table("log_entries").Rows)
			e.insert("log_entries", n, e.copyRow("log_entries", n-1))
			e.set("log_entries", n, "idx", strconv.Itoa(n))
			return want{"log_entries", e.key("log_entries", n), "idx"}
		}},
		{name: "`submissions`: predictions swapped between two agents", edit: func(e *edited) want {
			a, b := twoAgents(e, "submissions")
			swap(e, "submissions", a, b, "predictions")
			return e.at("submissions", a, "predictions")
		}},
		{name: "`submissions`: whole reveals swapped between two agents", edit: func(e *edited) want {
			a, b := twoAgents(e, "submissions")
			swap(e, "submissions", a, b, "predictions", "salt", "reveal_nonce", "reveal_sig", "revealed_at")
			return e.at("submissions", a, "predictions")
		}},
		{name: "`submissions`: the agent swapped between two rows", edit: func(e *edited) want {
			a, b := twoAgents(e, "submissions")
			swap(e, "submissions", a, b, "agent")
			return e.at("submissions", b, "commit_hash") // now the smaller agent's row
		}},
		{name: "`submissions`: predictions reordered", edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("predictions") != "" })
			p := strings.Split(e.get("submissions", i, "predictions"), " ")
			slices.Reverse(p)
			e.set("submissions", i, "predictions", strings.Join(p, " "))
			return e.at("submissions", i, "predictions")
		}},
		{name: "`submissions.predictions`: out of range (10001 bps)", edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("predictions") != "" })
			e.set("submissions", i, "predictions", "10001"+e.get("submissions", i, "predictions")[strings.Index(e.get("submissions", i, "predictions"), " "):])
			return e.at("submissions", i, "predictions")
		}},
		{name: "`submissions.predictions`: one value fewer", edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("predictions") != "" })
			v := e.get("submissions", i, "predictions")
			e.set("submissions", i, "predictions", v[:strings.LastIndex(v, " ")])
			return e.at("submissions", i, "predictions")
		}},
		{name: "`scores`: brier_bps2 swapped between two agents", edit: func(e *edited) want {
			a, b := twoAgents(e, "scores")
			swap(e, "scores", a, b, "brier_bps2")
			return e.at("scores", a, "brier_bps2")
		}},
		{name: "`scores`: the agent swapped between two rows", edit: func(e *edited) want {
			a, b := twoAgents(e, "scores")
			swap(e, "scores", a, b, "agent")
			return e.at("scores", b, "brier")
		}},
		{name: "`leaderboard`: names swapped between two agents", edit: func(e *edited) want {
			a, b := rankOf(e, 1), rankOf(e, 2)
			swap(e, "leaderboard", a, b, "name")
			return e.at("leaderboard", a, "name")
		}},
		{name: "`leaderboard`: ranks reversed", formats: both, edit: func(e *edited) want {
			n := len(e.table("leaderboard").Rows)
			top := rankOf(e, 1)
			for i := range n {
				r, _ := strconv.Atoi(e.get("leaderboard", i, "rank"))
				e.set("leaderboard", i, "rank", strconv.Itoa(n+1-r))
			}
			return e.at("leaderboard", top, "rank")
		}},
		{name: "`leaderboard`: two ranks swapped", edit: func(e *edited) want {
			a, b := rankOf(e, 2), rankOf(e, 3)
			swap(e, "leaderboard", a, b, "rank")
			return e.at("leaderboard", a, "rank")
		}},
		{name: "`leaderboard.rank`: zero", edit: func(e *edited) want {
			i := rankOf(e, 1)
			e.set("leaderboard", i, "rank", "0")
			return e.at("leaderboard", i, "rank")
		}},
		{name: "`agents`: renamed", formats: both, edit: func(e *edited) want {
			i := e.find("agents", func(get func(string) string) bool { return get("kind") == "sim" })
			e.set("agents", i, "name", "a better name")
			return want{"leaderboard", "agent=" + e.get("agents", i, "address"), "name"}
		}},
		{name: "`agents`: names swapped between two agents", edit: func(e *edited) want {
			a, b := rankOf(e, 1), rankOf(e, 2)
			ra := e.find("agents", func(get func(string) string) bool { return get("address") == e.get("leaderboard", a, "agent") })
			rb := e.find("agents", func(get func(string) string) bool { return get("address") == e.get("leaderboard", b, "agent") })
			swap(e, "agents", ra, rb, "name")
			return e.at("leaderboard", a, "name")
		}},
		{name: "`agents`: an unsigned agent given another's name in other case, here and in the leaderboard", formats: both, edit: func(e *edited) want {
			sims := simAgents(e)
			a, b := sims[0], sims[1]
			name := strings.ToUpper(e.get("agents", a, "name"))
			e.set("agents", b, "name", name)
			e.set("leaderboard", e.find("leaderboard", func(get func(string) string) bool { return get("agent") == e.get("agents", b, "address") }), "name", name)
			return e.at("agents", b, "name")
		}},
		{name: "`agents`: an unsigned agent claims a signed profile version", edit: func(e *edited) want {
			i := simAgents(e)[0]
			e.set("agents", i, "profile_version", "1")
			return e.at("agents", i, "profile_version")
		}},
		{name: "`agents`: the signed agent's earlier profile exported", formats: both, edit: func(e *edited) want {
			i := e.find("agents", func(get func(string) string) bool { return get("profile_version") == "2" })
			e.set("agents", i, "name", "fixture agent")
			e.set("agents", i, "profile_version", "1")
			return e.at("agents", i, "name")
		}},
		{name: "`round_markets`: two markets of a round swapped", edit: func(e *edited) want {
			a := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "1" && get("idx") == "0" })
			b := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "1" && get("idx") == "1" })
			swap(e, "round_markets", a, b, "market_id")
			return e.at("round_markets", a, "market_id")
		}},
		{name: "`round_markets`: a market replaced by another exported one", edit: func(e *edited) want {
			a := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "1" && get("idx") == "0" })
			other := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "2" && get("idx") == "6" })
			e.set("round_markets", a, "market_id", e.get("round_markets", other, "market_id"))
			return e.at("round_markets", a, "market_id")
		}},
		{name: "`round_markets.benchmark_bps`: out of range (10001)", edit: func(e *edited) want {
			i := firstSet(e, "round_markets", "benchmark_bps")
			e.set("round_markets", i, "benchmark_bps", "10001")
			return e.at("round_markets", i, "benchmark_bps")
		}},
		{name: "`round_markets.outcome`: out of range (2)", edit: func(e *edited) want {
			i := firstSet(e, "round_markets", "outcome")
			e.set("round_markets", i, "outcome", "2")
			return e.at("round_markets", i, "outcome")
		}},
		{name: "`round_markets`: the float benchmark beside benchmark_bps, one changed", formats: both, edit: func(e *edited) want {
			tb := e.table("round_markets")
			tb.Columns = append(tb.Columns, "benchmark")
			for i := range tb.Rows {
				bps, _ := strconv.Atoi(e.get("round_markets", i, "benchmark_bps"))
				tb.Rows[i] = append(tb.Rows[i], strconv.FormatFloat(float64(bps)/10000, 'g', -1, 64))
			}
			tb.Rows[0][len(tb.Columns)-1] = "0.9"
			return want{"round_markets", lineKey(e, 1, true), "benchmark"}
		}},
		{name: "`rounds.grace_seconds`: negative", edit: func(e *edited) want {
			e.set("rounds", 0, "grace_seconds", "-1")
			return e.at("rounds", 0, "grace_seconds")
		}},
		{name: "`log_entries.idx`: negative", edit: func(e *edited) want {
			e.set("log_entries", 3, "idx", "-3")
			return e.at("log_entries", 3, "idx")
		}},
		{name: "`log_entries`: two entries swapped", edit: func(e *edited) want {
			swap(e, "log_entries", 3, 4, "idx")
			return want{"log_entries", "", "leaf_hash"}
		}},
		{name: "`markets.resolution`: contradicting the logged outcome", edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool { return get("resolution") == "Yes" })
			e.set("markets", i, "resolution", "No")
			return e.at("markets", i, "resolution")
		}},
		{name: "`markets.resolution`: contradicting the logged resolution", edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool { return get("source_id") == "scored-0" })
			e.set("markets", i, "resolution", "No")
			return e.at("markets", i, "resolution")
		}},
		{name: "`markets.resolution`: void for a market frozen as YES", edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool {
				return get("resolution") == "Yes" && !strings.HasPrefix(get("source_id"), "scored")
			})
			e.set("markets", i, "resolution", "VOID")
			return e.at("markets", i, "resolution")
		}},
	}
}

func fileCases() []tamper {
	return []tamper{
		{name: "`scores`: file truncated in the middle of its last line", formats: both, edit: func(e *edited) want {
			n := len(e.table("scores").Rows)
			e.raw(e.file("scores"), func(b []byte) []byte {
				b = bytes.TrimRight(b, "\r\n")
				return b[:len(b)-5]
			})
			if e.format == export.CSV {
				return e.at("scores", n-1, "forfeit") // the last cell cut short
			}
			return want{"scores", fmt.Sprintf("line %d", n), ""}
		}},
		{name: "`scores`: file emptied", formats: both, edit: func(e *edited) want {
			e.raw(e.file("scores"), func([]byte) []byte { return nil })
			if e.format == export.CSV {
				return want{"scores", "", ""}
			}
			return want{"scores", "round_id=1 agent=" + minAgent(e, "1"), ""}
		}},
		{name: "`leaderboard`: only the header left", formats: []string{export.CSV}, edit: func(e *edited) want {
			top := e.key("leaderboard", rankOf(e, 1))
			e.raw(e.file("leaderboard"), func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] })
			return want{"leaderboard", top, ""}
		}},
		{name: "`scores`: file deleted", formats: both, edit: func(e *edited) want {
			removeFile(e, e.file("scores"))
			return want{"scores", "", ""}
		}},
		{name: "`log_entries`: file deleted", edit: func(e *edited) want {
			removeFile(e, e.file("log_entries"))
			return want{"log_entries", "", ""}
		}},
		{name: "`scores`: a column missing", formats: both, edit: func(e *edited) want {
			dropColumn(e, "scores", "brier")
			return want{"scores", lineKey(e, 1, true), "brier"}
		}},
		{name: "`scores`: a column renamed", formats: both, edit: func(e *edited) want {
			tb := e.table("scores")
			tb.Columns[slices.Index(tb.Columns, "brier")] = "brier_float"
			return want{"scores", lineKey(e, 1, true), "brier_float"}
		}},
		{name: "`rounds`: a number where a string belongs", edit: func(e *edited) want {
			e.raw(e.file("rounds"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"grace_seconds":"691200"`), []byte(`"grace_seconds":691200`), 1)
			})
			return want{"rounds", "line 1", ""}
		}},
		{name: "`rounds`: a null where a string belongs", edit: func(e *edited) want {
			e.raw(e.file("rounds"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"invalidated":"false"`), []byte(`"invalidated":null`), 1)
			})
			return want{"rounds", "line 1", ""}
		}},
		{name: "`rounds`: a line that is not an object", edit: func(e *edited) want {
			e.raw(e.file("rounds"), func(b []byte) []byte { return append([]byte("[\"1\"]\n"), b...) })
			return want{"rounds", "line 1", ""}
		}},
		{name: "`rounds`: a key twice in one object", edit: func(e *edited) want {
			e.raw(e.file("rounds"), func(b []byte) []byte { return bytes.Replace(b, []byte(`{"id":"1",`), []byte(`{"id":"1","id":"2",`), 1) })
			return want{"rounds", "line 1", ""}
		}},
		{name: "`round_markets`: a number cell quoted as text", formats: []string{export.CSV}, edit: func(e *edited) want {
			i := e.find("round_markets", func(get func(string) string) bool { return get("outcome") == "-1" })
			e.raw(e.file("round_markets"), func(b []byte) []byte { return bytes.Replace(b, []byte(",-1\n"), []byte(",'-1\n"), 1) })
			return want{"round_markets", fmt.Sprintf("line %d", i+2), "outcome"}
		}},
		{name: "`rounds`: a row with a cell too many", formats: []string{export.CSV}, edit: func(e *edited) want {
			e.raw(e.file("rounds"), func(b []byte) []byte {
				first := bytes.IndexByte(b, '\n') + 1
				end := first + bytes.IndexByte(b[first:], '\n')
				return slices.Concat(b[:end], []byte(",x"), b[end:])
			})
			return want{"rounds", "line 2", ""}
		}},
	}
}

func minAgent(e *edited, round string) string {
	first := ""
	for i := range e.table("submissions").Rows {
		if a := e.get("submissions", i, "agent"); e.get("submissions", i, "round_id") == round && (first == "" || a < first) {
			first = a
		}
	}
	return first
}

func removeFile(e *edited, name string) {
	e.flush()
	if err := os.Remove(filepath.Join(e.dir, name)); err != nil {
		e.t.Fatal(err)
	}
}

func dropColumn(e *edited, table, column string) {
	tb := e.table(table)
	i := slices.Index(tb.Columns, column)
	tb.Columns = slices.Delete(tb.Columns, i, i+1)
	for j := range tb.Rows {
		tb.Rows[j] = slices.Delete(tb.Rows[j], i, i+1)
	}
}

func metaCases() []tamper {
	otherKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	return []tamper{
		{name: "`meta.json`: chain_id changed", formats: both, edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.ChainID++ })
			return want{"meta.json", "EIP-712 domain", ""}
		}},
		{name: "`meta.json`: verifying_contract changed", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.VerifyingContract = common.HexToAddress("0x1").Hex() })
			return want{"meta.json", "EIP-712 domain", ""}
		}},
		{name: "`meta.json`: verifying_contract not checksummed", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.VerifyingContract = strings.ToLower(m.VerifyingContract) })
			return want{"meta.json", "", "verifying_contract"}
		}},
		{name: "`meta.json`: log_public_key another key's (with --log-key)", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.LogPublicKey = hex.EncodeToString(otherKey.Public().(ed25519.PublicKey)) })
			return want{"meta.json", "", "log_public_key"}
		}},
		{name: "`meta.json`: log_public_key changed (the export's key trusted)", trustExport: true, edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.LogPublicKey = hex.EncodeToString(otherKey.Public().(ed25519.PublicKey)) })
			return want{export.CheckpointFile, "", "signature"}
		}},
		{name: "`meta.json`: an export of the retired format (signed tree heads in meta.json)", edit: func(e *edited) want {
			e.raw("meta.json", func(b []byte) []byte {
				return bytes.Replace(b, []byte("{"), []byte(`{"head": {"tree_size": 1}, "heads": [],`), 1)
			})
			return want{"meta.json", "", "head"}
		}},
		{name: "`meta.json`: since after the first round", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) {
				s := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
				m.Since = &s
			})
			return want{"meta.json", "", "since"}
		}},
		{name: "`meta.json`: bootstrap changed", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.Bootstrap++ })
			return want{"meta.json", "", "bootstrap"}
		}},
		{name: "`meta.json`: seed changed", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.Seed++ })
			return want{"meta.json", "", "seed"}
		}},
		{name: "`meta.json`: format names the other format", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.Format = export.CSV })
			return want{"meta.json", "", "format"}
		}},
		{name: "`meta.json`: an unknown field", edit: func(e *edited) want {
			e.raw("meta.json", func(b []byte) []byte { return bytes.Replace(b, []byte("{"), []byte(`{"trusted": true,`), 1) })
			return want{"meta.json", "", ""}
		}},
		{name: "`meta.json`: truncated", edit: func(e *edited) want {
			e.raw("meta.json", func(b []byte) []byte { return b[:len(b)/2] })
			return want{"meta.json", "", ""}
		}},
		{name: "`meta.json`: deleted", edit: func(e *edited) want {
			removeFile(e, "meta.json")
			return want{"meta.json", "", ""}
		}},
		{name: "the earlier export, with the later checkpoint known: rolled back", from: "early", edit: func(e *edited) want {
			e.known = readCheckpoint(e, e.f.base[export.JSONL])
			return want{export.CheckpointFile, "", "tree_size"}
		}},
		{name: "a known checkpoint over other leaves (a fork)", edit: func(e *edited) want {
			c := e.exported()
			c.Size -= 5
			c.Hash = bytes.Repeat([]byte{2}, 32)
			e.known = e.signCheckpoint(c)
			return want{export.CheckpointFile, "known checkpoint 1", "root_hash"}
		}},
		{name: "a known checkpoint signed by another key", edit: func(e *edited) want {
			s, _ := tlog.NoteSigner(fixtureOrigin, otherKey)
			e.known, _ = note.Sign(&note.Note{Text: string(e.exported().Text())}, s)
			return want{export.CheckpointFile, "known checkpoint 1", "signature"}
		}},
	}
}

// readCheckpoint is the checkpoint note of the export in dir.
func readCheckpoint(e *edited, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, export.CheckpointFile))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// logRow is the first log entry of a kind whose leaf contains all of parts.
func logRow(e *edited, kind string, parts ...string) int {
	return e.find("log_entries", func(get func(string) string) bool {
		if get("kind") != kind {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(get("leaf"), p) {
				return false
			}
		}
		return true
	})
}

// renumber gives the log's rows their positions as indices.
func renumber(e *edited) {
	for i := range e.table("log_entries").Rows {
		e.set("log_entries", i, "idx", strconv.Itoa(i))
	}
}

// firstScore is the log row of the first (by agent) score of a round,
// as Verify compares them.
func firstScore(e *edited, round string) int {
	best, agent := -1, ""
	for i := range e.table("log_entries").Rows {
		l := e.get("log_entries", i, "leaf")
		if e.get("log_entries", i, "kind") != tlog.KindScore || !strings.Contains(l, `"round_id":`+round+`,`) {
			continue
		}
		a := l[strings.Index(l, `"agent":"`)+9:]
		a = a[:strings.IndexByte(a, '"')]
		if best < 0 || a < agent {
			best, agent = i, a
		}
	}
	return best
}

// logCases are what an operator holding the log key can do: rewrite
// entries and sign a new head over them. Every signature, commit hash and
// score in the log is still checked.
func logCases() []tamper {
	fixtureRound := func(e *edited) string {
		return e.get("round_markets", e.find("round_markets", func(get func(string) string) bool { return get("benchmark_bps") == "" }), "round_id")
	}
	return []tamper{
		{name: "log re-signed: a score changed in the log and the export", edit: func(e *edited) want {
			i := logRow(e, tlog.KindScore, `"round_id":2,`, `"agent":"0x`)
			e.leaf(i, `"brier_bps2":(\d+)`, "1")
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a commit carrying another agent's signature", edit: func(e *edited) want {
			i := logRow(e, tlog.KindCommit, `"round_id":1,`)
			j := logRow(e, tlog.KindCommit, `"round_id":2,`)
			sig := regexp.MustCompile(`"signature":"(0x[0-9a-f]+)"`).FindStringSubmatch(e.get("log_entries", j, "leaf"))[1]
			e.leaf(i, `"signature":"(0x[0-9a-f]+)"`, sig)
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a signed profile's name changed in the log and the export", edit: func(e *edited) want {
			i := logRow(e, tlog.KindProfile, `"version":2,`)
			e.leaf(i, `"name":"((?:[^"\\]|\\.)*)"`, "a forged name")
			a := e.find("agents", func(get func(string) string) bool { return get("profile_version") == "2" })
			e.set("agents", a, "name", "a forged name")
			e.set("leaderboard", e.find("leaderboard", func(get func(string) string) bool { return get("agent") == e.get("agents", a, "address") }), "name", "a forged name")
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a profile update removed (a version gap)", edit: func(e *edited) want {
			i := logRow(e, tlog.KindProfile, `"version":1,`)
			e.remove("log_entries", i)
			renumber(e)
			e.resign()
			return e.at("log_entries", logRow(e, tlog.KindProfile, `"version":2,`), "leaf")
		}},
		{name: "log re-signed: a profile with a name the arena refuses", edit: func(e *edited) want {
			i := logRow(e, tlog.KindProfile, `"version":1,`)
			e.leaf(i, `"name":"([^"]*)"`, "  fixture agent")
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a reveal's predictions changed", edit: func(e *edited) want {
			i := logRow(e, tlog.KindReveal, `"round_id":1,`)
			e.leaf(i, `"predictions":\[(\d+)`, "1")
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a reveal removed (a forged forfeit)", edit: func(e *edited) want {
			e.remove("log_entries", logRow(e, tlog.KindReveal, `"round_id":1,`))
			renumber(e)
			e.resign()
			return want{"log_entries", "", "leaf"}
		}},
		{name: "log re-signed: a commit logged twice", edit: func(e *edited) want {
			i := logRow(e, tlog.KindCommit, `"round_id":1,`)
			e.insert("log_entries", i+1, e.copyRow("log_entries", i))
			renumber(e)
			e.resign()
			return e.at("log_entries", i+1, "leaf")
		}},
		{name: "log re-signed: a leaf with a field the arena does not write", edit: func(e *edited) want {
			i := logRow(e, tlog.KindBenchmark)
			e.leaf(i, `(\})\}$`, `,"note":"x"}`)
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a leaf spelled otherwise", edit: func(e *edited) want {
			i := logRow(e, tlog.KindOutcome)
			e.set("log_entries", i, "leaf", strings.Replace(e.get("log_entries", i, "leaf"), `"outcomes":`, `"outcomes": `, 1))
			e.resign()
			return e.at("log_entries", i, "leaf")
		}},
		{name: "log re-signed: a score logged before its round's outcomes", edit: func(e *edited) want {
			o := logRow(e, tlog.KindOutcome, `"round_id":1,`)
			swap(e, "log_entries", o, o+1, "kind", "leaf", "leaf_hash", "created_at")
			e.resign()
			return e.at("log_entries", o, "leaf")
		}},
		{name: "log re-signed: an outcome changed in the log, the round and the market", edit: func(e *edited) want {
			round := fixtureRound(e)
			o := logRow(e, tlog.KindOutcome, `"round_id":`+round+`,`)
			e.leaf(o, `"outcomes":\[(-?\d+)`, "0")
			rm := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == round && get("idx") == "0" })
			e.set("round_markets", rm, "outcome", "0")
			m := e.find("markets", func(get func(string) string) bool { return get("id") == e.get("round_markets", rm, "market_id") })
			e.set("markets", m, "resolution", "No")
			// the market's logged resolution too
			e.leaf(logRow(e, tlog.KindResolution, `"market_id":`+e.get("markets", m, "id")+`,`), `"resolution":"(\w+)"`, "No")
			e.resign()
			return e.at("log_entries", firstScore(e, round), "leaf")
		}},
		{name: "log re-signed: a benchmark changed in the log and the export", edit: func(e *edited) want {
			b := logRow(e, tlog.KindBenchmark, `"round_id":1,`)
			e.leaf(b, `"benchmarks_bps":\[(-?\d+)`, "5000")
			rm := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "1" && get("idx") == "0" })
			e.set("round_markets", rm, "benchmark_bps", "5000")
			e.resign()
			return e.at("log_entries", firstScore(e, "1"), "leaf")
		}},
		{name: "`log_entries`: a reveal of a scored round sealed", edit: func(e *edited) want {
			i := logRow(e, tlog.KindReveal)
			e.set("log_entries", i, "sealed", "true")
			e.set("log_entries", i, "leaf", "")
			return e.at("log_entries", i, "sealed")
		}},
		{name: "`log_entries`: an entry marked sealed with its leaf", edit: func(e *edited) want {
			i := logRow(e, tlog.KindCommit)
			e.set("log_entries", i, "sealed", "true")
			return e.at("log_entries", i, "sealed")
		}},
		{name: "sealed export: the sealed entry's flag cleared", from: "sealed", edit: func(e *edited) want {
			i := e.find("log_entries", func(get func(string) string) bool { return get("sealed") == "true" })
			e.set("log_entries", i, "sealed", "false")
			return e.at("log_entries", i, "leaf")
		}},
		{name: "sealed export: a benchmark's leaf withheld as sealed", from: "sealed", edit: func(e *edited) want {
			i := logRow(e, tlog.KindBenchmark)
			e.set("log_entries", i, "sealed", "true")
			e.set("log_entries", i, "leaf", "")
			return e.at("log_entries", i, "sealed")
		}},
		{name: "sealed export: the open round marked triggered", from: "sealed", edit: func(e *edited) want {
			i := e.find("rounds", func(get func(string) string) bool { return get("triggered_at") == "" })
			e.set("rounds", i, "triggered_at", e.get("rounds", 0, "triggered_at"))
			return e.at("rounds", i, "triggered_at")
		}},
		{name: "sealed export: the open round removed", from: "sealed", edit: func(e *edited) want {
			i := e.find("rounds", func(get func(string) string) bool { return get("triggered_at") == "" })
			id := e.get("rounds", i, "id")
			e.remove("rounds", i)
			e.remove("round_markets", e.find("round_markets", func(get func(string) string) bool { return get("round_id") == id }))
			m := e.find("markets", func(get func(string) string) bool { return get("source_id") == "open-0" })
			e.remove("markets", m)
			s := e.find("log_entries", func(get func(string) string) bool { return get("sealed") == "true" })
			return e.at("log_entries", s, "sealed")
		}},
	}
}

// claimCases contradict the operator's own claims: the round's schedule
// against its submissions' times and the agents' signed deadlines.
func claimCases() []tamper {
	round2 := func(get func(string) string) bool { return get("id") == "2" }
	return []tamper{
		{name: "`submissions.committed_at`: after the commit deadline", formats: both, edit: func(e *edited) want {
			r := e.where("rounds", round2)
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", i, "committed_at", at(r("commit_deadline"), time.Second))
			return e.at("submissions", i, "committed_at")
		}},
		{name: "`rounds.reveal_deadline`: before every revealed_at", formats: both, edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "reveal_deadline", e.get("rounds", i, "reveal_start"))
			return e.at("rounds", i, "reveal_deadline")
		}},
		{name: "`submissions.revealed_at`: after the reveal deadline", edit: func(e *edited) want {
			r := e.where("rounds", round2)
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", i, "revealed_at", at(r("reveal_deadline"), time.Second))
			return e.at("submissions", i, "revealed_at")
		}},
		{name: "`submissions.revealed_at`: before the reveal start", edit: func(e *edited) want {
			r := e.where("rounds", round2)
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", i, "revealed_at", at(r("reveal_start"), -time.Second))
			return e.at("submissions", i, "revealed_at")
		}},
		{name: "`submissions.committed_at`: before the round's creation", edit: func(e *edited) want {
			r := e.where("rounds", round2)
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", i, "committed_at", at(r("created_at"), -time.Second))
			return e.at("submissions", i, "committed_at")
		}},
		{name: "`submissions.committed_at`: over 24 h before its signed deadline", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "created_at", at(e.get("rounds", i, "commit_deadline"), -72*time.Hour))
			s := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", s, "committed_at", at(e.get("rounds", i, "commit_deadline"), -25*time.Hour))
			return e.at("submissions", s, "committed_at")
		}},
		{name: "`rounds.commit_deadline`: before every commit", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "commit_deadline", at(e.get("rounds", i, "created_at"), time.Minute))
			return e.at("rounds", i, "commit_deadline")
		}},
		{name: "`rounds.commit_deadline`: a second later (the random baseline's seed)", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "commit_deadline", at(e.get("rounds", i, "commit_deadline"), time.Second))
			return e.at("rounds", i, "commit_deadline")
		}},
		{name: "`rounds.reveal_start`: after every reveal", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "reveal_start", at(e.get("rounds", i, "reveal_deadline"), -time.Second))
			return e.at("rounds", i, "reveal_start")
		}},
		{name: "`rounds.reveal_start`: not after the commit deadline", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "reveal_start", e.get("rounds", i, "commit_deadline"))
			return e.at("rounds", i, "reveal_start")
		}},
		{name: "`rounds.created_at`: after the commit deadline", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "created_at", at(e.get("rounds", i, "commit_deadline"), time.Second))
			return e.at("rounds", i, "created_at")
		}},
		{name: "`rounds.benchmark_at`: before the commit deadline", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "benchmark_at", at(e.get("rounds", i, "commit_deadline"), -time.Second))
			return e.at("rounds", i, "benchmark_at")
		}},
		{name: "`rounds.benchmark_at`: after the trigger", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "benchmark_at", at(e.get("rounds", i, "triggered_at"), time.Second))
			return e.at("rounds", i, "benchmark_at")
		}},
		{name: "`rounds.triggered_at`: not after the reveal deadline", edit: func(e *edited) want {
			i := e.find("rounds", round2)
			e.set("rounds", i, "triggered_at", e.get("rounds", i, "reveal_deadline"))
			return e.at("rounds", i, "triggered_at")
		}},
		{name: "`round_markets.benchmark_time`: 301 s from the commit deadline", edit: func(e *edited) want {
			r := e.where("rounds", round2)
			i := e.find("round_markets", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("round_markets", i, "benchmark_time", at(r("commit_deadline"), 301*time.Second))
			return e.at("round_markets", i, "benchmark_time")
		}},
		{name: "`round_markets.benchmark_time`: set without a benchmark", edit: func(e *edited) want {
			i := e.find("round_markets", func(get func(string) string) bool { return get("benchmark_bps") == "" })
			e.set("round_markets", i, "benchmark_time", e.get("round_markets", 0, "benchmark_time"))
			return e.at("round_markets", i, "benchmark_time")
		}},
		{name: "`round_markets.benchmark_source`: set without a benchmark", edit: func(e *edited) want {
			i := e.find("round_markets", func(get func(string) string) bool { return get("benchmark_bps") == "" })
			e.set("round_markets", i, "benchmark_source", "sim")
			return e.at("round_markets", i, "benchmark_source")
		}},
		{name: "`round_markets.benchmark_source`: Gamma's quote", edit: func(e *edited) want {
			e.set("round_markets", 0, "benchmark_source", "gamma")
			return e.at("round_markets", 0, "benchmark_source")
		}},
		{name: "`markets.status`: open for a market frozen as resolved", edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool { return get("resolution") == "No" })
			e.set("markets", i, "status", "open")
			return e.at("markets", i, "status")
		}},
		{name: "`markets.venue`: not a venue", edit: func(e *edited) want {
			e.set("markets", 0, "venue", "predictit")
			return e.at("markets", 0, "venue")
		}},
		{name: "`markets.venue`: another venue than a live market's source", edit: func(e *edited) want {
			e.set("markets", 0, "source", arena.SourcePolymarket)
			e.set("markets", 0, "venue", arena.SourceKalshi)
			return e.at("markets", 0, "venue")
		}},
		{name: "`markets.source_id`: another market's", edit: func(e *edited) want {
			e.set("markets", 1, "source_id", e.get("markets", 0, "source_id"))
			return e.at("markets", 1, "source_id")
		}},
		{name: "`markets.event_id`: another market's of the same round", edit: func(e *edited) want {
			ev := func(idx string) int {
				rm := e.where("round_markets", func(get func(string) string) bool { return get("round_id") == "1" && get("idx") == idx })
				return e.find("markets", func(get func(string) string) bool { return get("id") == rm("market_id") })
			}
			e.set("markets", ev("1"), "event_id", e.get("markets", ev("0"), "event_id"))
			return want{"round_markets", "round_id=1 idx=1", "market_id"}
		}},
	}
}

func at(ts string, d time.Duration) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		panic(err)
	}
	return t.Add(d).UTC().Format(time.RFC3339Nano)
}

// harmless are edits that must not matter: whitespace, the order of rows,
// keys and columns, and what the contract lists as claims the export
// cannot check (they verify, and docs/verification.md says so).
func harmless() []tamper {
	shuffle := func(e *edited) want {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, sp := range export.Specs {
			tb := e.table(sp.Name)
			rng.Shuffle(len(tb.Rows), func(i, j int) { tb.Rows[i], tb.Rows[j] = tb.Rows[j], tb.Rows[i] })
		}
		return want{}
	}
	everyFile := func(e *edited, change func([]byte) []byte) {
		for _, sp := range export.Specs {
			e.raw(e.file(sp.Name), change)
		}
	}
	return []tamper{
		{name: "every table's rows shuffled", formats: both, edit: shuffle},
		{name: "sealed export: every table's rows shuffled", from: "sealed", edit: shuffle},
		{name: "CRLF line endings", formats: both, edit: func(e *edited) want {
			everyFile(e, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) })
			return want{}
		}},
		{name: "blank lines between rows, no final newline", edit: func(e *edited) want {
			everyFile(e, func(b []byte) []byte {
				return bytes.TrimRight(bytes.ReplaceAll(b, []byte("\n"), []byte("\n\n \n")), "\n ")
			})
			return want{}
		}},
		{name: "spaces around JSON punctuation", edit: func(e *edited) want {
			everyFile(e, func(b []byte) []byte {
				b = bytes.ReplaceAll(b, []byte(`":"`), []byte(`" :  "`))
				return bytes.ReplaceAll(b, []byte(`","`), []byte(`" , "`))
			})
			return want{}
		}},
		{name: "every object's keys in reverse order", edit: func(e *edited) want {
			for _, sp := range export.Specs {
				reverseColumns(e, sp.Name)
			}
			return want{}
		}},
		{name: "`markets.venue`: a simulated market named after a venue", edit: func(e *edited) want {
			e.set("markets", 0, "venue", arena.SourceKalshi)
			return want{}
		}},
		{name: "`markets` without `venue`, as exports made before it was added", formats: both, edit: func(e *edited) want {
			tb := e.table("markets")
			i := e.idx("markets", "venue")
			tb.Columns = slices.Delete(tb.Columns, i, i+1)
			for j := range tb.Rows {
				tb.Rows[j] = slices.Delete(tb.Rows[j], i, i+1)
			}
			return want{}
		}},
		{name: "every CSV table's columns in reverse order", formats: []string{export.CSV}, edit: func(e *edited) want {
			for _, sp := range export.Specs {
				reverseColumns(e, sp.Name)
			}
			return want{}
		}},
		{name: "meta.json re-indented", edit: func(e *edited) want {
			e.raw("meta.json", func(b []byte) []byte {
				var out bytes.Buffer
				_ = json.Compact(&out, b)
				return out.Bytes()
			})
			return want{}
		}},
		{name: "claim: a market's event renamed", edit: func(e *edited) want {
			e.set("markets", 0, "event_id", "a fresh event")
			return want{}
		}},
		{name: "claim: a market's question and category changed", edit: func(e *edited) want {
			e.set("markets", 0, "question", "Will something else happen?")
			e.set("markets", 0, "category", "other")
			return want{}
		}},
		{name: "claim: a market's source (and so its venue), source_id and condition_id changed", edit: func(e *edited) want {
			e.set("markets", 0, "source", "polymarket")
			e.set("markets", 0, "venue", "polymarket")
			e.set("markets", 0, "source_id", "elsewhere")
			e.set("markets", 0, "condition_id", "0x"+strings.Repeat("ab", 32))
			return want{}
		}},
		{name: "claim: a market frozen unresolved resolved since", edit: func(e *edited) want {
			i := e.find("markets", func(get func(string) string) bool { return get("source_id") == "scored-3" })
			e.set("markets", i, "resolution", "Yes")
			e.set("markets", i, "status", "resolved")
			return want{}
		}},
		{name: "claim: an agent renamed in the agents table and the leaderboard alike", edit: func(e *edited) want {
			i := e.find("agents", func(get func(string) string) bool { return get("kind") == "sim" })
			l := e.find("leaderboard", func(get func(string) string) bool { return get("agent") == e.get("agents", i, "address") })
			e.set("agents", i, "name", "renamed")
			e.set("leaderboard", l, "name", "renamed")
			return want{}
		}},
		{name: "claim: an unsigned agent's profile filled in", formats: both, edit: func(e *edited) want {
			i := simAgents(e)[0]
			e.set("agents", i, "organisation", "Simulations Inc.")
			e.set("agents", i, "model", "sim")
			e.set("agents", i, "homepage", "https://sim.example")
			e.set("agents", i, "description", "Knows the true probability, with noise.")
			return want{}
		}},
		{name: "claim: an agent's kind changed", edit: func(e *edited) want {
			e.set("agents", 0, "kind", "llm")
			return want{}
		}},
		{name: "claim: a registered agent that never submitted added", edit: func(e *edited) want {
			e.insert("agents", 0, []string{common.HexToAddress("0x2").Hex(), "idle", "external", "", "", "", "", "0"})
			return want{}
		}},
		{name: "claim: an open round with a market added", edit: func(e *edited) want {
			e.insert("rounds", 0, e.copyRow("rounds", 0))
			e.set("rounds", 0, "id", "99")
			e.set("rounds", 0, "benchmark_at", "")
			e.set("rounds", 0, "triggered_at", "")
			r := e.copyRow("round_markets", 0)
			r[e.idx("round_markets", "round_id")] = "99"
			for _, c := range []string{"benchmark_bps", "benchmark_time", "benchmark_source", "outcome"} {
				r[e.idx("round_markets", c)] = ""
			}
			e.insert("round_markets", 0, r)
			return want{}
		}},
		{name: "claim: a round's grace and creation time changed", edit: func(e *edited) want {
			e.set("rounds", 0, "grace_seconds", "60")
			e.set("rounds", 0, "created_at", at(e.get("rounds", 0, "created_at"), -time.Hour))
			return want{}
		}},
		{name: "claim: a benchmark's time and source changed within the rules", edit: func(e *edited) want {
			e.set("round_markets", 0, "benchmark_time", at(e.get("round_markets", 0, "benchmark_time"), time.Minute))
			e.set("round_markets", 0, "benchmark_source", "clob_mid")
			return want{}
		}},
		{name: "claim: a commit and a reveal a minute earlier", edit: func(e *edited) want {
			i := e.find("submissions", func(get func(string) string) bool { return get("round_id") == "2" })
			e.set("submissions", i, "committed_at", at(e.get("submissions", i, "committed_at"), -time.Minute))
			e.set("submissions", i, "revealed_at", at(e.get("submissions", i, "revealed_at"), -time.Minute))
			return want{}
		}},
		{name: "claim: the log's times changed", edit: func(e *edited) want {
			e.set("log_entries", 0, "created_at", "2020-01-01T00:00:00Z")
			return want{}
		}},
		{name: "claim: exported at another time", edit: func(e *edited) want {
			e.editMeta(func(m *export.Meta) { m.ExportedAt = m.ExportedAt.Add(-time.Hour) })
			return want{}
		}},
		{name: "the earlier export's checkpoint known", edit: func(e *edited) want {
			e.known = readCheckpoint(e, e.f.early)
			return want{}
		}},
		{name: "the earlier export alone (a consistent roll-back)", from: "early", edit: func(*edited) want { return want{} }},
		{name: "a checkpoint signed by another key, named in log_public_key, without --log-key", trustExport: true, edit: func(e *edited) want {
			other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
			s, _ := tlog.NoteSigner(fixtureOrigin, other)
			n, _ := note.Sign(&note.Note{Text: string(e.exported().Text())}, s)
			e.checkpoint(func([]byte) []byte { return n })
			e.editMeta(func(m *export.Meta) { m.LogPublicKey = hex.EncodeToString(other.Public().(ed25519.PublicKey)) })
			return want{}
		}},
	}
}

func reverseColumns(e *edited, table string) {
	tb := e.table(table)
	slices.Reverse(tb.Columns)
	for _, r := range tb.Rows {
		slices.Reverse(r)
	}
}
