package tlog_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The module has one Merkle tree and one signed head, and this test keeps
// it so: every root, proof and tile comes from tlog.Tree, and the log key
// signs nothing but C2SP checkpoints. It reads the module's non-test Go
// files and checks that
//   - only tlog's tree, tiles and remote client import x/mod's tlog (the
//     remote client proves a remote log from its tiles), and only tlog.go
//     imports transparency-dev's merkle, for its verifiers and leaf hash;
//   - nothing hashes Merkle nodes itself (HashChildren, NodeHash);
//   - of transparency-dev's proof package, only the verifiers are called;
//   - signatures are made only by the checkpoint publisher (note.Sign
//     with the log key) and by the witness (its cosignatures);
//   - the retired head's message is named only by the verifier that
//     refuses exports of that format.
func TestOneTreeOneHead(t *testing.T) {
	root := ".."
	importers := map[string]map[string]bool{} // import path → files
	var nodeHashers, proofCalls, signers, headFormat []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		local := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if importers[p] == nil {
				importers[p] = map[string]bool{}
			}
			importers[p][rel] = true
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			local[n] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				sel := n.Sel.Name
				if sel == "HashChildren" || sel == "NodeHash" {
					nodeHashers = append(nodeHashers, rel+": "+sel)
				}
				if x, ok := n.X.(*ast.Ident); ok {
					switch local[x.Name] {
					case "github.com/transparency-dev/merkle/proof":
						if !strings.HasPrefix(sel, "Verify") {
							proofCalls = append(proofCalls, rel+": proof."+sel)
						}
					case "golang.org/x/mod/sumdb/note", "crypto/ed25519":
						if sel == "Sign" {
							signers = append(signers, rel)
						}
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, "tree head v1") {
					headFormat = append(headFormat, rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files from the module", files)
	}
	for path, want := range map[string][]string{
		"golang.org/x/mod/sumdb/tlog":                {"tlog/remote.go", "tlog/tile.go", "tlog/tree.go"},
		"github.com/transparency-dev/merkle/proof":   {"tlog/tlog.go"},
		"github.com/transparency-dev/merkle/rfc6962": {"tlog/tlog.go"},
		"github.com/transparency-dev/merkle/compact": nil,
		"github.com/transparency-dev/merkle":         nil,
	} {
		if got := slices.Sorted(maps.Keys(importers[path])); !slices.Equal(got, want) {
			t.Errorf("%s is imported by %v, want only %v: roots and proofs come from tlog.Tree", path, got, want)
		}
	}
	if len(nodeHashers) > 0 {
		t.Errorf("Merkle nodes hashed outside tlog.Tree: %v", nodeHashers)
	}
	if len(proofCalls) > 0 {
		t.Errorf("transparency-dev's proofs made, not only verified: %v", proofCalls)
	}
	slices.Sort(signers)
	if want := []string{"tlog/publish.go", "witness/cosignature.go", "witness/witness.go"}; !slices.Equal(slices.Compact(signers), want) {
		t.Errorf("signatures made in %v, want only in %v: the log key signs C2SP checkpoints only", slices.Compact(signers), want)
	}
	if want := []string{"export/verify.go"}; !slices.Equal(headFormat, want) {
		t.Errorf("the retired tree head named in %v, want only in %v (which refuses it)", headFormat, want)
	}
}
