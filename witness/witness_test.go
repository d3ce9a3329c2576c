package witness_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// testLog is a log made of synthetic leaves, signing its checkpoints.
type testLog struct {
	t      *testing.T
	origin string
	key    ed25519.PrivateKey
	leaves [][]byte
}

func newTestLog(t *testing.T, origin, seed string, n int) *testLog {
	l := &testLog{t: t, origin: origin}
	_, l.key, _ = ed25519.GenerateKey(nil)
	for i := range n {
		l.leaves = append(l.leaves, tlog.LeafHash(fmt.Appendf(nil, "%s %d", seed, i)))
	}
	return l
}

func (l *testLog) tree() *tlog.Tree {
	tree, err := tlog.NewTree(l.leaves)
	if err != nil {
		l.t.Fatal(err)
	}
	return tree
}

func (l *testLog) root(size uint64) []byte {
	r, err := l.tree().Root(size)
	if err != nil {
		l.t.Fatal(err)
	}
	return r
}

// note is the log's checkpoint of a size, signed by key.
func (l *testLog) note(size uint64, key ed25519.PrivateKey) []byte {
	return signedCheckpoint(l.t, key, tlog.Checkpoint{Origin: l.origin, Size: size, Hash: l.root(size)})
}

func (l *testLog) proof(old, size uint64) [][]byte {
	if old == 0 || old == size {
		return nil
	}
	p, err := l.tree().ConsistencyProof(old, size)
	if err != nil {
		l.t.Fatal(err)
	}
	return p
}

func (l *testLog) entry() witness.Log {
	return witness.Log{Origin: l.origin, Verifier: mustLogVerifier(l.t, l.origin, l.key)}
}

