package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// witnessProc is an `arena witness` child process.
type witnessProc struct {
	cmd  *exec.Cmd
	addr string // where it listens
	vkey string // its cosignature verifier key, as it printed it
	logs *lockedBuffer
	done chan error
}

func (w *witnessProc) url() string { return "http://" + w.addr }

// startWitness runs `arena witness` with args and waits until it serves.
func startWitness(t *testing.T, args ...string) *witnessProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"witness"}, args...)...)
	cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
	w := &witnessProc{cmd: cmd, logs: &lockedBuffer{}, done: make(chan error, 1)}
	vkey, addr := make(chan string, 1), make(chan string, 1)
	watch := func(re *regexp.Regexp, found chan string) *lineWriter {
		return &lineWriter{line: func(s string) {
			fmt.Fprintln(w.logs, s)
			if m := re.FindStringSubmatch(s); m != nil {
				found <- m[1]
			}
		}}
	}
	cmd.Stdout = watch(regexp.MustCompile(`^verifier key: (\S+)$`), vkey)
	cmd.Stderr = watch(regexp.MustCompile(`msg=serving addr=(\S+)`), addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-w.done
		}
	})
	for w.vkey == "" || w.addr == "" {
		select {
		case w.vkey = <-vkey:
		case w.addr = <-addr:
		case err := <-w.done:
			t.Fatalf("arena witness exited: %v\n%s", err, w.logs)
		case <-time.After(20 * time.Second):
			t.Fatalf("arena witness did not start: %s", w.logs)
		}
	}
	return w
}

// lineWriter calls line with each line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

// kill ends the witness with SIGKILL: a crash.
func (w *witnessProc) kill(t *testing.T) {
	t.Helper()
	w.cmd.Process.Kill()
	<-w.done
}

