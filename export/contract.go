package export

import (
	"strings"

	"github.com/forecast-arena/arena"
)

// Class says on whose word an exported value rests.
type Class int

const (
	// Signed values are signed by an agent (EIP-712) or committed to by the
	// tamper-evident log, whose checkpoints the log key signs.
	Signed Class = iota + 1
	// Recomputed values are derived by Verify from signed ones: scores,
	// the leaderboard, flags that follow from what the log holds.
	Recomputed
	// Claimed values rest on the operator's word alone: display data
	// (names, questions) and the operator's clock. Verify checks them for
	// consistency with each other and with the signed values only.
	Claimed
)

func (c Class) String() string {
	switch c {
	case Signed:
		return "signed"
	case Recomputed:
		return "recomputed"
	case Claimed:
		return "claimed"
	}
	return "?"
}

// cellType is how a cell is written; every type has one spelling per
// value (Verify rejects "07" for 7, "1e0" for 1, a lowercase address).
type cellType int

const (
	tUint  cellType = iota + 1 // decimal, no sign, no leading zero
	tInt                       // decimal
	tFloat                     // Go's shortest round-trip form ('g', -1)
	tBool                      // true or false
	tTime                      // RFC 3339 UTC, fractional seconds only when non-zero
	tAddr                      // EIP-55 checksummed 0x address
	tAgent                     // an address, or a baseline's name (random, market)
	tHash                      // 0x and 64 lowercase hex digits
	tSig                       // 0x and 130 lowercase hex digits
	tHex32                     // 64 lowercase hex digits
	tPreds                     // basis points (≤ 10000) separated by single spaces
	tText                      // any UTF-8 text without NUL
	tEnum                      // one of Column.enum
)

// Column is one exported column: its class, how its cells are written and
// what Verify checks beyond that.
type Column struct {
	Name  string
	Class Class
	// Check is what Verify checks of the column, as docs/verification.md
	// lists it.
	Check string
	typ   cellType
	opt   bool // may be empty
	// late columns were added after exports were first published: an
	// export made before lacks the column, whose cells then read empty.
	late bool
	enum []string
}

// Type says how the column's cells are written, as docs/verification.md
// lists it.
func (c Column) Type() string {
	t := map[cellType]string{tUint: "uint", tInt: "int", tFloat: "float", tBool: "bool", tTime: "time", tAddr: "address", tAgent: "agent",
		tHash: "hash", tSig: "signature", tHex32: "hex32", tPreds: "predictions", tText: "text"}[c.typ]
	if c.typ == tEnum {
		t = strings.Join(c.enum, "/")
	}
	return t
}

// Optional reports whether a cell of the column may be empty.
func (c Column) Optional() bool { return c.opt }

// TableSpec is one exported table: its columns and the columns that key
// its rows (unique within the table; row order carries no meaning).
type TableSpec struct {
	Name    string
	Key     []string
	Columns []Column
}

// Names are the table's column names, in the order an export writes them.
func (t TableSpec) Names() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

func (t TableSpec) column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

func col(name string, class Class, typ cellType, check string) Column {
	return Column{Name: name, Class: class, Check: check, typ: typ}
}

func opt(c Column) Column { c.opt = true; return c }

func late(c Column) Column { c.late = true; return c }

func enum(c Column, values ...string) Column { c.typ, c.enum = tEnum, values; return c }

const (
	checkScore = "recomputed from the logged reveals, benchmarks and outcomes with the server's scorer; equal to the latest logged score"
	checkBoard = "recomputed from the recomputed scores with the server's analysis"
	checkSeed  = "recomputed with the server's analysis, its bootstrap seeded by meta.json's `seed`"
	// An agent run by the operator (hosted, simulated) has a profile the
	// operator registered, unsigned.
	checkProfile = "the agent's latest logged profile's (signed by the agent) when `profile_version` > 0; otherwise the operator's claim, display only"
)

