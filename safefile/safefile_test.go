package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Both ways of replacing a file, the one of this system (renameio on
// Unix) and the one of Windows (which builds everywhere, so it runs
// here too): the new bytes and mode when the writer succeeds; the old
// file, and no temporary file left, when it fails or the path holds a
// directory; a symbolic link is replaced by the file, its target kept.
func TestReplace(t *testing.T) {
	for name, replace := range map[string]func(string, fs.FileMode, func(io.Writer) error) error{"this system's": Replace, "Windows's": renameReplace} {
		t.Run(name, func(t *testing.T) {
			cases := []struct {
				name    string
				setup   func(t *testing.T, path string)
				write   string // "" fails
				wantErr bool
				want    string // the path's bytes after
			}{
				{"a new file", func(*testing.T, string) {}, "new", false, "new"},
				{"over a file", func(t *testing.T, p string) { mustWrite(t, p, "old") }, "new", false, "new"},
				{"a writer that fails", func(t *testing.T, p string) { mustWrite(t, p, "old") }, "", true, "old"},
				{"over a directory", func(t *testing.T, p string) { mustDo(t, os.Mkdir(p, 0o700)) }, "new", true, ""},
				{"over a symbolic link", func(t *testing.T, p string) {
					mustWrite(t, p+".target", "target")
					mustDo(t, os.Symlink(p+".target", p))
				}, "new", false, "new"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(dir, "f")
					c.setup(t, path)
					err := replace(path, 0o640, func(w io.Writer) error {
						if c.write == "" {
							w.Write([]byte("half"))
							return errors.New("the writer failed")
						}
						_, err := io.WriteString(w, c.write)
						return err
					})
					if (err != nil) != c.wantErr {
						t.Fatalf("error %v, want one: %v", err, c.wantErr)
					}
					if c.want != "" {
						b, err := os.ReadFile(path)
						if err != nil || string(b) != c.want {
							t.Errorf("holds %q, %v; want %q", b, err, c.want)
						}
					}
					if fi, err := os.Lstat(path); err == nil && c.write != "" && !c.wantErr && (!fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640) {
						t.Errorf("mode %s, want a regular file of mode 0640", fi.Mode())
					}
					if b, err := os.ReadFile(path + ".target"); err == nil && string(b) != "target" {
						t.Errorf("the link's target changed: %q", b)
					}
					es, _ := os.ReadDir(dir)
					for _, e := range es {
						if strings.Contains(e.Name(), "tmp") {
							t.Errorf("left %s behind", e.Name())
						}
					}
				})
			}
		})
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	mustDo(t, os.WriteFile(path, []byte(s), 0o600))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
