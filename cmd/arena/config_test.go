package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags win over ARENA_* environment variables, which win over the file.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "arena.conf")
	os.WriteFile(file, []byte("ARENA_DB=sqlite:file.db\nARENA_SYNC_LIMIT=7\nARENA_ADDR=:1\nARENA_ADMIN_TOKEN=s3cret\n"), 0o600)
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
	for _, db := range []string{"postgres://arena:S3cretPW%@127.0.0.1:1/x", "postgres://arena:S3cret PW@127.0.0.1:1/x", "postgres://arena:S3cretPW@127.0.0.1:1/%zz"} {
		env := []string{"ARENA_ADMIN_TOKEN=S3cret-old", "ARENA_ADMIN_TOKEN_NEXT=S3cret-new", "ARENA_GAMMA_URL=https://g.example/?api_key=S3cretKey"}
		out, _, err := cli(t, env, "config", "--db", db)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "S3cret") || !strings.Contains(out, "ARENA_ADMIN_TOKEN_NEXT=[redacted]\n") || !strings.Contains(out, "ARENA_DB=postgres://arena:[redacted]@127.0.0.1:1/") {
			t.Errorf("--db %q: config output\n%s", db, out)
		}
	}
}