// Contract is every table an export may hold, in the order an export
// writes them; docs/verification.md lists it column by column.
var Contract = []TableSpec{
	{Name: "rounds", Key: []string{"id"}, Columns: []Column{
		col("id", Signed, tUint, "every round the log names is exported (unless `since`); a round the log does not name is an open round's claim"),
		col("commit_deadline", Claimed, tTime, "before `reveal_start`, after `created_at`, at least every `committed_at`; at or after `since`; it seeds the random baseline, so a scored round's logged random score binds it"),
		col("reveal_start", Claimed, tTime, "after `commit_deadline`, at most `reveal_deadline` and every `revealed_at`"),
		col("reveal_deadline", Claimed, tTime, "at least every `revealed_at`; before `triggered_at`"),
		col("grace_seconds", Claimed, tUint, "a whole number of seconds"),
		col("created_at", Claimed, tTime, "before `commit_deadline`, at most every `committed_at`"),
		opt(col("benchmark_at", Claimed, tTime, "set exactly when the log holds the round's benchmarks; after `commit_deadline`, at most `triggered_at`")),
		opt(col("triggered_at", Claimed, tTime, "set exactly when the log holds the round's outcomes; after `reveal_deadline`")),
		col("invalidated", Recomputed, tBool, "false for a round the log scored (a claim for a round not scored)"),
	}},
	{Name: "round_markets", Key: []string{"round_id", "idx"}, Columns: []Column{
		col("round_id", Signed, tUint, "an exported round"),
		col("idx", Signed, tUint, "0 … k−1 without a gap; k is the logged benchmarks' count"),
		col("market_id", Signed, tInt, "the logged benchmarks' market at `idx`; an exported market; distinct within the round, at most one per `event_id`"),
		opt(col("benchmark_bps", Signed, tInt, "the logged benchmark in basis points (0 … 10000); empty for none and before the capture")),
		opt(col("benchmark_time", Claimed, tTime, "set exactly with `benchmark_bps`; within 300 s of `commit_deadline`")),
		opt(enum(col("benchmark_source", Claimed, 0, "set exactly with `benchmark_bps`; a price of the market's own venue at the time (never Gamma's quote, a frozen value or a settlement)"),
			benchmarkSources()...)),
		opt(col("outcome", Signed, tInt, "the round's latest logged outcome (1 YES, 0 NO, −1 void, −2 unresolved at the trigger); empty exactly before the trigger")),
	}},
	{Name: "markets", Key: []string{"id"}, Columns: []Column{
		col("id", Signed, tInt, "every market of an exported round is exported, and no other"),
		col("source", Claimed, tText, "with `source_id`, unique"),
		col("source_id", Claimed, tText, "with `source`, unique"),
		late(col("venue", Claimed, tText, "`source` for a live venue's market; for a simulated one (`sim`), `sim` or the venue it is named after; exports made before it was added lack the column")),
		col("question", Claimed, tText, "display only"),
		col("category", Claimed, tText, "display only"),
		col("event_id", Claimed, tText, "distinct within a round; the leaderboard's alpha interval, recomputed, clusters by it"),
		enum(col("status", Claimed, 0, "`resolved` exactly when `resolution` is set (or the source is ambiguous); `resolved` for a market frozen as YES, NO or void"),
			string(arena.StatusOpen), string(arena.StatusClosed), string(arena.StatusResolved)),
		opt(col("resolution", Signed, tText, "the market's latest logged resolution, when one is logged; agrees with every logged outcome of the market (Yes 1, No 0, anything else −1); otherwise the source's claim")),
		opt(col("condition_id", Claimed, tHash, "display only")),
	}},
	{Name: "submissions", Key: []string{"round_id", "agent"}, Columns: []Column{
		col("round_id", Signed, tUint, "an exported round whose outcomes are triggered (others stay sealed)"),
		col("agent", Signed, tAddr, "its commit is in the log; every logged commit of an exported triggered round is exported"),
		col("commit_hash", Signed, tHash, "the logged commit's, whose EIP-712 signature by `agent` covers it"),
		opt(col("reasoning_hash", Signed, tHash, "the logged commit's (signed)")),
		col("commit_nonce", Signed, tUint, "the logged commit's (signed); an agent's nonces are distinct, and 0 … n−1 when no log entry is sealed"),
		col("commit_sig", Signed, tSig, "the logged commit's; recovers to `agent` under meta.json's EIP-712 domain"),
		col("committed_at", Claimed, tTime, "at least `created_at`, at most `commit_deadline`, and within the 24 h before the commit's signed deadline"),
		opt(col("predictions", Signed, tPreds, "the logged reveal's, one per market; with `salt` they hash to `commit_hash`; empty exactly when the log has no reveal (a forfeit)")),
		opt(col("salt", Signed, tHash, "the logged reveal's (signed)")),
		opt(col("reveal_nonce", Signed, tUint, "the logged reveal's (signed)")),
		opt(col("reveal_sig", Signed, tSig, "the logged reveal's; recovers to `agent`")),
		opt(col("revealed_at", Claimed, tTime, "set exactly with a reveal; within [`reveal_start`, `reveal_deadline`], and within the 24 h before the reveal's signed deadline")),
	}},
	{Name: "scores", Key: []string{"round_id", "agent"}, Columns: []Column{
		col("round_id", Recomputed, tUint, "a scored round with scoreable markets"),
		col("agent", Recomputed, tAgent, "one row per logged commit of the round, plus `random`, and `market` when a market has a benchmark"),
		col("brier", Recomputed, tFloat, checkScore),
		opt(col("alpha", Recomputed, tFloat, checkScore)),
		col("brier_bps2", Recomputed, tInt, checkScore),
		opt(col("alpha_bps2", Recomputed, tInt, checkScore)),
		col("scored_markets", Recomputed, tUint, checkScore),
		col("benchmarked", Recomputed, tUint, checkScore),
		col("forfeit", Recomputed, tBool, checkScore),
	}},
	{Name: "agents", Key: []string{"address"}, Columns: []Column{
		col("address", Signed, tAgent, "every agent with a logged commit or profile is listed; others are registered agents' claims"),
		opt(col("name", Signed, tText, checkProfile+"; the leaderboard's names follow it; no two agents' names, nor an agent's and a baseline's, are one ignoring case, compatibility forms and look-alike characters")),
		col("kind", Claimed, tText, "display only (external, builtin, sim, llm, ensemble)"),
		opt(col("organisation", Signed, tText, checkProfile)),
		opt(col("model", Signed, tText, checkProfile)),
		opt(col("homepage", Signed, tText, checkProfile)),
		opt(col("description", Signed, tText, checkProfile)),
		col("profile_version", Signed, tUint, "the version of the agent's latest logged profile, whose EIP-712 signature by the agent recovers under meta.json's domain; the logged versions of an agent are 1 … n without a gap; 0 when none is logged"),
	}},
	{Name: "leaderboard", Key: []string{"agent"}, Columns: []Column{
		col("rank", Recomputed, tUint, checkBoard+": 1 … n by the difficulty-adjusted Brier Index, then Brier, then agent; 0 for a preliminary agent"),
		col("agent", Recomputed, tAgent, "every agent scored in an exported round, and no other"),
		col("name", Recomputed, tText, "the agents table's name, a baseline's name, or else the agent"),
		col("preliminary", Recomputed, tBool, checkBoard+": fewer resolved forecasts than meta.json's `min_forecasts`"),
		opt(col("score", Recomputed, tFloat, checkSeed+": the headline, the difficulty-adjusted Brier Index")),
		opt(col("score_ci_lo", Recomputed, tFloat, checkSeed)), opt(col("score_ci_hi", Recomputed, tFloat, checkSeed)),
		col("rounds", Recomputed, tUint, checkBoard),
		col("n", Recomputed, tUint, checkBoard),
		col("brier", Recomputed, tFloat, checkBoard), opt(col("brier_se", Recomputed, tFloat, checkBoard)),
		col("brier_index", Recomputed, tFloat, checkBoard), col("bss", Recomputed, tFloat, checkBoard),
		opt(col("peer_score", Recomputed, tFloat, checkBoard)), col("peer_n", Recomputed, tUint, checkBoard),
		opt(col("adjusted", Recomputed, tFloat, checkSeed)), opt(col("adjusted_ci_lo", Recomputed, tFloat, checkSeed)),
		opt(col("adjusted_ci_hi", Recomputed, tFloat, checkSeed)),
		opt(col("alpha", Recomputed, tFloat, checkBoard)), opt(col("alpha_se", Recomputed, tFloat, checkBoard)),
		opt(col("alpha_ci_lo", Recomputed, tFloat, checkSeed)), opt(col("alpha_ci_hi", Recomputed, tFloat, checkSeed)),
		opt(col("t", Recomputed, tFloat, checkBoard)), opt(col("p", Recomputed, tFloat, checkBoard)), opt(col("beat_pct", Recomputed, tFloat, checkBoard)),
		col("provisional", Recomputed, tBool, checkBoard+": fewer than 140 predictions with a benchmark"),
		opt(col("p_rank1", Recomputed, tFloat, checkSeed)), opt(col("p_top5", Recomputed, tFloat, checkSeed)),
		col("tie_group", Recomputed, tUint, checkSeed+": ranked agents whose score interval overlaps their group leader's; 0 for a preliminary agent"),
	}},
	{Name: "log_entries", Key: []string{"idx"}, Columns: []Column{
		col("idx", Signed, tUint, "0 … size−1, size the checkpoint's"),
		enum(col("kind", Signed, 0, "the leaf's kind"), "commit", "reveal", "benchmark", "resolution", "outcome", "score", "profile", "dispute", "decision"),
		opt(col("leaf", Signed, tText, "hashes to `leaf_hash`; the canonical JSON of a well-formed entry; every signature in it recovers to its agent")),
		col("leaf_hash", Signed, tHex32, "every leaf hash is covered by the signed root (an inclusion proof each)"),
		col("created_at", Claimed, tTime, "display only"),
		col("sealed", Claimed, tBool, "true exactly for a commit or reveal whose `leaf` is withheld until its round is triggered"),
	}},
	{Name: "traces", Key: []string{"round_id", "agent"}, Columns: []Column{
		col("round_id", Claimed, tUint, "an exported round whose outcomes are triggered"),
		col("agent", Claimed, tAddr, "display only"),
		col("agent_id", Claimed, tText, "display only"),
		col("submitted", Claimed, tBool, "display only"),
		opt(col("failure", Claimed, tText, "display only")),
		col("calls", Claimed, tUint, "display only"),
		col("cached_calls", Claimed, tUint, "display only"),
		col("input_tokens", Claimed, tUint, "display only"),
		col("output_tokens", Claimed, tUint, "display only"),
		col("cost_micros", Claimed, tUint, "display only"),
		col("latency_ms", Claimed, tUint, "display only"),
		col("created_at", Claimed, tTime, "display only"),
		col("trace", Claimed, tText, "display only"),
	}},
}

