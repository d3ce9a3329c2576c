// Package config loads Forecast Arena's settings. Every setting is declared
// once, in fields: its ARENA_* key, the command-line flag that may set it,
// what it means, and whether it is a secret. Precedence, highest first:
// command-line flags, ARENA_* environment variables, the config file
// (KEY=VALUE lines using the same ARENA_* names), then defaults.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/safefile"
)

// Options is the effective configuration. Each field's setting is declared
// in fields, which says its key, flag and meaning.
type Options struct {
	DB             string
	Addr           string
	AdminToken     string
	AdminTokenNext string
	// AllowShortAdminToken accepts admin tokens shorter than
	// MinAdminTokenBytes, for tests and demos on a private machine.
	AllowShortAdminToken bool
	GammaURL             string
	CLOBURL              string
	// The other venues: their API base URLs and Metaculus's token.
	KalshiURL      string
	ManifoldURL    string
	MetaculusURL   string
	MetaculusToken string
	// SyncVenues are the venues arena serve syncs, comma-separated (see
	// Venues).
	SyncVenues string
	SyncLimit  int
	SyncEvery  time.Duration
	NoSync     bool
	ChainID    int64
	Contract   string
	AgentsFile string
	// LogLevel is the logger's threshold; empty, the command's default
	// (see the setting's usage).
	LogLevel         string
	TradingPolicy    string
	ForecastAgents   string
	ForecastLeadTime time.Duration
	DataDir          string
	LogKey           string
	// NewLogRecord lets a start make the log key's missing record of the
	// trees it signed (see the setting's usage).
	NewLogRecord bool

	// The forecast track's scheduled rounds.
	NoRounds         bool
	RoundEvery       time.Duration
	RoundCommitIn    time.Duration
	RoundRevealDelay time.Duration
	RoundRevealWin   time.Duration
	RoundK           int
	RoundGrace       time.Duration
	RoundRetryEvery  time.Duration
	RoundRetryFor    time.Duration
	RoundRules       string

	OracleAgents           string
	OracleArch             string
	OracleAutoMinScore     float64
	OracleRequireUnanimous bool

	RateIPPerMin         int
	RateAgentPerMin      int
	TrustedProxies       string
	RateIPv6Prefix       int
	MaxAgentsPerRound    int
	MaxNewAgentsPerHour  int
	ProfileUpdatesPerDay int

	LeaderboardMinForecasts       int
	LeaderboardMaxPerOrganisation int

	// The chain `arena serve` mirrors the forecast track to, when ChainRPC
	// and ChainArena are set.
	ChainRPC            string
	ChainKey            string
	ChainKeyFile        string
	ChainArena          string
	ChainReportOutcomes bool
	ChainConfirmations  int

	// The log's transparency: the arena's public URL (ARENA_PUBLIC_URL),
	// from which the checkpoints' origin is derived unless ARENA_LOG_ORIGIN
	// names one; how soon a checkpoint follows an append
	// (ARENA_CHECKPOINT_INTERVAL); the witness policy whose witnesses serve
	// asks to cosign (ARENA_WITNESS_POLICY, a C2SP tlog-policy file); and
	// the published exports: where they are written (ARENA_EXPORT_DIR,
	// default DATA_DIR/exports) and how often (ARENA_EXPORT_EVERY, 0: never).
	PublicURL          string
	LogOrigin          string
	CheckpointInterval time.Duration
	WitnessPolicy      string
	ExportDir          string
	ExportEvery        time.Duration
	// ExportKeep and ExportKeepDays are the retention of the published
	// exports: the latest kept, and the last of each day for this many
	// days (see export.Retention).
	ExportKeep     int
	ExportKeepDays int

	// ExaAPIKey is the key of the Exa web-search API, the "exa" evidence
	// and search provider.
	ExaAPIKey string
}

