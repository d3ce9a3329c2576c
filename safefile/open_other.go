//go:build !unix

package safefile

import (
	"io"
	"io/fs"
	"os"
)

// openNonBlocking opens path for reading (systems without FIFOs in the
// file system; noFollow is checked by the caller's Lstat alone).
func openNonBlocking(path string, noFollow bool) (*os.File, error) { return os.Open(path) }

// LockFlags are the flags to open a lock file with: created if missing.
const LockFlags = os.O_CREATE | os.O_RDWR

func replace(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return renameReplace(path, perm, write)
}
