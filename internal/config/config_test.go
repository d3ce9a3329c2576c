package config

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPrecedenceFileThenEnv(t *testing.T) {
	f := filepath.Join(t.TempDir(), "arena.conf")
	os.WriteFile(f, []byte("# comment\nARENA_DB=postgres://u:secret@db/arena\nARENA_SYNC_LIMIT=100\nARENA_ADMIN_TOKEN=\"tok\"\nARENA_ALLOW_SHORT_ADMIN_TOKEN=true\n"), 0o600)
	o, err := Load(f, []string{"ARENA_SYNC_LIMIT=200", "OTHER=x", "ARENA_SYNC_EVERY=1m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.DB != "postgres://u:secret@db/arena" || o.SyncLimit != 200 || o.SyncEvery != time.Minute || o.AdminToken != "tok" {
		t.Fatalf("%+v", o)
	}
	if o.GammaURL != Defaults().GammaURL {
		t.Fatalf("default lost: %q", o.GammaURL)
	}
	lines := strings.Join(o.Lines(), "\n")
	if strings.Contains(lines, "secret") || strings.Contains(lines, "tok") ||
		!strings.Contains(lines, "ARENA_DB=postgres://u:[redacted]@db/arena") || !strings.Contains(lines, "ARENA_ADMIN_TOKEN=[redacted]") {
		t.Fatalf("redaction:\n%s", lines)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	bad := write("bad.conf", "ARENA_NOPE=1\n")
	big := write("big.conf", strings.Repeat("# padding\n", MaxFileBytes/10+1))
	long := write("long.conf", "# "+strings.Repeat("x", MaxLineBytes)+"\n")
	for name, c := range map[string]struct {
		file string
		env  []string
		want string
	}{
		"missing file":                   {file: filepath.Join(dir, "none"), want: "no such file"},
		"unknown key":                    {file: bad, want: "bad.conf:1: unknown key ARENA_NOPE"},
		"bad int":                        {env: []string{"ARENA_SYNC_LIMIT=many"}, want: "environment variable ARENA_SYNC_LIMIT: want an integer"},
		"bad duration":                   {env: []string{"ARENA_SYNC_EVERY=soon"}, want: "environment variable ARENA_SYNC_EVERY: want a duration"},
		"config file larger than 1 MiB":  {file: big, want: "big.conf: larger than 1 MiB, the limit of this file"},
		"config line longer than 64 KiB": {file: long, want: "long.conf:1: longer than 64 KiB, the limit of a line"},
		"endless config file":            {file: "/dev/zero", want: "/dev/zero is a device, not a regular file"},
	} {
		if name == "endless config file" {
			if _, err := os.Stat(c.file); err != nil {
				continue
			}
		}
		_, err := Load(c.file, c.env, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "many") || strings.Contains(err.Error(), "soon") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, mut := range []func(*Options){
		func(o *Options) { o.DB = "mysql://x" },
		func(o *Options) { o.SyncLimit = 0 },
		func(o *Options) { o.SyncEvery = 0 },
		func(o *Options) { o.LogLevel = "loud" },
		func(o *Options) { o.TradingPolicy = "coinflip" },
		func(o *Options) { o.TradingPolicy = "" },
		func(o *Options) { o.TrustedProxies = "10.0.0.0/33" },
		func(o *Options) { o.TrustedProxies = "10.0.0.1, proxy.internal" },
		func(o *Options) { o.RateIPv6Prefix = 0 },
		func(o *Options) { o.RateIPv6Prefix = 129 },
		func(o *Options) { o.AdminToken = "short" },
		func(o *Options) { o.AdminToken, o.AdminTokenNext = strings.Repeat("k", MinAdminTokenBytes), "short" },
		func(o *Options) { o.RoundK = 0 },
		func(o *Options) { o.RoundGrace = 0 },
		func(o *Options) { o.SyncVenues = "polymarket,predictit" },
		func(o *Options) { o.SyncVenues = "kalshi, kalshi" },
		func(o *Options) { o.SyncVenues = " , " },
		func(o *Options) { o.SyncVenues = "metaculus" },
	} {
		o := Defaults()
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("invalid options accepted: %+v", o)
		}
	}
	o := Defaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o.AdminToken, o.AllowShortAdminToken = "short", true
	if err := o.Validate(); err != nil {
		t.Fatalf("short admin token explicitly allowed: %v", err)
	}
	o.TrustedProxies = " 10.0.0.0/8, 192.0.2.7 ,::ffff:198.51.100.1"
	ps, err := o.TrustedProxyPrefixes()
	if err != nil || fmt.Sprint(ps) != "[10.0.0.0/8 192.0.2.7/32 198.51.100.1/32]" {
		t.Fatalf("trusted proxies: %v %v", ps, err)
	}
	o.TrustedProxies = ""
	if o, err := Load("", []string{"ARENA_RATE_IPV6_PREFIX=56"}, nil); err != nil || o.RateIPv6Prefix != 56 || Defaults().RateIPv6Prefix != 64 {
		t.Errorf("ARENA_RATE_IPV6_PREFIX=56: %d %v (default %d)", o.RateIPv6Prefix, err, Defaults().RateIPv6Prefix)
	}
	if o.TradingPolicy != "refund" {
		t.Fatalf("default trading policy %q", o.TradingPolicy)
	}
	for _, pol := range []string{"refund", "defer", "oracle"} {
		o, err := Load("", []string{"ARENA_TRADING_POLICY=" + pol}, nil)
		if err != nil || o.TradingPolicy != pol || o.Validate() != nil {
			t.Errorf("ARENA_TRADING_POLICY=%s: %+v %v", pol, o, err)
		}
	}
}

// Flags a command binds win over the environment, which wins over the
// file; a flag set on the command line wins even when it says the
// default; a flag the command defines itself under a setting's flag name
// is not a setting.
// The venues serve syncs: Polymarket by default; any of the four, once,
// in the order given; Metaculus with its token, read under Metaculus's
// own name too.
func TestVenues(t *testing.T) {
	o := Defaults()
	if vs, err := o.Venues(); err != nil || strings.Join(vs, ",") != "polymarket" {
		t.Errorf("default %v %v", vs, err)
	}
	o, err := Load("", []string{"ARENA_SYNC_VENUES=Kalshi, manifold,metaculus,polymarket", "METACULUS_TOKEN=tok"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := o.Venues(); err != nil || strings.Join(vs, ",") != "kalshi,manifold,metaculus,polymarket" || o.MetaculusToken != "tok" {
		t.Errorf("venues %v %v, token %q", vs, err, o.MetaculusToken)
	}
	if _, err := Load("", []string{"ARENA_SYNC_VENUES=metaculus"}, nil); err == nil || !strings.Contains(err.Error(), "ARENA_METACULUS_TOKEN") {
		t.Errorf("metaculus without a token: %v", err)
	}
}

func TestBindPrecedence(t *testing.T) {
	f := filepath.Join(t.TempDir(), "arena.conf")
	os.WriteFile(f, []byte("ARENA_ROUND_K=3\nARENA_SYNC_EVERY=2m\nARENA_NO_SYNC=true\nARENA_ADDR=:1\n"), 0o600)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	Bind(fs, "ARENA_ADDR", "ARENA_SYNC_EVERY", "ARENA_NO_SYNC", "ARENA_ROUND_K", "ARENA_LOG_KEY")
	own := fs.String("agents", "", "the command's own flag")
	if err := fs.Parse([]string{"--config", f, "--sync-every", "5m", "--no-sync=false", "--log-key", "k.key", "--agents", "mine.json"}); err != nil {
		t.Fatal(err)
	}
	if File(fs, []string{FileEnv + "=other.conf"}) != f {
		t.Fatalf("--config loses to %s", FileEnv)
	}
	o, err := Load(File(fs, nil), []string{"ARENA_ROUND_K=4", "ARENA_SYNC_EVERY=3m"}, fs)
	if err != nil {
		t.Fatal(err)
	}
	if o.RoundK != 4 || o.SyncEvery != 5*time.Minute || o.NoSync || o.Addr != ":1" || o.LogKey != "k.key" || o.AgentsFile != "" || *own != "mine.json" {
		t.Fatalf("%+v", o)
	}
	if File(flag.NewFlagSet("x", flag.ContinueOnError), []string{FileEnv + "=other.conf"}) != "other.conf" {
		t.Fatalf("%s not read", FileEnv)
	}
	// A bad flag value is refused when parsed, saying what it must be.
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Bind(fs, "ARENA_ROUND_K")
	if err := fs.Parse([]string{"--round-k", "many"}); err == nil || !strings.Contains(err.Error(), "want an integer") {
		t.Fatalf("--round-k many: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("binding a setting without a flag did not panic")
		}
	}()
	Bind(fs, "ARENA_SYNC_LIMIT")
}

// The Exa key is read as ARENA_EXA_API_KEY, else under Exa's own name
// EXA_API_KEY, and is a secret.
func TestExaKeyAlias(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"EXA_API_KEY=conventional"}, "conventional"},
		{[]string{"EXA_API_KEY=conventional", "ARENA_EXA_API_KEY=S3cretArena"}, "S3cretArena"},
		{nil, ""},
	} {
		o, err := Load("", c.env, nil)
		if err != nil || o.ExaAPIKey != c.want {
			t.Errorf("%v: %q %v, want %q", c.env, o.ExaAPIKey, err, c.want)
		}
		if lines := strings.Join(o.Lines(), "\n"); c.want != "" && (strings.Contains(lines, c.want) || !strings.Contains(lines, "ARENA_EXA_API_KEY=[redacted]")) {
			t.Errorf("%v: key shown:\n%s", c.env, lines)
		}
	}
}

// The configuration section of the operations guide lists exactly the
// declared settings, with their flags and defaults (paste settingsTable's
// output there after changing a setting).
func TestOperationsGuideListsEverySetting(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), settingsTable()) {
		t.Fatalf("docs/operations.md does not hold the settings table; want:\n%s", settingsTable())
	}
	keys := map[string]bool{}
	for _, f := range fields {
		if keys[f.key] {
			t.Errorf("%s declared twice", f.key)
		}
		keys[f.key] = true
		if f.usage == "" {
			t.Errorf("%s has no usage", f.key)
		}
	}
	o := Defaults()
	if len(o.Lines()) != len(fields) {
		t.Errorf("arena config prints %d lines for %d settings", len(o.Lines()), len(fields))
	}
}