// Defaults returns the built-in configuration.
func Defaults() Options {
	return Options{
		DB:            "sqlite:arena.db",
		Addr:          "127.0.0.1:8080",
		GammaURL:      "https://gamma-api.polymarket.com",
		CLOBURL:       "https://clob.polymarket.com",
		KalshiURL:     "https://api.elections.kalshi.com/trade-api/v2",
		ManifoldURL:   "https://api.manifold.markets/v0",
		MetaculusURL:  "https://www.metaculus.com/api",
		SyncVenues:    arena.SourcePolymarket,
		SyncLimit:     500,
		SyncEvery:     5 * time.Minute,
		Contract:      "0x0000000000000000000000000000000000000000",
		TradingPolicy: "refund",

		ForecastLeadTime: 10 * time.Minute,
		RoundEvery:       24 * time.Hour,
		RoundCommitIn:    time.Hour,
		RoundRevealDelay: time.Hour,
		RoundRevealWin:   time.Hour,
		RoundK:           7,
		RoundGrace:       24 * time.Hour,
		RoundRetryEvery:  30 * time.Second,
		RoundRetryFor:    15 * time.Minute,

		OracleArch:             "majority",
		OracleAutoMinScore:     1.8,
		OracleRequireUnanimous: true,

		RateIPPerMin:         6000,
		RateAgentPerMin:      600,
		RateIPv6Prefix:       64,
		MaxAgentsPerRound:    5000,
		MaxNewAgentsPerHour:  1000,
		ProfileUpdatesPerDay: 4,
		ChainConfirmations:   1,

		CheckpointInterval: 10 * time.Second,
		ExportKeep:         100,
		ExportKeepDays:     365,

		LeaderboardMinForecasts: 50,
	}
}

// field is one setting.
type field struct {
	key   string
	flag  string // the command-line flag that sets it ("": none)
	usage string
	// alias is an environment variable read when key is not set: the
	// conventional name a provider gives its API key.
	alias  string
	secret bool
	isBool bool
	// want says what the value must be, for errors, which never show the
	// value: it may be a secret set under the wrong key.
	want string
	get  func(*Options) string
	set  func(*Options, string) error
}

// flagged adds the flag that sets the field.
func (f field) flagged(name string) field { f.flag = name; return f }

// hidden marks the field a secret: shown masked.
func (f field) hidden() field { f.secret = true; return f }

func str(key, usage string, p func(*Options) *string) field {
	return field{key: key, usage: usage,
		get: func(o *Options) string { return *p(o) },
		set: func(o *Options, v string) error { *p(o) = v; return nil }}
}

// parsed makes a field of a parsed type from its parser and printer.
func parsed[T any](key, usage, want string, p func(*Options) *T, parse func(string) (T, error), format func(T) string) field {
	return field{key: key, usage: usage, want: want,
		get: func(o *Options) string { return format(*p(o)) },
		set: func(o *Options, v string) error {
			x, err := parse(v)
			if err != nil {
				return err
			}
			*p(o) = x
			return nil
		}}
}

func integer(key, usage string, p func(*Options) *int) field {
	return parsed(key, usage, "an integer", p, strconv.Atoi, strconv.Itoa)
}

func boolean(key, usage string, p func(*Options) *bool) field {
	f := parsed(key, usage, "true or false", p, strconv.ParseBool, strconv.FormatBool)
	f.isBool = true
	return f
}

func duration(key, usage string, p func(*Options) *time.Duration) field {
	return parsed(key, usage, "a duration such as 90s or 5m", p, time.ParseDuration, time.Duration.String)
}

