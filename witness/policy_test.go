package witness_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/witness"
)

// cosigners are witnesses with their keys, named w0, w1, ….
type cosigners struct {
	keys  []ed25519.PrivateKey
	vkeys []string
}

func newCosigners(t *testing.T, n int) cosigners {
	var c cosigners
	for i := range n {
		_, k, _ := ed25519.GenerateKey(nil)
		vkey, err := witness.VerifierKey(fmt.Sprintf("witness%d.test/w", i), k.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		c.keys, c.vkeys = append(c.keys, k), append(c.vkeys, vkey)
	}
	return c
}

// cosign adds the cosignatures of the witnesses listed to msg.
func (c cosigners) cosign(t *testing.T, msg []byte, which ...int) []byte {
	t.Helper()
	text := textOf(msg)
	out := bytes.Clone(msg)
	for _, i := range which {
		s, _ := witness.NewSigner(fmt.Sprintf("witness%d.test/w", i), c.keys[i], nil)
		signed, err := note.Sign(&note.Note{Text: text}, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, signed[len(text)+1:]...)
	}
	return out
}

// textOf is a signed note's text.
func textOf(msg []byte) string { return string(msg[:bytes.LastIndex(msg, []byte("\n\n"))+1]) }

// wrongKeyID is vkey with another key ID.
func wrongKeyID(vkey string) string {
	parts := strings.SplitN(vkey, "+", 3)
	id := "00000000"
	if parts[1] == id {
		id = "00000001"
	}
	return parts[0] + "+" + id + "+" + parts[2]
}

// Policies that parse, and what each accepts.
func TestPolicyVerify(t *testing.T) {
	l := newTestLog(t, "arena.test/log", "a", 8)
	msg := l.note(8, l.key)
	ws := newCosigners(t, 4)
	logLine := "log " + mustVKey(t, l.origin, l.key) + " https://arena.test/log\n"
	witnesses := ""
	for i, v := range ws.vkeys {
		witnesses += fmt.Sprintf("witness w%d %s https://witness%d.test\n", i, v, i)
	}
	for _, tc := range []struct {
		name    string
		policy  string
		cosign  []int
		accepts bool
	}{
		{"2 of 2: both cosign", "group g all w0 w1\nquorum g\n", []int{0, 1}, true},
		{"2 of 2: one cosignature missing", "group g all w0 w1\nquorum g\n", []int{0}, false},
		{"2 of 2: a cosignature by a witness outside the policy", "group g all w0 w1\nquorum g\n", []int{0, 2}, false},
		{"2 of 3 (numeric)", "group g 2 w0 w1 w2\nquorum g\n", []int{2, 0}, true},
		{"2 of 3: one", "group g 2 w0 w1 w2\nquorum g\n", []int{1}, false},
		{"any", "group g any w0 w1\nquorum g\n", []int{1}, true},
		{"a single witness", "quorum w3\n", []int{3}, true},
		{"a single witness: another cosigns", "quorum w3\n", []int{0, 1, 2}, false},
		{"nested: all of (w0, any of w1 w2)", "group y any w1 w2\ngroup xy all w0 y\nquorum xy\n", []int{0, 2}, true},
		{"nested: the inner group unmet", "group y any w1 w2\ngroup xy all w0 y\nquorum xy\n", []int{0, 3}, false},
		{"quorum none", "quorum none\n", nil, true},
		{"comments, blank lines and tabs", "# witnesses\n\n\tgroup\tg  all w0\tw1   \n  # end\nquorum g", []int{0, 1}, true},
	} {
		p, err := witness.ParsePolicy([]byte(logLine + witnesses + tc.policy))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		c, err := p.Verify(ws.cosign(t, msg, tc.cosign...))
		if (err == nil) != tc.accepts {
			t.Errorf("%s: verify: %v, want accepted %v", tc.name, err, tc.accepts)
		}
		if err == nil && (c.Origin != l.origin || c.Size != 8) {
			t.Errorf("%s: checkpoint %+v", tc.name, c)
		}
		// A quorum not met names the witnesses whose cosignature lacks.
		if tc.name == "2 of 2: one cosignature missing" && (err == nil || !strings.Contains(err.Error(), "no cosignature by w1")) {
			t.Errorf("%s: %v does not name w1", tc.name, err)
		}
	}

	p, err := witness.ParsePolicy([]byte(logLine + witnesses + "group g all w0 w1\nquorum g\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rs := p.Remotes(); len(rs) != 4 || rs[1].Name != "w1" || rs[1].URL != "https://witness1.test" {
		t.Fatalf("remotes %+v", rs)
	}
	both := ws.cosign(t, msg, 0, 1)
	note7 := l.note(7, l.key)
	for name, bad := range map[string][]byte{
		"a forged cosignature":                    corruptLastSignature(t, both),
		"the log's signature forged":              append(corruptLastSignature(t, msg), both[len(msg):]...),
		"cosignatures of another checkpoint":      append(bytes.Clone(msg), ws.cosign(t, note7, 0, 1)[len(note7):]...),
		"signed by another key of the log's name": ws.cosign(t, signedBy(t, newTestLog(t, l.origin, "x", 1).key, l.origin, textOf(msg)), 0, 1),
	} {
		if _, err := p.Verify(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Without log lines, the caller gives the log key.
	q, err := witness.ParsePolicy([]byte(witnesses + "group g all w0 w1\nquorum g\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Verify(both); err == nil {
		t.Fatal("verified without any log key")
	}
	if _, err := q.Verify(both, mustLogVerifier(t, l.origin, l.key)); err != nil {
		t.Fatalf("with the log key given: %v", err)
	}
	// A log key named otherwise than the checkpoint's origin is no
	// signature of that log.
	if _, err := q.Verify(ws.cosign(t, signedBy(t, l.key, "other.test/log", textOf(msg)), 0, 1), mustLogVerifier(t, "other.test/log", l.key)); err == nil {
		t.Fatal("a checkpoint of arena.test/log accepted under a key named other.test/log")
	}
}

// Malformed policies are refused with the line at fault.
func TestParsePolicyRejects(t *testing.T) {
	ws := newCosigners(t, 2)
	l := newTestLog(t, "arena.test/log", "a", 1)
	logVKey := mustVKey(t, l.origin, l.key)
	w0, w1 := "witness w0 "+ws.vkeys[0]+"\n", "witness w1 "+ws.vkeys[1]+"\n"
	for name, policy := range map[string]string{
		"no quorum":                        w0,
		"two quorums":                      w0 + "quorum w0\nquorum w0\n",
		"quorum of an unknown name":        w0 + "quorum w9\n",
		"quorum before its witness":        "quorum w0\n" + w0,
		"unknown keyword":                  w0 + "witnesses w1\nquorum w0\n",
		"witness named none":               "witness none " + ws.vkeys[0] + "\nquorum none\n",
		"witness defined twice":            w0 + "witness w0 " + ws.vkeys[1] + "\nquorum w0\n",
		"two witnesses with one key":       w0 + "witness w1 " + ws.vkeys[0] + "\nquorum w0\n",
		"witness with a log (0x01) key":    "witness w0 " + logVKey + "\nquorum w0\n",
		"log with a witness (0x04) key":    "log " + ws.vkeys[0] + "\nquorum none\n",
		"log listed twice":                 "log " + logVKey + "\nlog " + logVKey + "\nquorum none\n",
		"witness line without a key":       "witness w0\nquorum none\n",
		"witness line with extra fields":   "witness w0 " + ws.vkeys[0] + " https://w0 extra\nquorum none\n",
		"group without members":            w0 + "group g all\nquorum g\n",
		"group threshold 0":                w0 + w1 + "group g 0 w0 w1\nquorum g\n",
		"group threshold above its size":   w0 + w1 + "group g 3 w0 w1\nquorum g\n",
		"group threshold with a leading 0": w0 + w1 + "group g 02 w0 w1\nquorum g\n",
		"group threshold not a number":     w0 + w1 + "group g most w0 w1\nquorum g\n",
		"group of an unknown member":       w0 + "group g all w0 w9\nquorum g\n",
		"member listed twice":              w0 + w1 + "group g all w0 w0\nquorum g\n",
		"member of two groups":             w0 + w1 + "group g all w0 w1\ngroup h any w0\nquorum g\n",
		"group containing none":            w0 + "group g all w0 none\nquorum g\n",
		"a control character":              w0 + "quorum w0\r\n",
		"a vkey with a wrong key ID":       "witness w0 " + wrongKeyID(ws.vkeys[0]) + "\nquorum none\n",
	} {
		if _, err := witness.ParsePolicy([]byte(policy)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := witness.ParseLogs([]byte("log " + logVKey + "\n" + w0)); err == nil {
		t.Error("a witness's log list with a witness line parsed")
	}
	logs, err := witness.ParseLogs([]byte("# logs\nlog " + logVKey + " https://arena.test/log\n"))
	if err != nil || len(logs) != 1 || logs[0].Origin != l.origin || logs[0].URL != "https://arena.test/log" {
		t.Fatalf("log list: %+v, %v", logs, err)
	}
}

// Fuzzed policy files: parsing never panics, and a parsed policy
// evaluates a checkpoint without panicking.
func FuzzParsePolicy(f *testing.F) {
	_, k0, _ := ed25519.GenerateKey(nil)
	_, k1, _ := ed25519.GenerateKey(nil)
	v0, _ := witness.VerifierKey("w0.test", k0.Public().(ed25519.PublicKey))
	v1, _ := witness.VerifierKey("w1.test", k1.Public().(ed25519.PublicKey))
	f.Add([]byte("witness a " + v0 + "\nwitness b " + v1 + " https://b\ngroup g 1 a b\ngroup h all g\nquorum h\n"))
	f.Add([]byte("# c\nquorum none\n"))
	f.Add([]byte("log " + wrongKeyID(v0) + "\nquorum none"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := witness.ParsePolicy(data)
		if err != nil {
			return
		}
		p.Verify([]byte("w0.test\n1\n" + strings.Repeat("A", 43) + "=\n\n— w0.test AAAAAAAA\n"))
	})
}
