package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

const fixtureOrigin = "arena.test/log"

// exportCheckpointed publishes the log's checkpoint, cosigned over HTTP
// by two witnesses, and exports it with the tables.
func (f *fixture) exportCheckpointed(ctx context.Context) error {
	pub, err := tlog.NewPublisher(f.res.App.TLog, fixtureOrigin, &tlog.MemCheckpoints{})
	if err != nil {
		return err
	}
	logs, err := witness.ParseLogs([]byte("log " + f.vkey + "\n"))
	if err != nil {
		return err
	}
	policy := "log " + f.vkey + "\n"
	for i := range 2 {
		key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{byte(20 + i)}, 32))
		w, err := witness.New(fmt.Sprintf("witness%d.test/w", i), key, logs, filepath.Join(f.res.Dir, fmt.Sprintf("witness%d", i)))
		if err != nil {
			return err
		}
		w.Logger = slog.New(slog.DiscardHandler)
		srv := httptest.NewServer(w.Handler())
		defer srv.Close()
		policy += fmt.Sprintf("witness w%d %s %s\n", i, w.VerifierKey(), srv.URL)
	}
	f.policy = []byte(policy + "group both all w0 w1\nquorum both\n")
	p, err := witness.ParsePolicy(f.policy)
	if err != nil {
		return err
	}
	pub.Cosigner = &witness.Client{Witnesses: p.Remotes()}
	if _, err := pub.Publish(ctx); err != nil {
		return err
	}
	n, err := pub.Checkpoint(ctx)
	if err != nil {
		return err
	}
	if f.checkpointed, err = os.MkdirTemp(f.res.Dir, "export-"); err != nil {
		return err
	}
	_, err = export.Write(ctx, f.source(), f.checkpointed, export.Options{Format: export.JSONL, Checkpoint: n})
	return err
}

// checkpoint rewrites the export's checkpoint note.
func (e *edited) checkpoint(change func(n []byte) []byte) {
	e.raw(export.CheckpointFile, change)
}