// fields declares every setting, in the order `arena config` and the
// operations guide group them.
var fields = []field{
	str("ARENA_DB", "database: sqlite:PATH or postgres://…", func(o *Options) *string { return &o.DB }).flagged("db"),
	str("ARENA_ADDR", "HTTP listen address of arena serve", func(o *Options) *string { return &o.Addr }).flagged("addr"),
	str("ARENA_ADMIN_TOKEN", "bearer token for the admin endpoints", func(o *Options) *string { return &o.AdminToken }).flagged("admin-token").hidden(),
	str("ARENA_ADMIN_TOKEN_NEXT", "a second accepted admin token, for rotation without downtime", func(o *Options) *string { return &o.AdminTokenNext }).
		flagged("admin-token-next").hidden(),
	boolean("ARENA_ALLOW_SHORT_ADMIN_TOKEN", "accept admin tokens shorter than 32 bytes (tests and demos on a private machine)",
		func(o *Options) *bool { return &o.AllowShortAdminToken }).flagged("allow-short-admin-token"),
	str("ARENA_LOG_LEVEL", "debug, info, warn or error (default: info for arena serve; warn for the other commands, info with -v)",
		func(o *Options) *string { return &o.LogLevel }).flagged("log-level"),
	str("ARENA_DATA_DIR", "hosted agents' keys, state and call cache, the oracle's cache and the log key (default: the SQLite database's directory)",
		func(o *Options) *string { return &o.DataDir }),
	str("ARENA_LOG_KEY", "ed25519 key file of the tamper-evident log, created on first start and bound to the database (default: in the data directory, named after a SQLite database as DB.log.key, log.key for PostgreSQL; without a data directory in the user configuration directory)",
		func(o *Options) *string { return &o.LogKey }).flagged("log-key"),
	boolean("ARENA_NEW_LOG_RECORD", "make the log key's missing record of the trees it signed (KEY.signed) from this database's latest checkpoint, once, knowingly: only when the key never signed beyond it (refused while a record exists)",
		func(o *Options) *bool { return &o.NewLogRecord }).flagged("new-log-record"),

	str("ARENA_GAMMA_URL", "Polymarket Gamma API base URL", func(o *Options) *string { return &o.GammaURL }).flagged("gamma-url"),
	str("ARENA_CLOB_URL", "Polymarket CLOB API base URL", func(o *Options) *string { return &o.CLOBURL }).flagged("clob-url"),
	str("ARENA_KALSHI_URL", "Kalshi trade API v2 base URL", func(o *Options) *string { return &o.KalshiURL }).flagged("kalshi-url"),
	str("ARENA_MANIFOLD_URL", "Manifold API base URL", func(o *Options) *string { return &o.ManifoldURL }).flagged("manifold-url"),
	str("ARENA_METACULUS_URL", "Metaculus API base URL", func(o *Options) *string { return &o.MetaculusURL }).flagged("metaculus-url"),
	str("ARENA_METACULUS_TOKEN", "token of the Metaculus API, which Metaculus requires (an account's API token; METACULUS_TOKEN is read too)",
		func(o *Options) *string { return &o.MetaculusToken }).hidden().withAlias("METACULUS_TOKEN"),
	str("ARENA_SYNC_VENUES", "venues arena serve syncs, comma-separated: polymarket, kalshi, manifold, metaculus",
		func(o *Options) *string { return &o.SyncVenues }).flagged("sync-venues"),
	integer("ARENA_SYNC_LIMIT", "markets kept per sync of a venue, the most traded first", func(o *Options) *int { return &o.SyncLimit }),
	duration("ARENA_SYNC_EVERY", "sync interval of each venue arena serve syncs", func(o *Options) *time.Duration { return &o.SyncEvery }).flagged("sync-every"),
	boolean("ARENA_NO_SYNC", "arena serve syncs no venue (offline)", func(o *Options) *bool { return &o.NoSync }).flagged("no-sync"),

	boolean("ARENA_NO_ROUNDS", "do not create forecast rounds on a schedule (create them with the admin API or 'arena round create')",
		func(o *Options) *bool { return &o.NoRounds }).flagged("no-rounds"),
	duration("ARENA_ROUND_EVERY", "forecast round creation interval", func(o *Options) *time.Duration { return &o.RoundEvery }).flagged("round-every"),
	duration("ARENA_ROUND_COMMIT_IN", "commit phase of a scheduled round", func(o *Options) *time.Duration { return &o.RoundCommitIn }).flagged("commit-in"),
	duration("ARENA_ROUND_REVEAL_DELAY", "from a round's commit deadline to its reveal start", func(o *Options) *time.Duration { return &o.RoundRevealDelay }).
		flagged("reveal-delay"),
	duration("ARENA_ROUND_REVEAL_WINDOW", "length of a round's reveal phase", func(o *Options) *time.Duration { return &o.RoundRevealWin }).flagged("reveal-window"),
	integer("ARENA_ROUND_K", "markets per scheduled round", func(o *Options) *int { return &o.RoundK }).flagged("round-k"),
	duration("ARENA_ROUND_GRACE", "after the reveal deadline, score a round with whatever has resolved", func(o *Options) *time.Duration { return &o.RoundGrace }).
		flagged("grace"),
	duration("ARENA_ROUND_RETRY_EVERY", "while too few markets are eligible (before the first sync), retry round creation this often, for up to ARENA_ROUND_RETRY_FOR",
		func(o *Options) *time.Duration { return &o.RoundRetryEvery }).flagged("round-retry-every"),
	duration("ARENA_ROUND_RETRY_FOR", "how long round creation is retried while too few markets are eligible (0: not retried)",
		func(o *Options) *time.Duration { return &o.RoundRetryFor }).flagged("round-retry-for"),
	str("ARENA_ROUND_RULES", "file holding the complete market selection rules as JSON (default: the built-in rules: liquid markets of the venues ARENA_SYNC_VENUES names, an equal share of each round for each, and simulated ones when the database holds a simulated world)",
		func(o *Options) *string { return &o.RoundRules }).flagged("round-rules"),
	parsed("ARENA_CHAIN_ID", "EIP-712 domain chain id (0 without a chain)", "an integer", func(o *Options) *int64 { return &o.ChainID },
		func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) },
		func(n int64) string { return strconv.FormatInt(n, 10) }),
	str("ARENA_CONTRACT", "EIP-712 verifying contract (zero: this deployment's own identifier, or the mirrored chain's PredictionArena)",
		func(o *Options) *string { return &o.Contract }),
	integer("ARENA_MAX_AGENTS_PER_ROUND", "agents a forecast round admits (0: no cap)", func(o *Options) *int { return &o.MaxAgentsPerRound }),
	integer("ARENA_MAX_NEW_AGENTS_PER_HOUR", "agents seen for the first time in an hour (0: no cap)", func(o *Options) *int { return &o.MaxNewAgentsPerHour }),
	integer("ARENA_PROFILE_UPDATES_PER_DAY", "signed profile updates an agent may make a day: that many at once, then one every 24 h / that many (0: no cap)",
		func(o *Options) *int { return &o.ProfileUpdatesPerDay }),
	integer("ARENA_LEADERBOARD_MIN_FORECASTS", "resolved forecasts before an agent is ranked (below it, preliminary)",
		func(o *Options) *int { return &o.LeaderboardMinForecasts }),
	integer("ARENA_LEADERBOARD_MAX_PER_ORGANISATION", "agents the leaderboard shows per organisation (0: no limit)",
		func(o *Options) *int { return &o.LeaderboardMaxPerOrganisation }),
	str("ARENA_FORECAST_AGENTS", "model registry of the LLM agents arena serve hosts in the forecast track", func(o *Options) *string { return &o.ForecastAgents }),
	duration("ARENA_FORECAST_LEAD_TIME", "hosted LLM forecast agents forecast this long before a round's commit deadline",
		func(o *Options) *time.Duration { return &o.ForecastLeadTime }).flagged("forecast-lead-time"),

	str("ARENA_AGENTS", "LLM model registry of the trading track (none: no trading cohorts)", func(o *Options) *string { return &o.AgentsFile }).flagged("agents"),
	str("ARENA_TRADING_POLICY", "ambiguous markets in the trading track: refund, defer or oracle", func(o *Options) *string { return &o.TradingPolicy }),

	str("ARENA_ORACLE_AGENTS", "model registry of the oracle's resolver panel; set, arena serve runs the oracle hourly", func(o *Options) *string { return &o.OracleAgents }),
	str("ARENA_ORACLE_ARCH", "the oracle's architecture: majority, weighted, deliberative or single:AGENT_ID", func(o *Options) *string { return &o.OracleArch }),
	parsed("ARENA_ORACLE_AUTO_MIN_SCORE", "composite score the oracle needs to resolve without a human (0..2)", "a number",
		func(o *Options) *float64 { return &o.OracleAutoMinScore },
		func(v string) (float64, error) { return strconv.ParseFloat(v, 64) },
		func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }),
	boolean("ARENA_ORACLE_REQUIRE_UNANIMOUS", "the oracle resolves without a human only when its panel is unanimous", func(o *Options) *bool { return &o.OracleRequireUnanimous }),
	str("ARENA_EXA_API_KEY", "key of the Exa web-search API, the exa evidence and search provider (EXA_API_KEY, Exa's own name for it, is read too)",
		func(o *Options) *string { return &o.ExaAPIKey }).hidden().withAlias("EXA_API_KEY"),

	integer("ARENA_RATE_IP_PER_MIN", "requests a minute per client address, that many at once (0: no limit)", func(o *Options) *int { return &o.RateIPPerMin }),
	integer("ARENA_RATE_AGENT_PER_MIN", "requests a minute per agent, counting the commits and reveals it signed (0: no limit)", func(o *Options) *int { return &o.RateAgentPerMin }),
	str("ARENA_TRUSTED_PROXIES", "reverse proxies (addresses or CIDR prefixes, comma-separated) whose X-Forwarded-For names the client", func(o *Options) *string { return &o.TrustedProxies }),
	integer("ARENA_RATE_IPV6_PREFIX", "leading bits of an IPv6 client's address that name its rate-limit bucket (1–128)", func(o *Options) *int { return &o.RateIPv6Prefix }),

	str("ARENA_CHAIN_RPC", "JSON-RPC endpoint of the chain the forecast track is mirrored to", func(o *Options) *string { return &o.ChainRPC }).flagged("rpc"),
	str("ARENA_CHAIN_KEY", "the relayer's, curator's and deployer's key: hex, or a key file", func(o *Options) *string { return &o.ChainKey }).flagged("key").hidden(),
	str("ARENA_CHAIN_KEY_FILE", "the relayer's and curator's key file (instead of ARENA_CHAIN_KEY)", func(o *Options) *string { return &o.ChainKeyFile }),
	str("ARENA_CHAIN_ARENA", "PredictionArena address (the RoundManager and conditional tokens are read from it)", func(o *Options) *string { return &o.ChainArena }).
		flagged("arena"),
	boolean("ARENA_CHAIN_REPORT_OUTCOMES", "report frozen outcomes to a MockConditionalTokens (local chains)", func(o *Options) *bool { return &o.ChainReportOutcomes }),
	integer("ARENA_CHAIN_CONFIRMATIONS", "confirmations a relayed transaction needs", func(o *Options) *int { return &o.ChainConfirmations }),

	str("ARENA_PUBLIC_URL", "the arena's public URL (https://host/path): the origin of its log checkpoints is derived from it", func(o *Options) *string { return &o.PublicURL }).
		flagged("public-url"),
	str("ARENA_LOG_ORIGIN", "the origin line of the log's checkpoints (default: from ARENA_PUBLIC_URL, else the origin published under before, else forecast-arena/DEPLOYMENT/log)", func(o *Options) *string { return &o.LogOrigin }),
	duration("ARENA_CHECKPOINT_INTERVAL", "at most this long after an append, the log publishes a new checkpoint", func(o *Options) *time.Duration { return &o.CheckpointInterval }),
	str("ARENA_WITNESS_POLICY", "C2SP witness policy file: the witnesses serve asks to cosign each checkpoint", func(o *Options) *string { return &o.WitnessPolicy }).
		flagged("witness-policy"),
	str("ARENA_EXPORT_DIR", "where serve writes a file copy of the latest published export (default: DATA_DIR/exports); the exports are served from the database at /exports/", func(o *Options) *string { return &o.ExportDir }),
	duration("ARENA_EXPORT_EVERY", "how often serve copies the latest published export into ARENA_EXPORT_DIR (0: never); the exports are published in the database whatever it is", func(o *Options) *time.Duration { return &o.ExportEvery }),
	integer("ARENA_EXPORT_KEEP", "the latest published exports serve keeps; older ones go unless ARENA_EXPORT_KEEP_DAYS keeps them (pruned hourly, and by 'arena export prune')", func(o *Options) *int { return &o.ExportKeep }).
		flagged("keep"),
	integer("ARENA_EXPORT_KEEP_DAYS", "the last published export of each UTC day is kept this many days (0: none)", func(o *Options) *int { return &o.ExportKeepDays }).
		flagged("keep-days"),
}

