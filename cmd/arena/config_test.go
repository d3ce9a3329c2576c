package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Flags win over ARENA_* environment variables, which win over the file.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "arena.conf")
	os.WriteFile(file, []byte("ARENA_DB=sqlite:file.db\nARENA_SYNC_LIMIT=7\nARENA_ADDR=:1\nARENA_ADMIN_TOKEN=s3cret-0123456789abcdef0123456789\n"), 0o600)
	env := []string{"ARENA_CONFIG=" + file, "ARENA_DB=sqlite:env.db", "ARENA_ADDR=:2"}
	out, _, err := cli(t, env, "config", "--addr", ":3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ARENA_DB=sqlite:env.db", "ARENA_SYNC_LIMIT=7", "ARENA_ADDR=:3", "ARENA_ADMIN_TOKEN=[redacted]"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Error("secret printed")
	}
	if _, _, err := cli(t, []string{"ARENA_SYNC_LIMIT=lots"}, "config"); err == nil {
		t.Error("bad environment value accepted")
	}
}

// arena config masks both admin tokens and the passwords of connection
// strings no URL parser accepts, and keys in other URLs.
func TestConfigRedactsMalformedSecrets(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"postgres://arena:S3cretPW%@127.0.0.1:1/x", "postgres://arena:S3cret PW@127.0.0.1:1/x", "postgres://arena:S3cretPW@127.0.0.1:1/%zz"} {
		env := []string{"ARENA_ADMIN_TOKEN=S3cret-old-0123456789abcdef01234", "ARENA_ADMIN_TOKEN_NEXT=S3cret-new-0123456789abcdef01234", "ARENA_GAMMA_URL=https://g.example/?api_key=S3cretKey"}
		out, _, err := cli(t, env, "config", "--db", db)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "S3cret") || !strings.Contains(out, "ARENA_ADMIN_TOKEN_NEXT=[redacted]\n") || !strings.Contains(out, "ARENA_DB=postgres://arena:[redacted]@127.0.0.1:1/") {
			t.Errorf("--db %q: config output\n%s", db, out)
		}
	}
}

// A config file's errors name the line and at most the key, never the
// value, for `arena config` and `arena serve` alike.
func TestConfigFileErrorsHideValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, line, want string }{
		{"export prefix", "export ARENA_ADMIN_TOKEN=S3CRET", "f.conf:2: ARENA_ADMIN_TOKEN: write KEY=VALUE, without 'export'"},
		{"misspelt key", "ARENA_ADMIN_TOKN=S3CRET", "f.conf:2: unknown key ARENA_ADMIN_TOKN"},
		{"KEY value", "ARENA_ADMIN_TOKEN S3CRET", "f.conf:2: ARENA_ADMIN_TOKEN: want ARENA_ADMIN_TOKEN=VALUE"},
		{"KEY: value", "ARENA_ADMIN_TOKEN: S3CRET", "f.conf:2: ARENA_ADMIN_TOKEN: want ARENA_ADMIN_TOKEN=VALUE"},
		{"bare secret", "S3CRET", "f.conf:2: want ARENA_KEY=VALUE (the line is not shown"},
		{"secret in a number", "ARENA_SYNC_LIMIT=S3CRET", "f.conf:2: ARENA_SYNC_LIMIT: want an integer (the value is not shown)"},
		{"secret in a duration", "ARENA_SYNC_EVERY=S3CRET", "f.conf:2: ARENA_SYNC_EVERY: want a duration"},
	} {
		file := filepath.Join(t.TempDir(), "f.conf")
		if err := os.WriteFile(file, []byte("# settings\n"+c.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"config", "serve"} {
			out, errOut, err := cli(t, nil, cmd, "--config", file)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: arena %s: %v, want %q", c.name, cmd, err, c.want)
			}
			if all := fmt.Sprint(out, errOut, err); strings.Contains(all, "S3CRET") {
				t.Errorf("%s: arena %s shows the value: %s", c.name, cmd, all)
			}
		}
	}
	// Environment variables alike.
	if _, _, err := cli(t, []string{"ARENA_CHAIN_ID=S3CRET"}, "config"); err == nil || strings.Contains(err.Error(), "S3CRET") ||
		!strings.Contains(err.Error(), "environment variable ARENA_CHAIN_ID: want an integer") {
		t.Errorf("bad environment value: %v", err)
	}
}

