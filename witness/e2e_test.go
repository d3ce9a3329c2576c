package witness_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// liveWitness is a witness serving HTTP on a loopback port.
type liveWitness struct {
	w    *witness.Witness
	addr string
	srv  *http.Server
}

// startWitness runs a witness from its state directory on addr
// ("127.0.0.1:0" for a new port).
func startWitness(t *testing.T, name string, key ed25519.PrivateKey, logs []witness.Log, dir, addr string) *liveWitness {
	t.Helper()
	w, err := witness.New(name, key, logs, dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Logger = slog.New(slog.DiscardHandler)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	lw := &liveWitness{w: w, addr: ln.Addr().String(), srv: &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}}
	go lw.srv.Serve(ln)
	t.Cleanup(lw.stop)
	return lw
}

// stop kills the witness: its port refuses connections from now on.
func (lw *liveWitness) stop() { lw.srv.Close() }

func (lw *liveWitness) url() string { return "http://" + lw.addr }

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	var err error
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if err = cond(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

// Two witnesses cosign a publishing log's checkpoints; one is killed and
// restarted from its state; a 2-of-2 policy accepts the checkpoint only
// with both cosignatures intact; a fork of the log gets no cosignature.
func TestTwoWitnesses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
		if err != nil {
			t.Fatal(err)
		}
		l := &tlog.Log{Store: db, Key: key}
		pub, err := tlog.NewPublisher(l, "arena.test/log", &tlog.MemCheckpoints{})
		if err != nil {
			t.Fatal(err)
		}
		pub.Interval = 600 * time.Millisecond
		pub.Logger = slog.New(slog.DiscardHandler)
		// The witnesses' configuration: the logs they cosign.
		logs, err := witness.ParseLogs([]byte("log " + pub.VerifierKey() + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, k1, _ := ed25519.GenerateKey(nil)
		_, k2, _ := ed25519.GenerateKey(nil)
		dir1, dir2 := t.TempDir(), t.TempDir()
		w1 := startWitness(t, "witness1.test/w", k1, logs, dir1, "127.0.0.1:0")
		w2 := startWitness(t, "witness2.test/w", k2, logs, dir2, "127.0.0.1:0")
		policy, err := witness.ParsePolicy([]byte("log " + pub.VerifierKey() + "\n" +
			"witness w1 " + w1.w.VerifierKey() + " " + w1.url() + "\n" +
			"witness w2 " + w2.w.VerifierKey() + " " + w2.url() + "\n" +
			"group both all w1 w2\nquorum both\n"))
		if err != nil {
			t.Fatal(err)
		}
		pub.Cosigner = &witness.Client{Witnesses: policy.Remotes()}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { pub.Run(runCtx); close(done) }()
		defer func() { cancel(); <-done }()

		// verified checks the served checkpoint against the policy and
		// returns its size.
		verified := func(size uint64) func() error {
			return func() error {
				n, err := pub.Checkpoint(ctx)
				if err != nil {
					return err
				}
				c, err := policy.Verify(n)
				if err != nil {
					return err
				}
				if c.Size != size {
					return errors.New("not the latest size yet")
				}
				return nil
			}
		}
		appendN(t, l, 10)
		eventually(t, "checkpoint 10 cosigned by both", verified(10))
		appendN(t, l, 5)
		eventually(t, "checkpoint 15 cosigned by both", verified(15))

		// One witness down: checkpoints go on, cosigned by the other,
		// and the 2-of-2 policy refuses them.
		w2.stop()
		appendN(t, l, 5)
		eventually(t, "checkpoint 20 published", func() error {
			if c, err := tlog.OpenCheckpoint(mustCheckpoint(t, pub), pub.VerifierKey()); err != nil || c.Size != 20 {
				return errors.New("not yet")
			}
			return nil
		})
		if err := verified(20)(); err == nil || !strings.Contains(err.Error(), "quorum") {
			t.Fatalf("checkpoint cosigned by one witness of two: %v", err)
		}
		one := mustCheckpoint(t, pub)
		if n, err := note.Open(one, note.VerifierList(policy.Witnesses[0].Verifier)); err != nil || len(n.Sigs) != 1 {
			t.Fatalf("the live witness did not cosign checkpoint 20: %v", err)
		}

		// Restarted from its state directory, the witness cosigns the
		// same checkpoint, proved consistent with the one it holds.
		w2 = startWitness(t, "witness2.test/w", k2, logs, dir2, w2.addr)
		eventually(t, "checkpoint 20 cosigned by both after the restart", verified(20))

		// A log server restarted knows no witness's size: the 409 answers
		// tell it.
		cancel()
		<-done
		pub.Cosigner = &witness.Client{Witnesses: policy.Remotes()}
		appendN(t, l, 3)
		if _, err := pub.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		if err := verified(23)(); err != nil {
			t.Fatal(err)
		}

		// The policy fails when one cosignature is removed or forged.
		n := mustCheckpoint(t, pub)
		lines := strings.SplitAfter(string(n), "\n")
		for name, bad := range map[string][]byte{
			"last cosignature removed":  []byte(strings.Join(lines[:len(lines)-2], "")),
			"first cosignature removed": []byte(strings.Join(append(lines[:len(lines)-3:len(lines)-3], lines[len(lines)-2:]...), "")),
			"a cosignature forged":      corruptLastSignature(t, n),
		} {
			if _, err := policy.Verify(bad); err == nil {
				t.Errorf("%s: the 2-of-2 policy accepted %q", name, bad)
			}
		}
		// An independent implementation verifies both cosignatures.
		var tw []note.Verifier
		for name, k := range map[string]ed25519.PrivateKey{"witness1.test/w": k1, "witness2.test/w": k2} {
			s, err := torchwood.NewCosignatureSigner(name, k)
			if err != nil {
				t.Fatal(err)
			}
			tw = append(tw, s.Verifier())
		}
		if got, err := note.Open(n, note.VerifierList(tw...)); err != nil || len(got.Sigs) != 2 {
			t.Fatalf("torchwood verified %v: %v", got, err)
		}

		// A fork: the same key and origin, another history. Neither
		// witness cosigns it, and they keep the checkpoint they hold.
		forkLog := &tlog.Log{Store: storetest.Open(t, "sqlite"), Key: key}
		if err := forkLog.Append(ctx, tlog.KindScore, "another history"); err != nil {
			t.Fatal(err)
		}
		appendN(t, forkLog, 29)
		fork, err := tlog.NewPublisher(forkLog, "arena.test/log", &tlog.MemCheckpoints{})
		if err != nil {
			t.Fatal(err)
		}
		fork.Cosigner = &witness.Client{Witnesses: policy.Remotes()}
		if _, err := fork.Publish(ctx); err == nil || strings.Count(err.Error(), "refused as inconsistent") != 2 {
			t.Fatalf("publishing a fork: %v", err)
		}
		if _, err := policy.Verify(mustCheckpoint(t, fork)); err == nil {
			t.Fatal("the fork's checkpoint passed the policy")
		}
		for _, lw := range []*liveWitness{w1, w2} {
			if c, err := tlog.OpenCheckpoint(lw.w.Latest("arena.test/log"), pub.VerifierKey()); err != nil || c.Size != 23 {
				t.Fatalf("a witness holds %+v after the fork, %v", c, err)
			}
		}
	})
}

func mustCheckpoint(t *testing.T, p *tlog.Publisher) []byte {
	t.Helper()
	n, err := p.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(n)
}

func appendN(t *testing.T, l *tlog.Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(context.Background(), tlog.KindScore, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
}