// withAlias names the environment variable read when key is not set.
func (f field) withAlias(name string) field { f.alias = name; return f }

// Bounds of a config file, which holds a few dozen short lines.
const (
	MaxFileBytes = 1 << 20
	MaxLineBytes = 64 << 10
)

// MinAdminTokenBytes is the shortest admin token accepted without
// AllowShortAdminToken: the token is all that guards the admin endpoints,
// and a short one can be guessed.
const MinAdminTokenBytes = 32

// FileEnv names the config file when --config does not.
const FileEnv = "ARENA_CONFIG"

// flagValue is a bound flag: it parses as its setting does, and Load
// applies it when it was set on the command line.
type flagValue struct {
	f *field
	v string
}

func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	return v.v
}

func (v *flagValue) Set(s string) error {
	var o Options
	if err := v.f.set(&o, s); err != nil {
		return fmt.Errorf("want %s", v.f.want)
	}
	v.v = s
	return nil
}

// IsBoolFlag lets a boolean setting's flag stand alone (--no-sync).
func (v *flagValue) IsBoolFlag() bool { return v != nil && v.f != nil && v.f.isBool }

// Bind defines on fs the --config flag and the flags of the settings named
// by keys, which Load then applies when they are set. A key without a flag
// is a programming error.
func Bind(fs *flag.FlagSet, keys ...string) {
	if fs.Lookup("config") == nil {
		fs.String("config", "", "config file of ARENA_*=VALUE lines (default "+FileEnv+")")
	}
	defaults := Defaults()
	for _, k := range keys {
		f := lookup(k)
		if f == nil || f.flag == "" {
			panic("config: Bind: " + k + " is not a setting with a flag")
		}
		v := &flagValue{f: f, v: f.get(&defaults)}
		if v.v == "false" || v.v == "0" || v.v == "0s" {
			v.v = "" // a zero default goes unsaid in the usage
		}
		fs.Var(v, f.flag, f.key+": "+f.usage)
	}
}