func newWitness(t *testing.T, dir string, key ed25519.PrivateKey, logs ...*testLog) *witness.Witness {
	t.Helper()
	var ls []witness.Log
	for _, l := range logs {
		ls = append(ls, l.entry())
	}
	w, err := witness.New("witness.test/w1", key, ls, dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Logger = slog.New(slog.DiscardHandler)
	return w
}

func post(t *testing.T, url string, body []byte) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// The add-checkpoint endpoint, in order: each request's status is the one
// tlog-witness assigns, and only consistent checkpoints signed by a known
// log are cosigned.
func TestAddCheckpoint(t *testing.T) {
	a := newTestLog(t, "a.test/log", "a", 40)
	fork := &testLog{t: t, origin: a.origin, key: a.key, leaves: append(append([][]byte(nil), a.leaves[:5]...), newTestLog(t, "x", "fork", 35).leaves...)}
	b := newTestLog(t, "b.test/log", "b", 5)
	_, wKey, _ := ed25519.GenerateKey(nil)
	_, otherKey, _ := ed25519.GenerateKey(nil)
	w := newWitness(t, t.TempDir(), wKey, a, b)
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	wv, _ := witness.NewVerifier(w.VerifierKey())

	badSig := corruptLastSignature(t, a.note(10, a.key))
	emptyRoot := sha256.Sum256(nil)
	notEmpty := signedCheckpoint(t, b.key, tlog.Checkpoint{Origin: b.origin, Size: 0, Hash: b.root(1)})
	unknown := newTestLog(t, "unknown.test/log", "u", 3)
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		answer string // the 409 answer
	}{
		{"unknown log", witness.FormatAddCheckpoint(0, nil, unknown.note(3, unknown.key)), 404, ""},
		{"checkpoint signed by another key", witness.FormatAddCheckpoint(0, nil, a.note(10, otherKey)), 403, ""},
		{"checkpoint with a bad signature by the log key", witness.FormatAddCheckpoint(0, nil, badSig), 403, ""},
		{"no old size line", a.note(10, a.key), 400, ""},
		{"old size larger than the checkpoint", witness.FormatAddCheckpoint(11, nil, a.note(10, a.key)), 400, ""},
		{"malformed checkpoint text", witness.FormatAddCheckpoint(0, nil, signedBy(t, a.key, a.origin, a.origin+"\n10\nnot base64\n")), 400, ""},
		{"first checkpoint of a log", witness.FormatAddCheckpoint(0, nil, a.note(10, a.key)), 200, ""},
		{"stale old size", witness.FormatAddCheckpoint(0, nil, a.note(20, a.key)), 409, "10\n"},
		{"rollback to a smaller size", witness.FormatAddCheckpoint(0, nil, a.note(5, a.key)), 409, "10\n"},
		{"rollback sent with the current size", witness.FormatAddCheckpoint(10, nil, a.note(5, a.key)), 400, ""},
		{"wrong consistency proof", witness.FormatAddCheckpoint(10, a.proof(10, 21), a.note(20, a.key)), 422, ""},
		{"no consistency proof", witness.FormatAddCheckpoint(10, nil, a.note(20, a.key)), 422, ""},
		{"fork: a tree that differs from the cosigned one in its first entries", witness.FormatAddCheckpoint(10, fork.proof(10, 20), fork.note(20, a.key)), 422, ""},
		{"consistent checkpoint", witness.FormatAddCheckpoint(10, a.proof(10, 20), a.note(20, a.key)), 200, ""},
		{"fork at the cosigned size", witness.FormatAddCheckpoint(20, nil, fork.note(20, a.key)), 422, ""},
		{"the same checkpoint again", witness.FormatAddCheckpoint(20, nil, a.note(20, a.key)), 200, ""},
		{"size 0 with a root that is not the empty tree's", witness.FormatAddCheckpoint(0, nil, notEmpty), 422, ""},
		{"proof lines with old size 0", witness.FormatAddCheckpoint(0, [][]byte{emptyRoot[:]}, b.note(5, b.key)), 422, ""},
		{"empty tree", witness.FormatAddCheckpoint(0, nil, signedCheckpoint(t, b.key, tlog.Checkpoint{Origin: b.origin, Hash: emptyRoot[:]})), 200, ""},
		{"body too large", append(witness.FormatAddCheckpoint(20, nil, a.note(20, a.key)), make([]byte, 1<<17)...), 413, ""},
	} {
		status, ctype, answer := post(t, srv.URL, tc.body)
		if status != tc.status {
			t.Errorf("%s: %d %q, want %d", tc.name, status, answer, tc.status)
			continue
		}
		switch status {
		case 409:
			if ctype != "text/x.tlog.size" || answer != tc.answer {
				t.Errorf("%s: 409 %q %q, want text/x.tlog.size %q", tc.name, ctype, answer, tc.answer)
			}
		case 200:
			_, _, msg, _ := witness.ParseAddCheckpoint(tc.body)
			if n, err := note.Open(append(msg, answer...), note.VerifierList(wv)); err != nil || len(n.Sigs) != 1 {
				t.Errorf("%s: answer %q does not carry the witness's cosignature: %v", tc.name, answer, err)
			}
		}
	}
	// The monitoring endpoint serves the latest cosigned checkpoint.
	h := sha256.Sum256([]byte(a.origin))
	resp, err := http.Get(srv.URL + "/" + hex.EncodeToString(h[:]) + "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c, err := tlog.OpenCheckpoint(body, mustVKey(t, a.origin, a.key))
	if err != nil || c.Size != 20 {
		t.Fatalf("monitoring checkpoint %q: %+v %v", body, c, err)
	}
	if n, err := note.Open(body, note.VerifierList(wv)); err != nil || len(n.Sigs) != 1 {
		t.Fatalf("monitoring checkpoint not cosigned: %v", err)
	}
	if resp, _ := http.Get(srv.URL + "/" + strings.Repeat("0", 64) + "/checkpoint"); resp.StatusCode != 404 {
		t.Fatalf("monitoring checkpoint of an unknown log: %d", resp.StatusCode)
	}
}

// corruptLastSignature flips a bit of a note's last signature, keeping
// its key name and ID.
func corruptLastSignature(t *testing.T, msg []byte) []byte {
	t.Helper()
	i := bytes.LastIndex(msg[:len(msg)-1], []byte("\n")) + 1
	name, b64, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(string(msg[i:]), "\n"), "— "), " ")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	return append(bytes.Clone(msg[:i]), fmt.Sprintf("— %s %s\n", name, base64.StdEncoding.EncodeToString(raw))...)
}

