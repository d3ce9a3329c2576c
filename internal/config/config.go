// Package config loads Forecast Arena's settings. Precedence, highest first:
// command-line flags, ARENA_* environment variables, the config file
// (KEY=VALUE lines using the same ARENA_* names), then defaults.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
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

		LeaderboardMinForecasts: 50,
		ChainConfirmations:      1,
	}
}

type field struct {
	key    string
	secret bool
	get    func(*Options) string
	set    func(*Options, string) error
}

func str(p func(*Options) *string) (func(*Options) string, func(*Options, string) error) {
	return func(o *Options) string { return *p(o) },
		func(o *Options, v string) error { *p(o) = v; return nil }
}

var fields = func() []field {
	mk := func(key string, secret bool, p func(*Options) *string) field {
		g, s := str(p)
		return field{key, secret, g, s}
	}
	return []field{
		mk("ARENA_DB", false, func(o *Options) *string { return &o.DB }),
		mk("ARENA_ADDR", false, func(o *Options) *string { return &o.Addr }),
		mk("ARENA_ADMIN_TOKEN", true, func(o *Options) *string { return &o.AdminToken }),
		mk("ARENA_ADMIN_TOKEN_NEXT", true, func(o *Options) *string { return &o.AdminTokenNext }),
		mk("ARENA_GAMMA_URL", false, func(o *Options) *string { return &o.GammaURL }),
		mk("ARENA_CLOB_URL", false, func(o *Options) *string { return &o.CLOBURL }),
		{"ARENA_SYNC_LIMIT", false,
			func(o *Options) string { return strconv.Itoa(o.SyncLimit) },
			func(o *Options, v string) (err error) { o.SyncLimit, err = strconv.Atoi(v); return err }},
		{"ARENA_RATE_IP_PER_MIN", false,
			func(o *Options) string { return strconv.Itoa(o.RateIPPerMin) },
			func(o *Options, v string) (err error) { o.RateIPPerMin, err = strconv.Atoi(v); return err }},
		{"ARENA_RATE_AGENT_PER_MIN", false,
			func(o *Options) string { return strconv.Itoa(o.RateAgentPerMin) },
			func(o *Options, v string) (err error) { o.RateAgentPerMin, err = strconv.Atoi(v); return err }},
		mk("ARENA_TRUSTED_PROXIES", false, func(o *Options) *string { return &o.TrustedProxies }),
		{"ARENA_RATE_IPV6_PREFIX", false,
			func(o *Options) string { return strconv.Itoa(o.RateIPv6Prefix) },
			func(o *Options, v string) (err error) { o.RateIPv6Prefix, err = strconv.Atoi(v); return err }},
		{"ARENA_MAX_AGENTS_PER_ROUND", false,
			func(o *Options) string { return strconv.Itoa(o.MaxAgentsPerRound) },
			func(o *Options, v string) (err error) { o.MaxAgentsPerRound, err = strconv.Atoi(v); return err }},
		{"ARENA_MAX_NEW_AGENTS_PER_HOUR", false,
			func(o *Options) string { return strconv.Itoa(o.MaxNewAgentsPerHour) },
			func(o *Options, v string) (err error) { o.MaxNewAgentsPerHour, err = strconv.Atoi(v); return err }},
		{"ARENA_LEADERBOARD_MIN_FORECASTS", false,
			func(o *Options) string { return strconv.Itoa(o.LeaderboardMinForecasts) },
			func(o *Options, v string) (err error) { o.LeaderboardMinForecasts, err = strconv.Atoi(v); return err }},
		{"ARENA_LEADERBOARD_MAX_PER_ORGANISATION", false,
			func(o *Options) string { return strconv.Itoa(o.LeaderboardMaxPerOrganisation) },
			func(o *Options, v string) (err error) {
				o.LeaderboardMaxPerOrganisation, err = strconv.Atoi(v)
				return err
			}},
		{"ARENA_SYNC_EVERY", false,
			func(o *Options) string { return o.SyncEvery.String() },
			func(o *Options, v string) (err error) { o.SyncEvery, err = time.ParseDuration(v); return err }},
		{"ARENA_CHAIN_ID", false,
			func(o *Options) string { return strconv.FormatInt(o.ChainID, 10) },
			func(o *Options, v string) (err error) { o.ChainID, err = strconv.ParseInt(v, 10, 64); return err }},
		mk("ARENA_CONTRACT", false, func(o *Options) *string { return &o.Contract }),
		mk("ARENA_AGENTS", false, func(o *Options) *string { return &o.AgentsFile }),
		mk("ARENA_LOG_LEVEL", false, func(o *Options) *string { return &o.LogLevel }),
		mk("ARENA_TRADING_POLICY", false, func(o *Options) *string { return &o.TradingPolicy }),
		mk("ARENA_FORECAST_AGENTS", false, func(o *Options) *string { return &o.ForecastAgents }),
		mk("ARENA_DATA_DIR", false, func(o *Options) *string { return &o.DataDir }),
		mk("ARENA_ORACLE_AGENTS", false, func(o *Options) *string { return &o.OracleAgents }),
		mk("ARENA_ORACLE_ARCH", false, func(o *Options) *string { return &o.OracleArch }),
		{"ARENA_ORACLE_AUTO_MIN_SCORE", false,
			func(o *Options) string { return strconv.FormatFloat(o.OracleAutoMinScore, 'g', -1, 64) },
			func(o *Options, v string) (err error) {
				o.OracleAutoMinScore, err = strconv.ParseFloat(v, 64)
				return err
			}},
		mk("ARENA_CHAIN_RPC", false, func(o *Options) *string { return &o.ChainRPC }),
		mk("ARENA_CHAIN_KEY", true, func(o *Options) *string { return &o.ChainKey }),
		mk("ARENA_CHAIN_KEY_FILE", false, func(o *Options) *string { return &o.ChainKeyFile }),
		mk("ARENA_CHAIN_ARENA", false, func(o *Options) *string { return &o.ChainArena }),
		{"ARENA_CHAIN_REPORT_OUTCOMES", false,
			func(o *Options) string { return strconv.FormatBool(o.ChainReportOutcomes) },
			func(o *Options, v string) (err error) { o.ChainReportOutcomes, err = strconv.ParseBool(v); return err }},
		{"ARENA_CHAIN_CONFIRMATIONS", false,
			func(o *Options) string { return strconv.Itoa(o.ChainConfirmations) },
			func(o *Options, v string) (err error) { o.ChainConfirmations, err = strconv.Atoi(v); return err }},
		{"ARENA_ORACLE_REQUIRE_UNANIMOUS", false,
			func(o *Options) string { return strconv.FormatBool(o.OracleRequireUnanimous) },
			func(o *Options, v string) (err error) {
				o.OracleRequireUnanimous, err = strconv.ParseBool(v)
				return err
			}},
	}
}()