// Flagged lists the keys of every setting that has a flag.
func Flagged() []string {
	var keys []string
	for _, f := range fields {
		if f.flag != "" {
			keys = append(keys, f.key)
		}
	}
	return keys
}

func lookup(key string) *field {
	for i := range fields {
		if fields[i].key == key {
			return &fields[i]
		}
	}
	return nil
}

// File is the config file a command names: its --config flag (see Bind)
// when set, else ARENA_CONFIG in environ.
func File(fs *flag.FlagSet, environ []string) string {
	if fs != nil {
		if f := fs.Lookup("config"); f != nil && f.Value.String() != "" {
			return f.Value.String()
		}
	}
	file := ""
	for _, e := range environ {
		if v, ok := strings.CutPrefix(e, FileEnv+"="); ok {
			file = v
		}
	}
	return file
}

// Load returns the validated configuration: the defaults, overlaid by the
// file at path (if path is non-empty), then by the environment, then by
// the flags Bind defined on fs that were set (fs may be nil).
func Load(path string, environ []string, fs *flag.FlagSet) (Options, error) {
	o := Defaults()
	if path != "" {
		kv, lines, err := readFile(path)
		if err != nil {
			return o, err
		}
		if err := o.apply(kv, func(key string) string { return fmt.Sprintf("%s:%d: %s", path, lines[key], key) }); err != nil {
			return o, err
		}
	}
	all := map[string]string{}
	for _, e := range environ {
		if k, v, ok := strings.Cut(e, "="); ok {
			all[k] = v
		}
	}
	env, origin := map[string]string{}, map[string]string{}
	for _, f := range fields {
		if v, ok := all[f.key]; ok {
			env[f.key], origin[f.key] = v, f.key
		} else if v, ok := all[f.alias]; ok && f.alias != "" {
			env[f.key], origin[f.key] = v, f.alias
		}
	}
	if err := o.apply(env, func(key string) string { return "environment variable " + origin[key] }); err != nil {
		return o, err
	}
	if fs != nil {
		fs.Visit(func(fl *flag.Flag) {
			if v, ok := fl.Value.(*flagValue); ok {
				v.f.set(&o, v.v) // parsed when set
			}
		})
	}
	return o, o.Validate()
}

