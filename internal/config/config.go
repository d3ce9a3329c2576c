// Package config loads Forecast Arena's settings. Precedence, highest first:
// command-line flags, ARENA_* environment variables, the config file
// (KEY=VALUE lines using the same ARENA_* names), then defaults.
package config

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena/internal/redact"
)

// Options is the effective configuration.
type Options struct {
	DB         string // ARENA_DB: sqlite:PATH or postgres://…
	Addr       string // ARENA_ADDR: HTTP listen address
	AdminToken string // ARENA_ADMIN_TOKEN: bearer token for admin endpoints (secret)
	// AdminTokenNext (ARENA_ADMIN_TOKEN_NEXT, secret) is accepted as well
	// as AdminToken, so the token can be rotated without downtime.
	AdminTokenNext string
	GammaURL       string        // ARENA_GAMMA_URL
	CLOBURL        string        // ARENA_CLOB_URL
	SyncLimit      int           // ARENA_SYNC_LIMIT: markets kept per Polymarket sync
	SyncEvery      time.Duration // ARENA_SYNC_EVERY
	ChainID        int64         // ARENA_CHAIN_ID: EIP-712 domain chain id (0 without a chain)
	Contract       string        // ARENA_CONTRACT: EIP-712 verifying contract
	AgentsFile     string        // ARENA_AGENTS: LLM model registry file
	LogLevel       string        // ARENA_LOG_LEVEL: debug|info|warn|error
	TradingPolicy  string        // ARENA_TRADING_POLICY: refund|defer|oracle, for ambiguous markets
	// AllowShortAdminToken (ARENA_ALLOW_SHORT_ADMIN_TOKEN,
	// --allow-short-admin-token) accepts admin tokens shorter than
	// MinAdminTokenBytes, for tests and demos on a private machine.
	AllowShortAdminToken bool
	// ForecastAgents is the model registry of the LLM agents `arena serve`
	// hosts in the forecast track (ARENA_FORECAST_AGENTS).
	ForecastAgents string
	// DataDir holds the hosted agents' keystore, state and call cache
	// (ARENA_DATA_DIR; default: the SQLite database's directory).
	DataDir string
	// OracleAgents is the model registry of the oracle's resolver panel
	// (ARENA_ORACLE_AGENTS); set, `arena serve` runs the oracle hourly.
	OracleAgents string
	// The oracle's policy: architecture (ARENA_ORACLE_ARCH: majority,
	// weighted, deliberative or single:<agent id>), the composite score
	// needed to resolve without a human (ARENA_ORACLE_AUTO_MIN_SCORE) and
	// whether the panel must be unanimous (ARENA_ORACLE_REQUIRE_UNANIMOUS).
	OracleArch             string
	OracleAutoMinScore     float64
	OracleRequireUnanimous bool
	// Abuse limits of `arena serve`, token buckets shared by replicas on
	// one database: requests a minute per client address
	// (ARENA_RATE_IP_PER_MIN) and per agent, counting the commits and
	// reveals the agent signed (ARENA_RATE_AGENT_PER_MIN); each allows
	// that many at once. 0 turns a limit off.
	RateIPPerMin    int
	RateAgentPerMin int
	// TrustedProxies (ARENA_TRUSTED_PROXIES) lists the reverse proxies,
	// comma-separated addresses or CIDR prefixes, whose X-Forwarded-For
	// names the client for the per-address limit; empty: none.
	TrustedProxies string
	// RateIPv6Prefix (ARENA_RATE_IPV6_PREFIX, 1–128, default 64) is how
	// many leading bits of an IPv6 client's address name its per-address
	// bucket: a host commonly holds a whole /64.
	RateIPv6Prefix int
	// Admission caps of the forecast track: agents a round admits
	// (ARENA_MAX_AGENTS_PER_ROUND) and agents seen for the first time in
	// an hour (ARENA_MAX_NEW_AGENTS_PER_HOUR); 0 turns a cap off.
	MaxAgentsPerRound   int
	MaxNewAgentsPerHour int
	// The leaderboard's entry rules: resolved forecasts before an agent
	// is ranked (ARENA_LEADERBOARD_MIN_FORECASTS; below it, preliminary)
	// and agents shown per organisation (ARENA_LEADERBOARD_MAX_PER_ORGANISATION;
	// 0: no limit).
	LeaderboardMinForecasts       int
	LeaderboardMaxPerOrganisation int
	// The chain `arena serve` mirrors the forecast track to, when ChainRPC
	// and ChainArena are set: the node (ARENA_CHAIN_RPC), the relayer's and
	// curator's key, hex (ARENA_CHAIN_KEY, secret) or a key file
	// (ARENA_CHAIN_KEY_FILE), the PredictionArena (ARENA_CHAIN_ARENA; the
	// RoundManager and conditional tokens are read from it), whether to
	// report frozen outcomes to a MockConditionalTokens
	// (ARENA_CHAIN_REPORT_OUTCOMES, local chains) and the confirmations a
	// transaction needs (ARENA_CHAIN_CONFIRMATIONS).
	ChainRPC            string
	ChainKey            string
	ChainKeyFile        string
	ChainArena          string
	ChainReportOutcomes bool
	ChainConfirmations  int
}

