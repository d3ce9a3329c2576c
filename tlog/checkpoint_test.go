package tlog_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
)

// A checkpoint signed with the log key opens under the log's vkey and
// under nothing else.
func TestCheckpointSignOpen(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(nil)
	root := sha256.Sum256([]byte("root"))
	c := tlog.Checkpoint{Origin: "arena.example.com/log", Size: 1234, Hash: root[:]}
	signer, err := tlog.NoteSigner(c.Origin, key)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: string(c.Text())}, signer)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := tlog.VerifierKey(c.Origin, key.Public().(ed25519.PublicKey))
	if err != nil || !strings.HasPrefix(vkey, "arena.example.com/log+") {
		t.Fatalf("vkey %q, %v", vkey, err)
	}
	got, err := tlog.OpenCheckpoint(msg, vkey)
	if err != nil || got.Origin != c.Origin || got.Size != c.Size || !bytes.Equal(got.Hash, c.Hash) {
		t.Fatalf("opened %+v, %v", got, err)
	}
	_, other, _ := ed25519.GenerateKey(nil)
	otherKey, _ := tlog.VerifierKey(c.Origin, other.Public().(ed25519.PublicKey))
	renamed, _ := tlog.VerifierKey("other.example/log", key.Public().(ed25519.PublicKey))
	for name, tc := range map[string]struct {
		msg  []byte
		vkey string
	}{
		"size changed":        {bytes.Replace(msg, []byte("1234"), []byte("1235"), 1), vkey},
		"another log key":     {msg, otherKey},
		"key of another name": {msg, renamed},
		"not a vkey":          {msg, "arena.example.com/log"},
		"no signature":        {c.Text(), vkey},
	} {
		if _, err := tlog.OpenCheckpoint(tc.msg, tc.vkey); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// Only checkpoints in the exact form of the spec parse.
func TestParseCheckpoint(t *testing.T) {
	good := "example.com/log\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
	for _, ok := range []string{good, good + "ext one\next two\n", "o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"} {
		c, err := tlog.ParseCheckpoint([]byte(ok))
		if err != nil || string(c.Text()) != ok {
			t.Errorf("%q: %v, re-encoded %q", ok, err, c.Text())
		}
	}
	for name, bad := range map[string]string{
		"no final newline":          strings.TrimSuffix(good, "\n"),
		"two lines":                 "example.com/log\n20852163\n",
		"empty origin":              "\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"origin with a space":       "example.com log\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"origin with a plus":        "example.com+log\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"size with a leading zero":  "example.com/log\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"negative size":             "example.com/log\n-1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"size past 2^63-1":          "example.com/log\n9223372036854775808\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"short hash":                "example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n",
		"hash not base64":           "example.com/log\n1\nCsUYapGGPo4dkMgIAUqom_Xajj7h2fB2MPA3j2jxq2I=\n",
		"non-canonical base64":      "example.com/log\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2J=\n",
		"empty extension line":      good + "\n",
		"extension without newline": good + "ext",
	} {
		if _, err := tlog.ParseCheckpoint([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// The default origin is the public URL without its scheme, plus /log.
func TestOriginFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://arena.example.com":       "arena.example.com/log",
		"https://Arena.Example.com/":      "arena.example.com/log",
		"http://127.0.0.1:8080":           "127.0.0.1:8080/log",
		"https://example.com/arenas/one/": "example.com/arenas/one/log",
		"arena.example.com":               "arena.example.com/log",
	} {
		got, err := tlog.OriginFromURL(in)
		if err != nil || got != want {
			t.Errorf("OriginFromURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "https://", "https://user@example.com", "https://example.com/?q=1"} {
		if got, err := tlog.OriginFromURL(bad); err == nil {
			t.Errorf("OriginFromURL(%q) = %q", bad, got)
		}
	}
}

// Fuzzed checkpoint notes: opening one never panics, and whatever opens
// is a canonical checkpoint signed by the key.
func FuzzOpenCheckpoint(f *testing.F) {
	_, key, _ := ed25519.GenerateKey(nil)
	signer, _ := tlog.NoteSigner("example.com/log", key)
	vkey, _ := tlog.VerifierKey("example.com/log", key.Public().(ed25519.PublicKey))
	good := []byte("example.com/log\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")
	signed, _ := note.Sign(&note.Note{Text: string(good)}, signer)
	f.Add(signed)
	f.Add(good)
	f.Add(append(bytes.Clone(signed), "— witness.example/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"...))
	f.Fuzz(func(t *testing.T, msg []byte) {
		if c, err := tlog.ParseCheckpoint(msg); err == nil && !bytes.Equal(c.Text(), msg) {
			t.Fatalf("parsed %q re-encodes as %q", msg, c.Text())
		}
		c, err := tlog.OpenCheckpoint(msg, vkey)
		if err != nil {
			return
		}
		if c.Origin != "example.com/log" || !bytes.HasPrefix(msg, c.Text()) {
			t.Fatalf("opened %+v from %q", c, msg)
		}
	})
}