// apply sets the fields kv names; where names a key's origin in errors.
func (o *Options) apply(kv map[string]string, where func(key string) string) error {
	for _, f := range fields {
		if v, ok := kv[f.key]; ok {
			if err := f.set(o, v); err != nil {
				return fmt.Errorf("config: %s: want %s (the value is not shown)", where(f.key), f.want)
			}
		}
	}
	return nil
}

// readFile reads KEY=VALUE lines and returns the values and the line of
// each key. Its errors name the line and at most the key, never the value.
func readFile(path string) (kv map[string]string, lines map[string]int, err error) {
	data, err := safefile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	known := map[string]bool{}
	for _, fl := range fields {
		known[fl.key] = true
	}
	kv, lines = map[string]string{}, map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if len(line) > MaxLineBytes {
			return nil, nil, fmt.Errorf("config: %s:%d: longer than %d KiB, the limit of a line", path, n, MaxLineBytes>>10)
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !known[k] {
			return nil, nil, fmt.Errorf("config: %s:%d: %s", path, n, lineProblem(line, known))
		}
		kv[k], lines[k] = strings.Trim(strings.TrimSpace(v), `"`), n
	}
	return kv, lines, nil
}

// keyName matches what may be shown of a bad line: an ARENA_* name.
var keyName = regexp.MustCompile(`^ARENA_[A-Z0-9_]{1,64}$`)

