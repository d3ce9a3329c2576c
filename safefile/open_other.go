//go:build !unix

package safefile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// openNonBlocking opens path for reading (systems without FIFOs in the
// file system; noFollow is checked by the caller's Lstat alone).
func openNonBlocking(path string, noFollow bool) (*os.File, error) { return os.Open(path) }

// LockFlags are the flags to open a lock file with: created if missing.
const LockFlags = os.O_CREATE | os.O_RDWR

// replace writes a flushed temporary file beside path and renames it over
// path (MoveFileEx with MOVEFILE_REPLACE_EXISTING on Windows).
func replace(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
