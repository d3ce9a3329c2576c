package arena_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function of the packages TestFunctionLength
// checks, from its func keyword to its closing brace.
const maxFuncLines = 100

// TestFunctionLength keeps the functions of the export and its verifier,
// the oracle and the relayer short enough to read as named phases: a
// function that grows past maxFuncLines lines is split into functions
// named for what each part does, not allowed to grow.
func TestFunctionLength(t *testing.T) {
	for _, dir := range []string{"export", "internal/oracle", "internal/relay"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		fset := token.NewFileSet()
		funcs := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				funcs++
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > maxFuncLines {
					t.Errorf("%s:%d: %s is %d lines, more than %d: split it into named phases", filepath.ToSlash(name), start.Line, funcName(fd), n, maxFuncLines)
				}
			}
		}
		if funcs == 0 {
			t.Errorf("no functions read in %s", dir)
		}
	}
}

// funcName names a function as a reader looks for it: Recv.Name for a
// method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok { // a generic receiver
		typ = ix.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return fmt.Sprintf("%s.%s", id.Name, fd.Name.Name)
	}
	return fd.Name.Name
}
