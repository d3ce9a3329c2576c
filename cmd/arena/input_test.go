package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Every file a user names is read within a bound: an endless one
// (/dev/zero here) is refused with an error naming the file and the limit,
// after reading at most the bound.
func TestEndlessInputsRefused(t *testing.T) {
	t.Parallel()
	const zero = "/dev/zero"
	if _, err := os.Stat(zero); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	openStore(t, db).Close()
	qfile, _ := writeQuestions(t, 2)
	agents := writeOracleRegistry(t, "http://127.0.0.1:1/v1", "alpha")
	// An export whose meta.json, and a packet directory whose packets, are endless.
	export := filepath.Join(dir, "export")
	packets := filepath.Join(dir, "packets")
	for _, link := range []string{filepath.Join(export, "meta.json"), filepath.Join(packets, "K000.json"), filepath.Join(packets, "K001.json")} {
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(zero, link); err != nil {
			t.Fatal(err)
		}
	}
	type endless struct {
		name string
		args []string
		want string
	}
	cases := []endless{
		{"score --in", []string{"score", "--in", zero}, "/dev/zero: line 1 is longer than 1 MiB, the limit of a line"},
		{"report --in", []string{"report", "leaderboard", "--in", zero}, "/dev/zero: line 1 is longer than 1 MiB"},
		{"oracle eval --questions", []string{"oracle", "eval", "--questions", zero, "--agents", agents}, "/dev/zero: questions: line 1 is longer than 1 MiB, the limit of a line"},
		{"oracle eval --agents", []string{"oracle", "eval", "--questions", qfile, "--agents", zero}, "/dev/zero: agents file: larger than 16 MiB, the limit of an agents file"},
		{"oracle eval evidence packets", []string{"oracle", "eval", "--questions", qfile, "--agents", agents, "--evidence", "dir:" + packets},
			"K000.json is a device, not a regular file"},
		{"backtest --agents", []string{"backtest", "--source", "forecastbench", "--agents", zero, "--db", db}, "/dev/zero: agents file: larger than 16 MiB"},
		{"import forecastbench --questions", []string{"import", "forecastbench", "--questions", zero, "--db", db}, "forecastbench: /dev/zero:1:2: invalid JSON"},
		{"config --config", []string{"config", "--config", zero}, "config: /dev/zero is a device, not a regular file"},
		{"round create --rules", []string{"round", "create", "--rules", zero, "--db", db}, "--rules: /dev/zero is a device, not a regular file"},
		{"agent run --key", []string{"agent", "run", "--server", "http://127.0.0.1:1", "--key", zero}, "load key /dev/zero: more than 1024 bytes is not a key file"},
		// An export's files must be regular files: a device is refused
		// before it is read (tables that are not, and the bounds of
		// regular files, are tested in package export).
		{"verify --export meta.json", []string{"verify", "--export", export}, "meta.json is not a regular file (a device)"},
	}
	for _, c := range cases {
		_, _, err := cli(t, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// child is the arena command run as a separate process (the test binary
// re-executed), watched: it is killed if its memory passes rssLimit or it
// runs past its deadline.
type child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	maxRSS atomic.Int64 // bytes, as last seen in /proc
	killed atomic.Value // string: why the watchdog killed it
}

const rssLimit = 400 << 20

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	return watchChild(t, exec.Command(os.Args[0], args...))
}

// startChildIgnoringSIGINT starts the arena command as startChild does,
// but with SIGINT ignored from the start, as a non-interactive shell
// starts a background job.
func startChildIgnoringSIGINT(t *testing.T, args ...string) *child {
	t.Helper()
	return watchChild(t, exec.Command("sh", append([]string{"-c", `trap "" INT; exec "$0" "$@"`, os.Args[0]}, args...)...))
}

func watchChild(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.cmd.Wait()
		close(c.done)
	}()
	go func() {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case <-c.done:
				return
			case <-deadline:
				c.killed.Store("ran past 30 s")
				c.cmd.Process.Kill()
				return
			case <-time.After(20 * time.Millisecond):
			}
			if rss := procRSS(c.cmd.Process.Pid); rss > c.maxRSS.Load() {
				c.maxRSS.Store(rss)
				if rss > rssLimit {
					c.killed.Store(fmt.Sprintf("memory grew to %d MB", rss>>20))
					c.cmd.Process.Kill()
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// procRSS reads a process's resident memory from /proc (0 if unknown).
func procRSS(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// wait waits up to d for the child to exit and returns how it ended.
func (c *child) wait(t *testing.T, d time.Duration) *os.ProcessState {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		t.Fatalf("still running %v later; stderr: %s", d, c.stderr.String())
	}
	if why, _ := c.killed.Load().(string); why != "" {
		t.Fatalf("killed: %s; stderr: %s", why, c.stderr.String())
	}
	return c.cmd.ProcessState
}

// openedForReading waits until a process has the FIFO open for reading:
// until then a non-blocking open for writing fails. It returns the
// writing end.
// openingFIFO waits until a thread of process pid waits in the kernel
// for a FIFO's other end.
func openingFIFO(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, th := range threads {
			if b, err := os.ReadFile(th); err == nil && string(b) == "wait_for_partner" {
				return
			}
		}
	}
	t.Fatalf("process %d never waited for a FIFO's writer", pid)
}

func openedForReading(t *testing.T, fifo string) *os.File {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			syscall.SetNonblock(fd, false)
			return os.NewFile(uintptr(fd), fifo)
		}
	}
	t.Fatal("the FIFO was never opened for reading")
	return nil
}

