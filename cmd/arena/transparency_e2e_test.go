package main

import (
	"context"
	"crypto/ed25519"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// A live `arena serve` with a witness policy: two `arena witness`
// processes cosign its checkpoints; with one killed, the next checkpoint
// carries one cosignature and fails the 2-of-2 policy; restarted from its
// state, the witness cosigns again and the served checkpoint meets the
// policy; `arena verify --url` then checks the published export against
// the policy and proves the live checkpoint extends it.
func TestServeWithWitnesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	demoDir, _ := playedDemo(t)
	dir := filepath.Dir(demoDir)
	keyFile, vkey := demoLog(t, demoDir)
	logs := filepath.Join(dir, "logs")
	os.WriteFile(logs, []byte("log "+vkey+"\n"), 0o644)
	type wit struct {
		args []string
		proc *witnessProc
	}
	var ws []*wit
	policy := "log " + vkey + "\n"
	for _, name := range []string{"w1", "w2"} {
		wd := filepath.Join(dir, name)
		w := &wit{args: []string{"--key", filepath.Join(wd, "key"), "--logs", logs, "--state", filepath.Join(wd, "state"), "--addr", freeAddr(t), "--name", name + ".witness.test"}}
		w.proc = startWitness(t, w.args...)
		policy += "witness " + name + " " + w.proc.vkey + " " + w.proc.url() + "\n"
		ws = append(ws, w)
	}
	policyFile := filepath.Join(dir, "policy")
	os.WriteFile(policyFile, []byte(policy+"group both all w1 w2\nquorum both\n"), 0o644)
	pol, err := witness.ParsePolicy([]byte(policy + "group both all w1 w2\nquorum both\n"))
	if err != nil {
		t.Fatal(err)
	}
	logVerifier, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}

	srv := startServeEnv(t, []string{"ARENA_LOG_KEY=" + keyFile, "ARENA_WITNESS_POLICY=" + policyFile,
		"ARENA_CHECKPOINT_INTERVAL=1s", "ARENA_EXPORT_DIR=" + filepath.Join(dir, "exports"), "ARENA_EXPORT_EVERY=1h"},
		"serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", "sqlite:"+filepath.Join(demoDir, "arena.db"))
	base := "http://" + srv.addr
	checkpoint := func() []byte {
		t.Helper()
		resp, err := http.Get(base + "/log/checkpoint")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	// waitFor polls the served checkpoint until ok holds of it.
	waitFor := func(what string, ok func(n []byte, size uint64, err error) bool) []byte {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			n := checkpoint()
			c, err := tlog.OpenCheckpoint(n, vkey)
			var size uint64
			if err == nil {
				size = c.Size
			}
			_, perr := pol.Verify(n, logVerifier)
			if ok(n, size, perr) {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the served checkpoint is\n%s\nserve:\n%s", what, n, srv.logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	first := waitFor("both witnesses cosign", func(_ []byte, size uint64, err error) bool { return size > 0 && err == nil })
	c0, _ := tlog.OpenCheckpoint(first, vkey)

	// An entry appended with w2 down: the next checkpoint has w1's
	// cosignature only, and the 2-of-2 policy refuses it.
	ws[1].proc.kill(t)
	agentKey := filepath.Join(dir, "agent.key")
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", agentKey); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := cli(t, nil, "agent", "profile", "--server", base, "--key", agentKey, "--name", "Witnessed Agent"); err != nil {
		t.Fatalf("agent profile: %v\n%s%s", err, out, errOut)
	}
	w1, err := witness.NewVerifier(ws[0].proc.vkey)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("a checkpoint with w1's cosignature alone", func(n []byte, size uint64, err error) bool {
		if size <= c0.Size {
			return false
		}
		_, oerr := note.Open(n, note.VerifierList(logVerifier, w1))
		return err != nil && oerr == nil && strings.Count(string(n), "\n— ") == 2
	})

	// Restarted from its state, w2 cosigns again.
	ws[1].proc = startWitness(t, ws[1].args...)
	waitFor("both witnesses cosign after the restart", func(_ []byte, size uint64, err error) bool { return size > c0.Size && err == nil })

	out, errOut, err := cli(t, nil, "verify", "--url", base, "--witness-policy", policyFile)
	if err != nil || !strings.Contains(out, "OK") {
		t.Fatalf("verify --url with the 2-of-2 policy: %v\n%s%s", err, out, errOut)
	}
}

// demoLog is the log key file of the played demo in demoDir and the
// note verifier key of the checkpoints it published.
func demoLog(t *testing.T, demoDir string) (keyFile, vkey string) {
	t.Helper()
	keyFile = filepath.Join(demoDir, "arena.db.log.key")
	key, err := tlog.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	origin := savedOrigin(t, openStore(t, "sqlite:"+filepath.Join(demoDir, "arena.db")))
	vkey, err = tlog.VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return keyFile, vkey
}

// savedOrigin is the origin of the checkpoint the arena in db published
// last: what every later publisher of its log signs under by default.
func savedOrigin(t *testing.T, db *store.DB) string {
	t.Helper()
	n, err := db.LatestCheckpoint(context.Background())
	if err != nil || n == nil {
		t.Fatalf("no saved checkpoint: %v", err)
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(n)))
	if err != nil {
		t.Fatal(err)
	}
	return c.Origin
}

// freeAddr is a loopback address with a port free now, for a process that
// must listen on the same address after a restart.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