// MetaFields are meta.json's fields, listed in docs/verification.md with
// the tables.
var MetaFields = TableSpec{Name: "meta.json", Columns: []Column{
	col("exported_at", Claimed, tTime, "display only"),
	enum(col("format", Claimed, 0, "the tables' format"), CSV, JSONL),
	opt(col("since", Claimed, tTime, "rounds before it are left out and cannot be checked; the leaderboard is then not recomputed")),
	col("chain_id", Signed, tUint, "the EIP-712 domain every agent signature recovers under"),
	col("verifying_contract", Signed, tAddr, "the EIP-712 domain every agent signature recovers under"),
	col("log_public_key", Signed, tHex32, "the key given with `--log-key` (without it, the export's own key is trusted)"),
	col("bootstrap", Recomputed, tUint, "the analysis's bootstrap replicates, with which the leaderboard is recomputed"),
	col("seed", Recomputed, tUint, "the analysis's bootstrap seed, with which the leaderboard is recomputed"),
	col("methodology_version", Recomputed, tText, "the scoring method's version; this verifier's own"),
	col("methodology_digest", Recomputed, tHex32, "the SHA-256 of the scoring method's configuration, `min_forecasts` and `max_per_organisation` included"),
	col("min_forecasts", Recomputed, tUint, "the entry rule the leaderboard is recomputed with"),
	col("max_per_organisation", Recomputed, tUint, "the entry rule the leaderboard is recomputed with (0: no limit)"),
}}