// A long command stops promptly on SIGTERM or SIGINT, saying in one line
// that it was interrupted, with exit status 130, while reading an endless pipe (fed or
// stalled); a second signal kills a command that does not stop; endless
// files are refused with bounded memory.
func TestSignalsAndEndlessInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	agents := writeOracleRegistry(t, "http://127.0.0.1:1/v1", "alpha")
	header := "agent,round,market,category,forecast,benchmark,outcome\n"
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		feed func(w *os.File) // writes into the FIFO until it breaks
	}{
		{"score --in on a fed pipe, SIGTERM", syscall.SIGTERM, func(w *os.File) {
			w.WriteString(header)
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, "a,r%d,m%d,c,0.5,0.5,1\n", i, i); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}},
		{"score --in on a stalled pipe, SIGINT", syscall.SIGINT, func(w *os.File) { w.WriteString(header) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "in.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p := startChild(t, "score", "--in", fifo)
			w := openedForReading(t, fifo)
			defer w.Close()
			go c.feed(w)
			time.Sleep(300 * time.Millisecond)
			sent := time.Now()
			p.cmd.Process.Signal(c.sig)
			st := p.wait(t, 5*time.Second)
			t.Logf("stopped %v after the signal, %d MB resident at most: %s", time.Since(sent).Round(time.Millisecond), p.maxRSS.Load()>>20, strings.TrimSpace(p.stderr.String()))
			if st.ExitCode() != exitInterrupted || p.stderr.String() != "arena: score: interrupted ("+strings.ToLower(c.sig.String())+" signal received)\n" {
				t.Errorf("exit %v, stderr %q", st, p.stderr.String())
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"score --in /dev/zero", []string{"score", "--in", "/dev/zero"}, "arena: score: /dev/zero: line 1 is longer than 1 MiB, the limit of a line"},
		{"oracle eval --questions /dev/zero", []string{"oracle", "eval", "--questions", "/dev/zero", "--agents", agents}, "/dev/zero: questions: line 1 is longer than 1 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startChild(t, c.args...)
			st := p.wait(t, 20*time.Second)
			t.Logf("%d MB resident at most", p.maxRSS.Load()>>20)
			if st.ExitCode() != 1 || !strings.Contains(p.stderr.String(), c.want) {
				t.Errorf("exit %v, stderr %q", st, p.stderr.String())
			}
		})
	}
	// A second signal kills: by the signal's default action, or, for a
	// process started with SIGINT ignored (whose handler gives the
	// ignoring back after the first), by an exit as a shell reports a
	// kill by SIGINT.
	for _, c := range []struct {
		name  string
		start func(t *testing.T, args ...string) *child
		ended func(syscall.WaitStatus) bool
	}{
		{"a second signal kills", startChild, func(ws syscall.WaitStatus) bool {
			// Under a runner that ignores SIGINT (go tool test2json) the
			// child inherits the ignoring: the case below.
			return ws.Signaled() && ws.Signal() == syscall.SIGINT || signal.Ignored(os.Interrupt) && ws.Exited() && ws.ExitStatus() == exitInterrupted
		}},
		{"a second signal ends a command started with SIGINT ignored", startChildIgnoringSIGINT,
			func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == exitInterrupted }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Opening a FIFO no one writes to blocks in the kernel, where
			// the first signal's cancellation cannot reach.
			fifo := filepath.Join(t.TempDir(), "in.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p := c.start(t, "score", "--in", fifo)
			openingFIFO(t, p.cmd.Process.Pid)
			p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.done:
				t.Fatalf("the first signal ended it: %v %s", p.cmd.ProcessState, p.stderr.String())
			case <-time.After(300 * time.Millisecond):
			}
			p.cmd.Process.Signal(syscall.SIGINT)
			if st := p.wait(t, 5*time.Second); !c.ended(st.Sys().(syscall.WaitStatus)) {
				t.Errorf("after a second SIGINT: %v", st)
			}
		})
	}
}