func signedBy(t *testing.T, key ed25519.PrivateKey, origin, text string) []byte {
	t.Helper()
	s, _ := tlog.NoteSigner(origin, key)
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func mustVKey(t *testing.T, origin string, key ed25519.PrivateKey) string {
	t.Helper()
	vkey, err := tlog.VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return vkey
}

// A witness restarted from its state directory remembers every log's
// latest cosigned checkpoint; state its log's key does not verify stops it
// from starting.
func TestWitnessState(t *testing.T) {
	a := newTestLog(t, "a.test/log", "a", 40)
	dir := t.TempDir()
	_, wKey, _ := ed25519.GenerateKey(nil)
	w := newWitness(t, dir, wKey, a)
	if _, err := w.AddCheckpoint(0, nil, a.note(12, a.key)); err != nil {
		t.Fatal(err)
	}
	w = newWitness(t, dir, wKey, a)
	var conflict *witness.ConflictError
	if _, err := w.AddCheckpoint(0, nil, a.note(30, a.key)); !errors.As(err, &conflict) || conflict.Size != 12 {
		t.Fatalf("after a restart: %v, want a conflict at 12", err)
	}
	if _, err := w.AddCheckpoint(12, a.proof(12, 30), a.note(30, a.key)); err != nil {
		t.Fatal(err)
	}

	// The log's key in the configuration changed: the state does not
	// verify and the witness does not start.
	rekeyed := &testLog{t: t, origin: a.origin, leaves: a.leaves}
	_, rekeyed.key, _ = ed25519.GenerateKey(nil)
	if _, err := witness.New("witness.test/w1", wKey, []witness.Log{rekeyed.entry()}, dir); err == nil {
		t.Fatal("started with state its log's key does not verify")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
	if len(files) != 1 {
		t.Fatalf("state files %v", files)
	}
	if err := os.WriteFile(files[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := witness.New("witness.test/w1", wKey, []witness.Log{a.entry()}, dir); err == nil {
		t.Fatal("started with a corrupt state file")
	}
	if _, err := witness.New("witness.test/w1", wKey, []witness.Log{a.entry(), a.entry()}, t.TempDir()); err == nil {
		t.Fatal("started with a log listed twice")
	}
}

// Concurrent add-checkpoint requests from the same old size: one wins,
// the others get 409, and the state never goes back.
func TestConcurrentAdds(t *testing.T) {
	a := newTestLog(t, "a.test/log", "a", 60)
	_, wKey, _ := ed25519.GenerateKey(nil)
	w := newWitness(t, t.TempDir(), wKey, a)
	if _, err := w.AddCheckpoint(0, nil, a.note(10, a.key)); err != nil {
		t.Fatal(err)
	}
	notes := map[uint64][]byte{}
	for size := uint64(11); size <= 50; size++ {
		notes[size] = a.note(size, a.key)
	}
	var mu sync.Mutex
	var won []uint64
	var wg sync.WaitGroup
	for size := uint64(11); size <= 50; size++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.AddCheckpoint(10, a.proof(10, size), notes[size])
			var conflict *witness.ConflictError
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, size)
				mu.Unlock()
			case !errors.As(err, &conflict):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d requests from size 10 were cosigned: %v", len(won), won)
	}
	c, err := tlog.OpenCheckpoint(w.Latest(a.origin), mustVKey(t, a.origin, a.key))
	if err != nil || c.Size != won[0] {
		t.Fatalf("latest %+v, %v; the winner was %d", c, err, won[0])
	}
}

// Request bodies parse strictly.
func TestParseAddCheckpoint(t *testing.T) {
	h := strings.Repeat("A", 43) + "="
	good := "old 5\n" + h + "\n\nsome checkpoint"
	if old, proof, msg, err := witness.ParseAddCheckpoint([]byte(good)); err != nil || old != 5 || len(proof) != 1 || string(msg) != "some checkpoint" {
		t.Fatalf("%d %d %q %v", old, len(proof), msg, err)
	}
	for name, bad := range map[string]string{
		"no old line":                  h + "\n\ncp",
		"old size with a leading zero": "old 05\n\ncp",
		"old size negative":            "old -1\n\ncp",
		"old size with a space":        "old  5\n\ncp",
		"proof line not a hash":        "old 5\nAAAA\n\ncp",
		"proof line not base64":        "old 5\n" + strings.Repeat("!", 44) + "\n\ncp",
		"no blank line":                "old 5\n" + h + "\n",
		"no checkpoint":                "old 5\n\n",
		"64 proof lines":               "old 5\n" + strings.Repeat(h+"\n", 64) + "\ncp",
	} {
		if _, _, _, err := witness.ParseAddCheckpoint([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, _, _, err := witness.ParseAddCheckpoint([]byte("old 5\n" + strings.Repeat(h+"\n", 63) + "\ncp")); err != nil {
		t.Errorf("63 proof lines: %v", err)
	}
}

// Fuzzed add-checkpoint bodies: parsing never panics, and what parses
// formats back to the same bytes.
func FuzzParseAddCheckpoint(f *testing.F) {
	f.Add([]byte("old 0\n\nexample.com/log\n1\n" + strings.Repeat("A", 43) + "=\n\n— example.com/log AAAAAA==\n"))
	f.Add([]byte("old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\ncp\n"))
	f.Add([]byte("old 01\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		old, proof, msg, err := witness.ParseAddCheckpoint(body)
		if err != nil {
			return
		}
		if again := witness.FormatAddCheckpoint(old, proof, msg); !bytes.Equal(again, body) {
			t.Fatalf("%q parsed and formatted as %q", body, again)
		}
		if len(proof) > 63 || strconv.FormatUint(old, 10) == "" {
			t.Fatalf("%d proof lines", len(proof))
		}
	})
}