// Defaults returns the built-in configuration.
func Defaults() Options {
	return Options{
		DB:            "sqlite:arena.db",
		Addr:          "127.0.0.1:8080",
		GammaURL:      "https://gamma-api.polymarket.com",
		CLOBURL:       "https://clob.polymarket.com",
		SyncLimit:     500,
		SyncEvery:     5 * time.Minute,
		Contract:      "0x0000000000000000000000000000000000000000",
		LogLevel:      "info",
		TradingPolicy: "refund",

		OracleArch:             "majority",
		OracleAutoMinScore:     1.8,
		OracleRequireUnanimous: true,

		RateIPPerMin:        6000,
		RateAgentPerMin:     600,
		RateIPv6Prefix:      64,
		MaxAgentsPerRound:   5000,
		MaxNewAgentsPerHour: 1000,
		ChainConfirmations:  1,

		LeaderboardMinForecasts: 50,
	}
}

type field struct {
	key    string
	secret bool
	// want says what the value must be, for errors, which never show the
	// value: it may be a secret set under the wrong key.
	want string
	get  func(*Options) string
	set  func(*Options, string) error
}

func strField(key string, secret bool, p func(*Options) *string) field {
	return field{key, secret, "",
		func(o *Options) string { return *p(o) },
		func(o *Options, v string) error { *p(o) = v; return nil }}
}

// parsed makes a field of a parsed type from its parser and printer.
func parsed[T any](key, want string, p func(*Options) *T, parse func(string) (T, error), format func(T) string) field {
	return field{key, false, want,
		func(o *Options) string { return format(*p(o)) },
		func(o *Options, v string) error {
			x, err := parse(v)
			if err != nil {
				return err
			}
			*p(o) = x
			return nil
		}}
}

func intField(key string, p func(*Options) *int) field {
	return parsed(key, "an integer", p, strconv.Atoi, strconv.Itoa)
}

func boolField(key string, p func(*Options) *bool) field {
	return parsed(key, "true or false", p, strconv.ParseBool, strconv.FormatBool)
}