// `arena witness` creates its key on first start and prints its verifier
// key; it cosigns the checkpoints a log sends it, each consistent with
// the last; killed and restarted from its state directory, with the same
// key, it still holds the latest checkpoint it cosigned: it refuses a
// rollback to an earlier one and cosigns the next from where it stood;
// SIGINT shuts it down cleanly.
func TestWitnessCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	ctx := context.Background()
	dir := t.TempDir()
	key, err := tlog.LoadOrCreateKey(filepath.Join(dir, "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	lg := &tlog.Log{Store: storetest.Open(t, "sqlite"), Key: key}
	pub, err := tlog.NewPublisher(lg, "arena.test/log", &tlog.MemCheckpoints{})
	if err != nil {
		t.Fatal(err)
	}
	logsFile := filepath.Join(dir, "logs")
	if err := os.WriteFile(logsFile, []byte("# the arena under test\nlog "+pub.VerifierKey()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wkey, state := filepath.Join(dir, "witness", "key"), filepath.Join(dir, "witness", "state")
	args := []string{"--key", wkey, "--logs", logsFile, "--state", state, "--addr", "127.0.0.1:0", "--name", "witness.test/w"}
	w := startWitness(t, args...)
	if _, err := os.Stat(wkey); err != nil {
		t.Fatalf("the witness key was not created: %v", err)
	}
	v, err := witness.NewVerifier(w.vkey)
	if err != nil {
		t.Fatalf("printed verifier key %q: %v", w.vkey, err)
	}
	client := func(url string) *witness.Client {
		return &witness.Client{Witnesses: []witness.Remote{{Name: "w", URL: url, Verifier: v}}}
	}
	appendScores(t, lg, 10)
	pub.Cosigner = client(w.url())
	if _, err := pub.Publish(ctx); err != nil {
		t.Fatalf("first checkpoint: %v\n%s", err, w.logs)
	}
	first, err := pub.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appendScores(t, lg, 5)
	if _, err := pub.Publish(ctx); err != nil {
		t.Fatalf("second checkpoint: %v", err)
	}
	second, _ := pub.Checkpoint(ctx)
	for name, n := range map[string][]byte{"first": first, "second": second} {
		if _, err := note.Open(n, note.VerifierList(v)); err != nil {
			t.Fatalf("the %s checkpoint is not cosigned: %v\n%s", name, err, n)
		}
	}

	// A crash, then a restart from the same state directory and key.
	vkey := w.vkey
	w.kill(t)
	w = startWitness(t, args...)
	if w.vkey != vkey {
		t.Fatalf("restarted with verifier key %q, want %q", w.vkey, vkey)
	}
	// A log server that knows nothing of the witness sends it the first
	// checkpoint again, signed by the log only: a rollback, refused.
	c1, err := tlog.OpenCheckpoint(first, pub.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	logOnly := first[:bytes.LastIndexByte(first[:len(first)-1], '\n')+1]
	prove := func(old uint64) ([][]byte, error) { return lg.Consistency(ctx, old, c1.Size) }
	if out, err := client(w.url()).Cosign(ctx, logOnly, c1, prove); err == nil || !strings.Contains(err.Error(), "it cosigned size 15, more than this checkpoint's 10") {
		t.Fatalf("a rollback after the restart: %v\n%s", err, out)
	}
	// The next checkpoint is cosigned, proved from the size it held.
	appendScores(t, lg, 7)
	pub.Cosigner = client(w.url())
	if _, err := pub.Publish(ctx); err != nil {
		t.Fatalf("checkpoint after the restart: %v\n%s", err, w.logs)
	}

	// SIGINT: a clean shutdown, exit status 0.
	w.cmd.Process.Signal(syscall.SIGINT)
	if err := <-w.done; err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, w.logs)
	}
	if !strings.Contains(w.logs.String(), "msg=stopped") {
		t.Fatalf("no clean stop logged:\n%s", w.logs)
	}
}

func appendScores(t *testing.T, l *tlog.Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(context.Background(), tlog.KindScore, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
}

// `arena witness` refuses a missing flag, a bad name, a list of logs it
// cannot use, a key file that holds no key and an address it cannot
// listen on; a refusal creates no key and no state directory.
func TestWitnessCommandRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vkey, err := tlog.VerifierKey("arena.test/log", make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logs := file("logs", "log "+vkey+"\n")
	badKey := file("bad.key", "not a key\n")
	key, state := filepath.Join(dir, "w.key"), filepath.Join(dir, "state")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no --key", []string{"--logs", logs, "--state", state}, "--key is required"},
		{"no --logs", []string{"--key", key, "--state", state}, "--logs is required"},
		{"no --state", []string{"--key", key, "--logs", logs}, "--state is required"},
		{"a name with a space", []string{"--key", key, "--logs", logs, "--state", state, "--name", "my witness"}, "--name"},
		{"a logs file with a witness line", []string{"--key", key, "--logs", file("wlogs", "witness w1 "+vkey+"\n"), "--state", state}, "log lines only"},
		{"a logs file listing no log", []string{"--key", key, "--logs", file("nologs", "# none yet\n"), "--state", state}, "lists no log"},
		{"an endless logs file", []string{"--key", key, "--logs", "/dev/zero", "--state", state}, "/dev/zero is a device, not a regular file"},
		{"a logs file that does not exist", []string{"--key", key, "--logs", filepath.Join(dir, "none"), "--state", state}, "no such file"},
		{"an address it cannot listen on", []string{"--key", key, "--logs", logs, "--state", state, "--addr", "256.0.0.1:1"}, "listen on"},
		{"a key file that holds no key", []string{"--key", badKey, "--logs", logs, "--state", state, "--addr", "127.0.0.1:0"}, "not an ed25519 seed"},
	} {
		_, _, err := cli(t, nil, append([]string{"witness", "--name", "witness.test/w"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		for _, p := range []string{key, state} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("%s: %s was created", tc.name, p)
			}
		}
	}
}