// A database password is never shown by config, markets or serve (their
// output, errors and logs), whatever it holds, even where pgx would read
// part of it as the host; such a URL is refused before any connection,
// so no piece of the password reaches a resolver.
func TestDBPasswordNeverShown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, db string }{
		{"'@' in the password", "postgres://u:Zq1@Xw2@127.0.0.1:5432/x"},
		{"'/' in the password", "postgres://u:Zq1/Xw2@127.0.0.1:5432/x"},
		{"'#' in the password", "postgres://u:Zq1#Xw2@127.0.0.1:5432/x"},
		{"'?' in the password", "postgres://u:Zq1?Xw2@127.0.0.1:5432/x"},
		{"':' and '%' in the password", "postgres://u:Zq1:%zzXw2@127.0.0.1:5432/x"},
		{"'@' then '/' in the password", "postgres://u:Zq1@Xw2/Vb3@127.0.0.1:5432/x"},
		{"'@' then ':' in the password", "postgres://u:Zq1@Xw2:5/Vb3@127.0.0.1:5432/x"},
	} {
		for _, args := range [][]string{{"config"}, {"markets"}, {"serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds"}} {
			out, errOut, err := cli(t, nil, append(args, "--db", c.db)...)
			all := fmt.Sprint(out, errOut, err)
			for _, piece := range []string{"Zq1", "Xw2", "Vb3"} {
				if strings.Contains(all, piece) {
					t.Errorf("%s: arena %s shows %q: %s", c.name, args[0], piece, all)
				}
			}
			if !strings.Contains(all, "[redacted]") {
				t.Errorf("%s: arena %s: %s", c.name, args[0], all)
			}
			if args[0] != "config" && (err == nil || !strings.Contains(err.Error(), "bad postgres URL")) {
				t.Errorf("%s: arena %s: %v, want the URL refused before connecting", c.name, args[0], err)
			}
		}
	}
	// The DSN, verbatim.
	out, _, err := cli(t, nil, "config", "--db", "postgres://arena:top@secret/part@127.0.0.1:5432/x")
	if err != nil || !strings.Contains(out, "ARENA_DB=postgres://arena:[redacted]@127.0.0.1:5432/x\n") {
		t.Errorf("config: %v\n%s", err, out)
	}
}

// Admin tokens shorter than 32 bytes are refused unless explicitly allowed.
func TestShortAdminTokenRefused(t *testing.T) {
	t.Parallel()
	short := []string{"ARENA_ADMIN_TOKEN=x"}
	db := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	for _, args := range [][]string{{"config"}, {"serve", "--db", db, "--addr", "127.0.0.1:0", "--no-sync"}, {"config", "--admin-token-next", "y"}} {
		env := short
		if slices.Contains(args, "--admin-token-next") {
			env = nil
		}
		// serve would run until ctx ends, were the token accepted.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := Main(ctx, &Env{Stdout: io.Discard, Stderr: io.Discard, Environ: env, Getwd: os.Getwd}, args)
		cancel()
		if err == nil || !strings.Contains(err.Error(), " is 1 bytes long, want at least 32") || !strings.Contains(err.Error(), "--allow-short-admin-token") {
			t.Errorf("arena %v: %v", args, err)
		}
	}
	if _, _, err := cli(t, short, "config", "--allow-short-admin-token"); err != nil {
		t.Errorf("--allow-short-admin-token: %v", err)
	}
	if _, _, err := cli(t, append(short, "ARENA_ALLOW_SHORT_ADMIN_TOKEN=true"), "config"); err != nil {
		t.Errorf("ARENA_ALLOW_SHORT_ADMIN_TOKEN=true: %v", err)
	}
	if _, _, err := cli(t, []string{"ARENA_ADMIN_TOKEN=" + strings.Repeat("k", 32)}, "config"); err != nil {
		t.Errorf("32-byte token: %v", err)
	}
	// A token no request header can carry leaves the admin API unusable.
	for _, tok := range []string{strings.Repeat(" ", 40), strings.Repeat("k", 31) + " k", strings.Repeat("k", 32) + "\x7f", strings.Repeat("é", 20)} {
		if _, _, err := cli(t, []string{"ARENA_ADMIN_TOKEN=" + tok}, "config"); err == nil || !strings.Contains(err.Error(), "use printable ASCII") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
}

// serve's flags are settings like any other: `arena config` takes and
// shows them, the environment sets them, and serve refuses a bad one
// before it serves.
func TestServeFlagsAreSettings(t *testing.T) {
	t.Parallel()
	out, _, err := cli(t, []string{"ARENA_ROUND_K=4", "ARENA_NO_ROUNDS=true", "EXA_API_KEY=S3cretExa"}, "config", "--sync-every", "1m", "--no-sync",
		"--agents", "a.json", "--round-k", "3", "--log-key", "k.key", "--grace", "2h", "--rpc", "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ARENA_SYNC_EVERY=1m0s", "ARENA_NO_SYNC=true", "ARENA_AGENTS=a.json", "ARENA_ROUND_K=3", "ARENA_NO_ROUNDS=true",
		"ARENA_LOG_KEY=k.key", "ARENA_ROUND_GRACE=2h0m0s", "ARENA_EXA_API_KEY=[redacted]", "ARENA_CHAIN_RPC=http://127.0.0.1:1"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "S3cretExa") {
		t.Error("the Exa key printed")
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = Main(ctx, &Env{Stdout: io.Discard, Stderr: io.Discard, Environ: []string{"ARENA_ROUND_K=0"}, Getwd: os.Getwd}, []string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--no-sync"})
	if err == nil || !strings.Contains(err.Error(), "round size 0 (--round-k)") {
		t.Errorf("serve with ARENA_ROUND_K=0: %v", err)
	}
}