// signCheckpoint is what an operator holding the log key can do: sign
// another checkpoint, which no witness cosigned.
func (e *edited) signCheckpoint(c tlog.Checkpoint) []byte {
	s, err := tlog.NoteSigner(c.Origin, e.f.logKey())
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := note.Sign(&note.Note{Text: string(c.Text())}, s)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// exported is the export's checkpoint, parsed.
func (e *edited) exported() tlog.Checkpoint {
	b, err := os.ReadFile(filepath.Join(e.dir, export.CheckpointFile))
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// checkpointCases edit the checkpoint an export carries, its signed head
// (verified with the log key only: TestCheckpointPolicy checks the
// cosignatures).
func checkpointCases() []tamper {
	at := func(column string) want { return want{export.CheckpointFile, "", column} }
	return []tamper{
		{name: "`checkpoint`: as exported, cosigned by two witnesses", from: "checkpoint", edit: func(e *edited) want { return want{} }},
		{name: "`checkpoint`: a cosignature by a witness no policy names added", from: "checkpoint", edit: func(e *edited) want {
			e.checkpoint(func(n []byte) []byte {
				return append(n, "— witness9.test/w AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n"...)
			})
			return want{}
		}},
		{name: "`checkpoint`: re-signed by the log key for a prefix of the log, with its root (the entries after it are not covered)", from: "checkpoint", edit: func(e *edited) want {
			c := e.exported()
			c.Size -= 3
			lt := e.table("log_entries")
			var hashes [][]byte
			for i := range c.Size {
				hashes = append(hashes, mustHex(e.t, lt.Rows[i][e.idx("log_entries", "leaf_hash")]))
			}
			tree, err := tlog.NewTree(hashes)
			if err != nil {
				e.t.Fatal(err)
			}
			c.Hash, _ = tree.Root(c.Size)
			n := e.signCheckpoint(c)
			e.checkpoint(func([]byte) []byte { return n })
			return want{"log_entries", fmt.Sprintf("idx=%d", c.Size), "idx"}
		}},
		{name: "`checkpoint`: its root hash changed", from: "checkpoint", edit: func(e *edited) want {
			e.checkpoint(func(n []byte) []byte {
				lines := bytes.SplitN(n, []byte("\n"), 4)
				// Another base64 letter: still 32 bytes, another root.
				if lines[2][0] == 'A' {
					lines[2][0] = 'B'
				} else {
					lines[2][0] = 'A'
				}
				return bytes.Join(lines, []byte("\n"))
			})
			return at("signature")
		}},
		{name: "`checkpoint`: signed by another key", from: "checkpoint", edit: func(e *edited) want {
			s, _ := tlog.NoteSigner(fixtureOrigin, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)))
			n, _ := note.Sign(&note.Note{Text: string(e.exported().Text())}, s)
			e.checkpoint(func([]byte) []byte { return n })
			return at("signature")
		}},
		{name: "`checkpoint`: re-signed by the log key for another root", from: "checkpoint", edit: func(e *edited) want {
			c := e.exported()
			c.Hash = bytes.Repeat([]byte{1}, 32)
			n := e.signCheckpoint(c)
			e.checkpoint(func([]byte) []byte { return n })
			return want{"log_entries", "", "leaf_hash"}
		}},
		{name: "`checkpoint`: re-signed by the log key for one more entry than exported", from: "checkpoint", edit: func(e *edited) want {
			c := e.exported()
			c.Size++
			n := e.signCheckpoint(c)
			e.checkpoint(func([]byte) []byte { return n })
			return want{"log_entries", fmt.Sprintf("idx=%d", c.Size-1), ""}
		}},
		{name: "`checkpoint`: re-signed by the log key over 10¹² entries", from: "checkpoint", edit: func(e *edited) want {
			c := e.exported()
			c.Size = 1e12
			n := e.signCheckpoint(c)
			e.checkpoint(func([]byte) []byte { return n })
			return want{"log_entries", "", ""}
		}},
		{name: "`checkpoint`: truncated", from: "checkpoint", edit: func(e *edited) want {
			e.checkpoint(func(n []byte) []byte { return n[:20] })
			return at("")
		}},
		{name: "log rehashed: a score changed in the log and the export, the witnessed checkpoint kept", from: "checkpoint", edit: func(e *edited) want {
			i := logRow(e, tlog.KindScore, `"round_id":2,`, `"agent":"0x`)
			e.leaf(i, `"brier_bps2":(\d+)`, "1")
			e.rehash()
			return want{"log_entries", "", "leaf_hash"}
		}},
	}
}

// A checkpoint cosigned by two witnesses passes a 2-of-2 policy; with one
// cosignature removed or forged, re-signed by the operator, or missing,
// verification fails naming the checkpoint and what is wrong; a verifier
// key of another origin or key fails too.
func TestCheckpointPolicy(t *testing.T) {
	f := played(t)
	policy, err := witness.ParsePolicy(f.policy)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := export.Verify(f.checkpointed, export.VerifyOptions{VKey: f.vkey, Policy: policy})
	if err != nil || !rep.Quorum || rep.Checkpoint == nil || rep.Checkpoint.Size != rep.LogSize {
		t.Fatalf("the cosigned export: %+v, %v", rep, err)
	}
	n, err := os.ReadFile(filepath.Join(f.checkpointed, export.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(n), "\n") // 3 text lines, a blank one, the log's signature, 2 cosignatures, ""
	if len(lines) != 8 {
		t.Fatalf("checkpoint %q: want the log's signature and two cosignatures", n)
	}
	forged := slices.Clone(lines)
	forged[6] = forge(t, forged[6])
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(n)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NoteSigner(fixtureOrigin, f.logKey())
	if err != nil {
		t.Fatal(err)
	}
	c.Hash = bytes.Repeat([]byte{2}, 32)
	resigned, err := note.Sign(&note.Note{Text: string(c.Text())}, s)
	if err != nil {
		t.Fatal(err)
	}
	otherVKey, _ := tlog.VerifierKey("other.test/log", f.logKey().Public().(ed25519.PublicKey))
	for _, tc := range []struct {
		name       string
		checkpoint []byte // nil: no checkpoint file
		vkey       string
		column     string
	}{
		{"last cosignature removed", []byte(strings.Join(lines[:6], "")), f.vkey, "cosignatures"},
		{"first cosignature removed", []byte(strings.Join(append(slices.Clone(lines[:5]), lines[6:]...), "")), f.vkey, "cosignatures"},
		{"a cosignature forged", []byte(strings.Join(forged, "")), f.vkey, "cosignatures"},
		{"re-signed by the log key for another root, without cosignatures", resigned, f.vkey, "cosignatures"},
		{"no checkpoint", nil, f.vkey, ""},
		{"a verifier key of another origin", n, otherVKey, "signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyExport(t, f.checkpointed)
			path := filepath.Join(dir, export.CheckpointFile)
			if tc.checkpoint == nil {
				os.Remove(path)
			} else if err := os.WriteFile(path, tc.checkpoint, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := export.Verify(dir, export.VerifyOptions{VKey: tc.vkey, Policy: policy})
			var m *export.Mismatch
			if !errors.As(err, &m) || m.Table != export.CheckpointFile || m.Column != tc.column {
				t.Fatalf("want a difference in checkpoint %s, got %v", tc.column, err)
			}
			t.Logf("refused: %v", err)
		})
	}
	// A verifier key of another key than --log-key's is refused at once.
	other, _ := tlog.VerifierKey(fixtureOrigin, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey))
	if _, err := export.Verify(f.checkpointed, export.VerifyOptions{VKey: other, LogKey: f.res.App.TLog.PublicKey()}); arena.ErrorKind(err) != arena.EINVALID {
		t.Fatalf("a verifier key of another key: %v", err)
	}
}

