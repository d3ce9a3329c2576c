package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrecedenceFileThenEnv(t *testing.T) {
	f := filepath.Join(t.TempDir(), "arena.conf")
	os.WriteFile(f, []byte("# comment\nARENA_DB=postgres://u:secret@db/arena\nARENA_SYNC_LIMIT=100\nARENA_ADMIN_TOKEN=\"tok\"\n"), 0o600)
	o, err := Load(f, []string{"ARENA_SYNC_LIMIT=200", "OTHER=x", "ARENA_SYNC_EVERY=1m"})
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
		"config file larger than 1 MiB":  {file: big, want: "big.conf: larger than 1 MiB, the limit of a config file"},
		"config line longer than 64 KiB": {file: long, want: "long.conf:1: longer than 64 KiB, the limit of a line"},
		"endless config file":            {file: "/dev/zero", want: "/dev/zero: larger than 1 MiB"},
	} {
		if name == "endless config file" {
			if _, err := os.Stat(c.file); err != nil {
				continue
			}
		}
		_, err := Load(c.file, c.env)
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
	if o, err := Load("", []string{"ARENA_RATE_IPV6_PREFIX=56"}); err != nil || o.RateIPv6Prefix != 56 || Defaults().RateIPv6Prefix != 64 {
		t.Errorf("ARENA_RATE_IPV6_PREFIX=56: %d %v (default %d)", o.RateIPv6Prefix, err, Defaults().RateIPv6Prefix)
	}
	if o.TradingPolicy != "refund" {
		t.Fatalf("default trading policy %q", o.TradingPolicy)
	}
	for _, pol := range []string{"refund", "defer", "oracle"} {
		o, err := Load("", []string{"ARENA_TRADING_POLICY=" + pol})
		if err != nil || o.TradingPolicy != pol || o.Validate() != nil {
			t.Errorf("ARENA_TRADING_POLICY=%s: %+v %v", pol, o, err)
		}
	}
}