var fields = []field{
	strField("ARENA_DB", false, func(o *Options) *string { return &o.DB }),
	strField("ARENA_ADDR", false, func(o *Options) *string { return &o.Addr }),
	strField("ARENA_ADMIN_TOKEN", true, func(o *Options) *string { return &o.AdminToken }),
	strField("ARENA_ADMIN_TOKEN_NEXT", true, func(o *Options) *string { return &o.AdminTokenNext }),
	boolField("ARENA_ALLOW_SHORT_ADMIN_TOKEN", func(o *Options) *bool { return &o.AllowShortAdminToken }),
	strField("ARENA_GAMMA_URL", false, func(o *Options) *string { return &o.GammaURL }),
	strField("ARENA_CLOB_URL", false, func(o *Options) *string { return &o.CLOBURL }),
	intField("ARENA_SYNC_LIMIT", func(o *Options) *int { return &o.SyncLimit }),
	intField("ARENA_RATE_IP_PER_MIN", func(o *Options) *int { return &o.RateIPPerMin }),
	intField("ARENA_RATE_AGENT_PER_MIN", func(o *Options) *int { return &o.RateAgentPerMin }),
	strField("ARENA_TRUSTED_PROXIES", false, func(o *Options) *string { return &o.TrustedProxies }),
	intField("ARENA_MAX_AGENTS_PER_ROUND", func(o *Options) *int { return &o.MaxAgentsPerRound }),
	intField("ARENA_MAX_NEW_AGENTS_PER_HOUR", func(o *Options) *int { return &o.MaxNewAgentsPerHour }),
	intField("ARENA_RATE_IPV6_PREFIX", func(o *Options) *int { return &o.RateIPv6Prefix }),
	intField("ARENA_LEADERBOARD_MIN_FORECASTS", func(o *Options) *int { return &o.LeaderboardMinForecasts }),
	intField("ARENA_LEADERBOARD_MAX_PER_ORGANISATION", func(o *Options) *int { return &o.LeaderboardMaxPerOrganisation }),
	parsed("ARENA_SYNC_EVERY", "a duration such as 90s or 5m", func(o *Options) *time.Duration { return &o.SyncEvery },
		time.ParseDuration, time.Duration.String),
	parsed("ARENA_CHAIN_ID", "an integer", func(o *Options) *int64 { return &o.ChainID },
		func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) },
		func(n int64) string { return strconv.FormatInt(n, 10) }),
	strField("ARENA_CONTRACT", false, func(o *Options) *string { return &o.Contract }),
	strField("ARENA_AGENTS", false, func(o *Options) *string { return &o.AgentsFile }),
	strField("ARENA_LOG_LEVEL", false, func(o *Options) *string { return &o.LogLevel }),
	strField("ARENA_TRADING_POLICY", false, func(o *Options) *string { return &o.TradingPolicy }),
	strField("ARENA_FORECAST_AGENTS", false, func(o *Options) *string { return &o.ForecastAgents }),
	strField("ARENA_DATA_DIR", false, func(o *Options) *string { return &o.DataDir }),
	strField("ARENA_ORACLE_AGENTS", false, func(o *Options) *string { return &o.OracleAgents }),
	strField("ARENA_ORACLE_ARCH", false, func(o *Options) *string { return &o.OracleArch }),
	parsed("ARENA_ORACLE_AUTO_MIN_SCORE", "a number", func(o *Options) *float64 { return &o.OracleAutoMinScore },
		func(v string) (float64, error) { return strconv.ParseFloat(v, 64) },
		func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }),
	strField("ARENA_CHAIN_RPC", false, func(o *Options) *string { return &o.ChainRPC }),
	strField("ARENA_CHAIN_KEY", true, func(o *Options) *string { return &o.ChainKey }),
	strField("ARENA_CHAIN_KEY_FILE", false, func(o *Options) *string { return &o.ChainKeyFile }),
	strField("ARENA_CHAIN_ARENA", false, func(o *Options) *string { return &o.ChainArena }),
	boolField("ARENA_CHAIN_REPORT_OUTCOMES", func(o *Options) *bool { return &o.ChainReportOutcomes }),
	intField("ARENA_CHAIN_CONFIRMATIONS", func(o *Options) *int { return &o.ChainConfirmations }),
	boolField("ARENA_ORACLE_REQUIRE_UNANIMOUS", func(o *Options) *bool { return &o.OracleRequireUnanimous }),
}

// Bounds of a config file, which holds a few dozen short lines.
const (
	MaxFileBytes = 1 << 20
	MaxLineBytes = 64 << 10
)

// MinAdminTokenBytes is the shortest admin token accepted without
// AllowShortAdminToken: the token is all that guards the admin endpoints,
// and a short one can be guessed.
const MinAdminTokenBytes = 32

// Load returns defaults overlaid by the file at path (if path is non-empty)
// and then by the environment. Flags are applied by the caller.
func Load(path string, environ []string) (Options, error) {
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
	env := map[string]string{}
	for _, e := range environ {
		if k, v, ok := strings.Cut(e, "="); ok && strings.HasPrefix(k, "ARENA_") {
			env[k] = v
		}
	}
	if err := o.apply(env, func(key string) string { return "environment variable " + key }); err != nil {
		return o, err
	}
	return o, nil
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
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, nil, fmt.Errorf("config: %s: larger than %d MiB, the limit of a config file", path, MaxFileBytes>>20)
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

// Validate checks the effective configuration.
func (o *Options) Validate() error {
	var errs []error
	if !strings.HasPrefix(o.DB, "sqlite:") && !strings.HasPrefix(o.DB, "postgres://") && !strings.HasPrefix(o.DB, "postgresql://") {
		errs = append(errs, fmt.Errorf("db %q: want sqlite:PATH or postgres://…", redact.String(o.DB)))
	}
	if o.SyncLimit <= 0 {
		errs = append(errs, fmt.Errorf("sync limit %d: must be positive", o.SyncLimit))
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
	if o.MaxAgentsPerRound < 0 || o.MaxNewAgentsPerHour < 0 {
		errs = append(errs, fmt.Errorf("admission caps %d agents a round, %d new agents an hour: must not be negative (0 turns a cap off)", o.MaxAgentsPerRound, o.MaxNewAgentsPerHour))
	}
	if o.SyncEvery <= 0 {
		errs = append(errs, fmt.Errorf("sync interval %s: must be positive", o.SyncEvery))
	}
	switch o.LogLevel {
	case "debug", "info", "warn", "error":
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
			errs = append(errs, fmt.Errorf("%s: %d bytes, want at least %d (make one with 'openssl rand -hex 32'; --allow-short-admin-token or ARENA_ALLOW_SHORT_ADMIN_TOKEN=true accepts a short one)",
				t.name, len(t.token), MinAdminTokenBytes))
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