// Load returns defaults overlaid by the file at path (if path is non-empty)
// and then by the environment. Flags are applied by the caller.
func Load(path string, environ []string) (Options, error) {
	o := Defaults()
	if path != "" {
		kv, err := readFile(path)
		if err != nil {
			return o, err
		}
		if err := o.apply(kv, "config file "+path); err != nil {
			return o, err
		}
	}
	env := map[string]string{}
	for _, e := range environ {
		if k, v, ok := strings.Cut(e, "="); ok && strings.HasPrefix(k, "ARENA_") {
			env[k] = v
		}
	}
	if err := o.apply(env, "environment"); err != nil {
		return o, err
	}
	return o, nil
}

func (o *Options) apply(kv map[string]string, where string) error {
	for _, f := range fields {
		if v, ok := kv[f.key]; ok {
			if err := f.set(o, v); err != nil {
				return fmt.Errorf("config: %s: %s=%q: %w", where, f.key, v, err)
			}
		}
	}
	return nil
}

func readFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	kv := map[string]string{}
	known := map[string]bool{}
	for _, fl := range fields {
		known[fl.key] = true
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !known[k] {
			return nil, fmt.Errorf("config: %s:%d: expected a known ARENA_* KEY=VALUE, got %q", path, n, line)
		}
		kv[k] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	return kv, nil
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