// lineProblem says what is wrong with a line that is not a known
// KEY=VALUE, naming the key when it is one and never showing the rest.
func lineProblem(line string, known map[string]bool) string {
	words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' || r == ':' })
	export := len(words) > 1 && words[0] == "export"
	if export {
		words = words[1:]
	}
	switch {
	case len(words) == 0 || !keyName.MatchString(words[0]):
		return "want ARENA_KEY=VALUE (the line is not shown: it may hold a secret)"
	case export:
		return fmt.Sprintf("%s: write KEY=VALUE, without 'export'", words[0])
	case !known[words[0]]:
		return fmt.Sprintf("unknown key %s (run 'arena config' for the known keys)", words[0])
	}
	return fmt.Sprintf("%s: want %s=VALUE", words[0], words[0])
}

// TrustedProxyPrefixes parses TrustedProxies: a bare address is a prefix
// of its full length.
func (o *Options) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	var ps []netip.Prefix
	for _, f := range strings.Split(o.TrustedProxies, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: want an address or CIDR prefix (10.0.0.0/8)", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}

// DataDirectory is where the arena keeps files beside its database:
// ARENA_DATA_DIR, else the SQLite database's directory; a PostgreSQL
// database without ARENA_DATA_DIR has none.
func (o *Options) DataDirectory() (string, bool) {
	if o.DataDir != "" {
		return o.DataDir, true
	}
	if p, ok := strings.CutPrefix(o.DB, "sqlite:"); ok {
		return filepath.Dir(p), true
	}
	return "", false
}

// Venues are the venues of ARENA_SYNC_VENUES, in its order: each one of
// arena.Venues, once, and Metaculus only with its token. It says nothing
// of ARENA_NO_SYNC.
func (o *Options) Venues() ([]string, error) {
	var out []string
	for _, v := range strings.Split(o.SyncVenues, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case v == "":
			continue
		case !arena.IsVenue(v):
			return nil, fmt.Errorf("sync venue %q: want %s", v, strings.Join(arena.Venues, ", "))
		case slices.Contains(out, v):
			return nil, fmt.Errorf("sync venue %q named twice", v)
		case v == arena.SourceMetaculus && o.MetaculusToken == "":
			return nil, fmt.Errorf("sync venue metaculus: Metaculus answers only an account's API token, and none is set: set ARENA_METACULUS_TOKEN")
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sync venues %q: name at least one of %s (ARENA_NO_SYNC syncs none)", o.SyncVenues, strings.Join(arena.Venues, ", "))
	}
	return out, nil
}

// Validate checks the effective configuration.
func (o *Options) Validate() error {
	var errs []error
	if !strings.HasPrefix(o.DB, "sqlite:") && !strings.HasPrefix(o.DB, "postgres://") && !strings.HasPrefix(o.DB, "postgresql://") {
		errs = append(errs, fmt.Errorf("db %q: want sqlite:PATH or postgres://…", redact.String(o.DB)))
	}
	if o.SyncLimit <= 0 {
		errs = append(errs, fmt.Errorf("sync limit %d: must be positive", o.SyncLimit))
	}
	if _, err := o.Venues(); err != nil {
		errs = append(errs, err)
	}
	if o.RateIPPerMin < 0 || o.RateAgentPerMin < 0 {
		errs = append(errs, fmt.Errorf("rate limits %d/min per address, %d/min per agent: must not be negative (0 turns a limit off)", o.RateIPPerMin, o.RateAgentPerMin))
	}
	if _, err := o.TrustedProxyPrefixes(); err != nil {
		errs = append(errs, err)
	}
	if o.RateIPv6Prefix < 1 || o.RateIPv6Prefix > 128 {
		errs = append(errs, fmt.Errorf("IPv6 rate-limit prefix /%d: want 1 to 128 bits (64: a bucket per /64)", o.RateIPv6Prefix))
	}
	if o.LeaderboardMinForecasts < 0 || o.LeaderboardMaxPerOrganisation < 0 {
		errs = append(errs, fmt.Errorf("leaderboard entry rules %d resolved forecasts, %d agents per organisation: must not be negative (0 turns a rule off)",
			o.LeaderboardMinForecasts, o.LeaderboardMaxPerOrganisation))
	}
	if o.MaxAgentsPerRound < 0 || o.MaxNewAgentsPerHour < 0 || o.ProfileUpdatesPerDay < 0 {
		errs = append(errs, fmt.Errorf("admission caps %d agents a round, %d new agents an hour, %d profile updates a day: must not be negative (0 turns a cap off)",
			o.MaxAgentsPerRound, o.MaxNewAgentsPerHour, o.ProfileUpdatesPerDay))
	}
	if o.SyncEvery <= 0 {
		errs = append(errs, fmt.Errorf("sync interval %s: must be positive", o.SyncEvery))
	}
	if o.RoundRetryFor < 0 {
		errs = append(errs, fmt.Errorf("round creation retried for %s (--round-retry-for): must not be negative (0: not retried)", o.RoundRetryFor))
	}
	if o.RoundK < 1 || o.RoundGrace <= 0 {
		errs = append(errs, fmt.Errorf("round size %d (--round-k) and grace %s (--grace): must be positive", o.RoundK, o.RoundGrace))
	}
	switch o.LogLevel {
	case "", "debug", "info", "warn", "error": // "": the command's default
	default:
		errs = append(errs, fmt.Errorf("log level %q: want debug|info|warn|error", o.LogLevel))
	}
	switch o.TradingPolicy {
	case "refund", "defer", "oracle":
	default:
		errs = append(errs, fmt.Errorf("trading policy %q: want refund|defer|oracle", o.TradingPolicy))
	}
	if !(o.OracleAutoMinScore >= 0 && o.OracleAutoMinScore <= 2) {
		errs = append(errs, fmt.Errorf("oracle auto_min_score %v: want 0..2", o.OracleAutoMinScore))
	}
	for _, t := range []struct{ name, token string }{{"admin token", o.AdminToken}, {"next admin token", o.AdminTokenNext}} {
		if t.token != "" && len(t.token) < MinAdminTokenBytes && !o.AllowShortAdminToken {
			errs = append(errs, fmt.Errorf("the %s is %d bytes long, want at least %d (make one with 'openssl rand -hex 32'; --allow-short-admin-token or ARENA_ALLOW_SHORT_ADMIN_TOKEN=true accepts a short one)",
				t.name, len(t.token), MinAdminTokenBytes))
		}
		// A bearer token is sent in a header: a space or control character
		// could never match, leaving the admin API unusable.
		if strings.IndexFunc(t.token, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
			errs = append(errs, fmt.Errorf("the %s holds a space, a control character or a non-ASCII character: use printable ASCII (e.g. 'openssl rand -hex 32')", t.name))
		}
	}
	if o.CheckpointInterval < time.Second {
		errs = append(errs, fmt.Errorf("checkpoint interval %s: must be at least 1s", o.CheckpointInterval))
	}
	if o.ExportKeep < 1 {
		errs = append(errs, fmt.Errorf("ARENA_EXPORT_KEEP %d: want at least 1 (the latest export is always kept)", o.ExportKeep))
	}
	if o.ExportKeepDays < 0 {
		errs = append(errs, fmt.Errorf("ARENA_EXPORT_KEEP_DAYS %d: want 0 or more", o.ExportKeepDays))
	}
	if o.ExportEvery < 0 || o.ExportEvery > 0 && o.ExportEvery < time.Minute {
		errs = append(errs, fmt.Errorf("export interval %s: want 0 (never) or at least 1m", o.ExportEvery))
	}
	if o.PublicURL != "" {
		if u, err := url.Parse(o.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("public URL %q: want http(s)://host[/path]", redact.String(o.PublicURL)))
		}
	}
	if o.ChainConfirmations < 1 {
		errs = append(errs, fmt.Errorf("chain confirmations %d: must be at least 1", o.ChainConfirmations))
	}
	if o.ChainArena != "" && !isHexAddress(o.ChainArena) {
		errs = append(errs, fmt.Errorf("chain arena %q: want a 0x-prefixed 20-byte address", o.ChainArena))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// Lines renders the configuration as sorted KEY=VALUE lines with secrets
// masked and every value passed through redact.String (database passwords,
// keys in URLs).
func (o *Options) Lines() []string {
	var out []string
	for _, f := range fields {
		v := f.get(o)
		if f.secret && v != "" {
			v = redact.Mask
		}
		out = append(out, f.key+"="+redact.String(v))
	}
	sort.Strings(out)
	return out
}

// isHexAddress reports whether s is a 0x-prefixed 20-byte hex address.
func isHexAddress(s string) bool {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 40 {
		return false
	}
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
