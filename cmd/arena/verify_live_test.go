package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// liveArena is a demo's arena publishing its log: checkpoints kept in its
// store and cosigned by two `arena witness` processes.
type liveArena struct {
	src    export.Source
	pub    *tlog.Publisher
	vkey   string
	policy string // a 2-of-2 witness policy file
}

func newLiveArena(t *testing.T) *liveArena {
	t.Helper()
	ctx := context.Background()
	dir, _ := playedDemo(t)
	db := openStore(t, "sqlite:"+filepath.Join(dir, "arena.db"))
	keys, _ := filepath.Glob(filepath.Join(dir, "*.log.key"))
	if len(keys) != 1 {
		t.Fatalf("the demo's log key files: %v", keys)
	}
	key, err := tlog.LoadOrCreateKey(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	dom, err := forecast.LocalDomain(ctx, forecast.Domain{}, db)
	if err != nil {
		t.Fatal(err)
	}
	a := &liveArena{src: export.Source{Forecast: &rounds.Service{Store: db, Domain: dom}, Log: &tlog.Log{Store: db, Key: key}}}
	// The demo published its checkpoints under its own origin: the store
	// keeps the latest, and a publisher under another origin would be
	// refused.
	if a.pub, err = tlog.NewPublisher(a.src.Log, savedOrigin(t, db), db); err != nil {
		t.Fatal(err)
	}
	a.vkey = a.pub.VerifierKey()
	logs := filepath.Join(t.TempDir(), "logs")
	if err := os.WriteFile(logs, []byte("log "+a.vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.policy = filepath.Join(t.TempDir(), "policy")
	policy := "log " + a.vkey + "\n"
	for _, name := range []string{"w1", "w2"} {
		wd := t.TempDir()
		w := startWitness(t, "--key", filepath.Join(wd, "key"), "--logs", logs, "--state", filepath.Join(wd, "state"), "--addr", "127.0.0.1:0", "--name", name+".witness.test")
		policy += "witness " + name + " " + w.vkey + " " + w.url() + "\n"
	}
	if err := os.WriteFile(a.policy, []byte(policy+"group both all w1 w2\nquorum both\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := witness.ParsePolicy([]byte(policy + "quorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	a.pub.Cosigner = &witness.Client{Witnesses: p.Remotes()}
	return a
}

// publish makes a checkpoint of the log as it stands, cosigned by both
// witnesses, and returns its note.
func (a *liveArena) publish(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	if _, err := a.pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := a.pub.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// export writes the arena's export carrying note.
func (a *liveArena) export(t *testing.T, n []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := export.Write(context.Background(), a.src, dir, export.Options{Checkpoint: n}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// signed is a checkpoint the log key signs, with no cosignature: what the
// operator alone can make.
func (a *liveArena) signed(t *testing.T, c tlog.Checkpoint) []byte {
	t.Helper()
	s, err := tlog.NoteSigner(c.Origin, a.src.Log.Key)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Sign(&note.Note{Text: string(c.Text())}, s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two `arena witness` processes cosign an arena's checkpoint, which its
// export carries: `arena verify` with the 2-of-2 policy passes, and fails
// when one cosignature is removed or forged, or the checkpoint is
// re-signed by the operator alone; --vkey of another origin fails.
func TestVerifyWitnessPolicy(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (a whole demo, two witness processes): run without -short")
	}
	a := newLiveArena(t)
	n := a.publish(t)
	dir := a.export(t, n)
	out, _, err := cli(t, nil, "verify", "--export", dir, "--vkey", a.vkey, "--witness-policy", a.policy)
	if err != nil || !strings.Contains(out, "cosigned by a quorum of the witness policy") || !strings.Contains(out, "OK:") {
		t.Fatalf("verify with the 2-of-2 policy: %v\n%s", err, out)
	}
	lines := strings.SplitAfter(string(n), "\n") // 3 text lines, a blank one, the log's signature, 2 cosignatures, ""
	if len(lines) != 8 {
		t.Fatalf("checkpoint %q: want the log's signature and two cosignatures", n)
	}
	c, err := tlog.OpenCheckpoint(n, a.vkey)
	if err != nil {
		t.Fatal(err)
	}
	c.Hash = bytes.Repeat([]byte{1}, 32)
	otherOrigin, _ := tlog.VerifierKey("other.test/log", a.src.Log.PublicKey())
	for _, tc := range []struct {
		name       string
		checkpoint string
		vkey       string
		want       string
	}{
		{"w2's cosignature removed", strings.Join(lines[:6], ""), a.vkey, "no cosignature by w2"},
		{"w1's cosignature removed", strings.Join(lines[:5], "") + lines[6], a.vkey, "no cosignature by w1"},
		{"w2's cosignature forged", strings.Join(lines[:6], "") + forgeLine(t, lines[6]), a.vkey, "invalid signature for key w2.witness.test"},
		{"re-signed by the operator alone", string(a.signed(t, c)), a.vkey, "checkpoint cosignatures"},
		{"a verifier key of another origin", string(n), otherOrigin, "not signed by the log key other.test/log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, export.CheckpointFile), []byte(tc.checkpoint), 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, err := cli(t, nil, "verify", "--export", dir, "--vkey", tc.vkey, "--witness-policy", a.policy)
			if err == nil || !strings.Contains(err.Error(), "verification FAILED: checkpoint") || !strings.Contains(err.Error(), tc.want) || out != "" {
				t.Fatalf("want a failure naming %q: %v\n%s", tc.want, err, out)
			}
			t.Log(err)
		})
	}
}

// forgeLine flips a bit of the signature on a note's signature line.
func forgeLine(t *testing.T, line string) string {
	t.Helper()
	i := strings.LastIndex(line, " ")
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(line[i+1:], "\n"))
	if err != nil {
		t.Fatalf("signature line %q: %v", line, err)
	}
	sig[len(sig)-1] ^= 1
	return line[:i+1] + base64.StdEncoding.EncodeToString(sig) + "\n"
}

// `arena verify --url` fetches an arena's published export, verifies it,
// and proves the arena's current checkpoint, fetched with its hash tiles,
// consistent with the export's; --since proves it consistent with a
// checkpoint kept earlier (--save-checkpoint keeps one). A rollback or a
// fork of the log, a tile or an export file changed in transit, and a
// kept checkpoint the log key did not sign all fail.
func TestVerifyURL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (a whole demo, two witness processes): run without -short")
	}
	ctx := context.Background()
	a := newLiveArena(t)
	first := a.publish(t)
	dir := a.export(t, first)
	// The log grows past the export: a full hash tile and more.
	for i := range 300 {
		if err := a.src.Log.Append(ctx, tlog.KindScore, map[string]int{"after the export": i}); err != nil {
			t.Fatal(err)
		}
	}
	a.publish(t)

	// The arena's routes, with a hook to misbehave.
	var misbehave atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
	mux := http.NewServeMux()
	mux.Handle("/log/", http.StripPrefix("/log", a.pub.Handler()))
	mux.Handle("/exports/latest/", http.StripPrefix("/exports/latest", export.Handler(dir)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := misbehave.Load(); f != nil && (*f)(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	kept := filepath.Join(t.TempDir(), "arena.checkpoint")
	// The export served is an older checkpoint's: no waiting for the
	// current one's.
	out, _, err := cli(t, nil, "verify", "--url", srv.URL, "--export-wait", "0s", "--witness-policy", a.policy, "--save-checkpoint", kept)
	if err != nil || !strings.Contains(out, "OK:") || !strings.Contains(out, "live: the arena's current checkpoint (") {
		t.Fatalf("verify --url: %v\n%s", err, out)
	}
	// The policy's log line named the log key.
	if strings.Contains(out, "note: the log key was taken from the export") {
		t.Fatalf("verify --url with a policy trusted the export's key:\n%s", out)
	}
	t.Log(out)
	// Later, the log has grown again: the kept checkpoint is a prefix.
	for i := range 20 {
		if err := a.src.Log.Append(ctx, tlog.KindScore, map[string]int{"later": i}); err != nil {
			t.Fatal(err)
		}
	}
	cur := a.publish(t)
	out, _, err = cli(t, nil, "verify", "--url", srv.URL+"/", "--export-wait", "0s", "--vkey", a.vkey, "--since", kept)
	if err != nil || !strings.Contains(out, "since: the arena's current checkpoint extends the one kept in") {
		t.Fatalf("verify --url --since: %v\n%s", err, out)
	}

	c, err := tlog.OpenCheckpoint(cur, a.vkey)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := tlog.OpenCheckpoint(first, a.vkey)
	if err != nil {
		t.Fatal(err)
	}
	fork, ahead, earlier := c, c, c0
	fork.Size, fork.Hash = c.Size-10, bytes.Repeat([]byte{7}, 32)
	ahead.Size++
	earlier.Size -= 5
	if earlier.Hash, err = a.src.Log.RootAt(ctx, earlier.Size); err != nil {
		t.Fatal(err)
	}
	otherKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32))
	s, _ := tlog.NoteSigner(c.Origin, otherKey)
	foreign, _ := note.Sign(&note.Note{Text: string(c.Text())}, s)
	file := func(b []byte) string {
		p := filepath.Join(t.TempDir(), "kept")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serve := func(path string, body func(b []byte) []byte) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasPrefix(r.URL.Path, path) {
				return false
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, r)
			w.Write(body(rec.Body.Bytes()))
			return true
		}
	}
	for _, tc := range []struct {
		name      string
		since     string
		misbehave func(w http.ResponseWriter, r *http.Request) bool
		want      string
	}{
		{"a kept checkpoint of another tree (a fork)", file(a.signed(t, fork)), nil, "(a fork)"},
		{"a kept checkpoint larger than the current one (a rollback)", file(a.signed(t, ahead)), nil, "(a rollback)"},
		{"a kept checkpoint another key signed", file(foreign), nil, "not signed by the log key"},
		{"the arena's checkpoint rolled back behind its export's", "", serve("/log/checkpoint", func([]byte) []byte { return a.signed(t, earlier) }), "(a rollback)"},
		{"a hash tile changed in transit", "", serve("/log/tile/0/000", func(b []byte) []byte { b[0] ^= 1; return b }), "downloaded inconsistent tile"},
		{"an export file changed in transit", "", serve("/exports/latest/scores.jsonl", func(b []byte) []byte { return append(b, '\n') }), "scores.jsonl"},
		{"no export published", "", serve("/exports/latest/index.json", func([]byte) []byte { return nil }), "index.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.misbehave != nil {
				misbehave.Store(&tc.misbehave)
				defer misbehave.Store(nil)
			}
			args := []string{"verify", "--url", srv.URL, "--export-wait", "0s", "--vkey", a.vkey}
			if tc.since != "" {
				args = append(args, "--since", tc.since)
			}
			out, _, err := cli(t, nil, args...)
			if err == nil || !strings.Contains(err.Error(), "verification FAILED") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a failure naming %q: %v", tc.want, err)
			}
			// The export may verify before a live check fails: nothing
			// printed may then read as success.
			if strings.Contains(out, "OK") {
				t.Fatalf("a failed verification printed OK:\n%s", out)
			}
			t.Log(err)
		})
	}
}

// `arena verify` refuses flags that do not go together, a verifier key,
// policy or URL it cannot use, before fetching or reading anything.
func TestVerifyFlagsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub, _, _ := ed25519.GenerateKey(nil)
	vkey, err := tlog.VerifierKey("arena.test/log", pub)
	if err != nil {
		t.Fatal(err)
	}
	wkey, err := witness.VerifierKey("witness.test/w", pub)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tlog.VerifierKey("other.test/log", make([]byte, 32))
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"neither --export nor --url", nil, "give one of --export and --url"},
		{"both --export and --url", []string{"--export", dir, "--url", "http://127.0.0.1:1"}, "give one of --export and --url"},
		{"--since without --url", []string{"--export", dir, "--since", file("cp", "")}, "--since and --save-checkpoint go with --url"},
		{"--save-checkpoint without --url", []string{"--export", dir, "--save-checkpoint", filepath.Join(dir, "x")}, "--since and --save-checkpoint go with --url"},
		{"--vkey not a verifier key", []string{"--export", dir, "--vkey", "arena.test/log"}, "--vkey"},
		{"--vkey a witness's cosignature key", []string{"--export", dir, "--vkey", wkey}, "--vkey"},
		{"--witness-policy malformed", []string{"--export", dir, "--witness-policy", file("bad", "witness w1\n")}, "malformed witness policy"},
		{"--witness-policy of two logs without --vkey", []string{"--export", dir, "--witness-policy", file("two", "log "+vkey+"\nlog "+other+"\nquorum none\n")}, "name this arena's with --vkey"},
		{"--witness-policy that does not exist", []string{"--export", dir, "--witness-policy", filepath.Join(dir, "none")}, "no such file"},
		{"--url without a scheme", []string{"--url", "arena.example.com"}, "want the arena's address"},
		{"--url of another scheme", []string{"--url", "ftp://arena.example.com"}, "want the arena's address"},
		{"--url with a query", []string{"--url", "https://arena.example.com/?x=1"}, "want the arena's address"},
	} {
		_, _, err := cli(t, nil, append([]string{"verify"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A witness policy configured after the export was made: the export's
// checkpoint has no cosignature, so `verify --export` with the policy
// fails, but `verify --url` checks the policy on the arena's current
// checkpoint, cosigned and proved to extend the export's, and passes.
func TestVerifyURLPolicyAddedLater(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (a whole demo, two witness processes): run without -short")
	}
	ctx := context.Background()
	a := newLiveArena(t)
	cosigner := a.pub.Cosigner
	a.pub.Cosigner = nil
	dir := a.export(t, a.publish(t))
	if _, _, err := cli(t, nil, "verify", "--export", dir, "--witness-policy", a.policy); err == nil || !strings.Contains(err.Error(), "no cosignature by") {
		t.Fatalf("verify --export of an export made before the policy: %v", err)
	}
	a.pub.Cosigner = cosigner
	if err := a.src.Log.Append(ctx, tlog.KindScore, map[string]int{"after the policy": 1}); err != nil {
		t.Fatal(err)
	}
	a.publish(t)
	mux := http.NewServeMux()
	mux.Handle("/log/", http.StripPrefix("/log", a.pub.Handler()))
	mux.Handle("/exports/latest/", http.StripPrefix("/exports/latest", export.Handler(dir)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	out, _, err := cli(t, nil, "verify", "--url", srv.URL, "--export-wait", "0s", "--witness-policy", a.policy)
	if err != nil || !strings.Contains(out, "live: the arena's current checkpoint is cosigned by a quorum of the witness policy") || !strings.Contains(out, "OK:") {
		t.Fatalf("verify --url with a policy added after the export: %v\n%s", err, out)
	}
}