// settingsTable is the settings as a Markdown table, in declaration order:
// key, flag, default and meaning. The operations guide lists exactly it.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| setting | flag | default | meaning |\n|---|---|---|---|\n")
	def := Defaults()
	cell := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, f := range fields {
		fl := ""
		if f.flag != "" {
			fl = "--" + f.flag
		}
		usage := f.usage
		if f.secret {
			usage += "; secret: shown masked"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(f.key), cell(fl), cell(f.get(&def)), strings.ReplaceAll(usage, "|", `\|`))
	}
	return b.String()
}

// Every field of Options is a declared setting: changing any one changes
// what `arena config` prints.
func TestEveryOptionIsASetting(t *testing.T) {
	def := Defaults()
	base := strings.Join(def.Lines(), "\n")
	v := reflect.ValueOf(&def).Elem()
	for i := 0; i < v.NumField(); i++ {
		o := Defaults()
		f := reflect.ValueOf(&o).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "-changed")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 7)
		case reflect.Float64:
			f.SetFloat(f.Float() + 0.5)
		default:
			t.Fatalf("%s: kind %s", v.Type().Field(i).Name, f.Kind())
		}
		if strings.Join(o.Lines(), "\n") == base {
			t.Errorf("Options.%s is not a declared setting", v.Type().Field(i).Name)
		}
	}
}