// CheckpointFields are the parts of the checkpoint file (a C2SP
// checkpoint note, Options.Checkpoint), listed in docs/verification.md
// with the tables.
var CheckpointFields = TableSpec{Name: CheckpointFile, Columns: []Column{
	col("origin", Signed, tText, "its first line; the name of the log verifier key given with `--vkey` (without it, any name the log key signed)"),
	col("tree_size", Signed, tUint, "the number of exported log entries: the checkpoint is the export's signed head"),
	col("root_hash", Signed, tText, "base64; the root of the exported leaf hashes, which proves every entry included (an inclusion proof each), and the root at each known checkpoint's size is that checkpoint's (`--known-checkpoint`)"),
	col("signature", Signed, tText, "the log key's Ed25519 note signature: the key of `--vkey`, else of `--log-key` (else the export's own)"),
	opt(col("cosignatures", Signed, tText, "witnesses' cosignature/v1 lines; with `--witness-policy`, a quorum of its witnesses, and a policy witness's line that does not verify fails")),
}}

// Spec is one exported table's name and columns.
type Spec struct {
	Name    string
	Columns []string
}

// Specs are the tables every export writes, in order.
var Specs = func() []Spec {
	var out []Spec
	for _, t := range Contract {
		if t.Name != TracesSpec.Name {
			out = append(out, Spec{t.Name, t.Names()})
		}
	}
	return out
}()

// TracesSpec is the table Options.WithPrompts adds: one LLM agent's trace
// of one triggered round, its full record (prompt, tool calls and
// results, raw answers) as JSON in trace, secrets redacted.
var TracesSpec = Spec{"traces", contractOf("traces").Names()}

func contractOf(name string) TableSpec {
	for _, t := range Contract {
		if t.Name == name {
			return t
		}
	}
	panic("export: no table " + name)
}

// SpecOf returns the table called name.
func SpecOf(name string) (Spec, bool) {
	for _, s := range Specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// keyOf names a row by its key columns: "round_id=3 agent=0x…".
func keyOf(t TableSpec, cell func(string) string) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = k + "=" + cell(k)
	}
	return strings.Join(parts, " ")
}

// benchmarkSources are the names of arena.BenchmarkSources.
func benchmarkSources() []string {
	out := make([]string, len(arena.BenchmarkSources))
	for i, s := range arena.BenchmarkSources {
		out[i] = string(s)
	}
	return out
}