// forge flips a bit of the signature on a note's signature line, keeping
// its key name and key ID.
func forge(t *testing.T, line string) string {
	t.Helper()
	i := strings.LastIndex(line, " ")
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(line[i+1:], "\n"))
	if err != nil || len(sig) < 10 {
		t.Fatalf("signature line %q", line)
	}
	sig[len(sig)-1] ^= 1
	return line[:i+1] + base64.StdEncoding.EncodeToString(sig) + "\n"
}

// Write refuses a checkpoint that is not its log's: signed by another
// key, of a tree larger than the log, or with another root, and none at
// all; a checkpoint of the log before it grew is a conflict (the tables
// would hold what it does not cover). It writes nothing then.
func TestWriteCheckpointRefused(t *testing.T) {
	f := played(t)
	ctx := context.Background()
	n, err := os.ReadFile(filepath.Join(f.checkpointed, export.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(n)))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key ed25519.PrivateKey, c tlog.Checkpoint) []byte {
		s, err := tlog.NoteSigner(c.Origin, key)
		if err != nil {
			t.Fatal(err)
		}
		n, err := note.Sign(&note.Note{Text: string(c.Text())}, s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	size, err := f.res.App.TLog.Store.LogSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	larger, other := c, c
	larger.Size = size + 1
	other.Hash = bytes.Repeat([]byte{3}, 32)
	for name, bad := range map[string][]byte{
		"signed by another key": sign(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)), c),
		"larger than the log":   sign(f.logKey(), larger),
		"another root":          sign(f.logKey(), other),
		"not a checkpoint":      []byte("hello\n\n— x y\n"),
		"none":                  nil,
	} {
		dir := filepath.Join(t.TempDir(), "export")
		_, err := export.Write(ctx, f.source(), dir, export.Options{Checkpoint: bad})
		if arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%s: the export directory was created", name)
		}
		t.Logf("%s: %v", name, err)
	}
	prefix := c
	prefix.Size = size - 1
	if prefix.Hash, err = f.res.App.TLog.RootAt(ctx, prefix.Size); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := export.Write(ctx, f.source(), dir, export.Options{Checkpoint: sign(f.logKey(), prefix)}); arena.ErrorKind(err) != arena.ECONFLICT || !errors.Is(err, export.ErrLogGrew) {
		t.Errorf("a checkpoint the log grew past: %v, want ECONFLICT wrapping ErrLogGrew", err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Errorf("a checkpoint the log grew past: the export directory was created")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
