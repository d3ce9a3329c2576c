//go:build unix

package safefile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// openNonBlocking opens path for reading without waiting for a FIFO's
// writer (and, with noFollow, without following a symbolic link); the
// descriptor goes back to blocking reads once opened.
func openNonBlocking(path string, noFollow bool) (*os.File, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	if noFollow {
		flag |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// LockFlags are the flags to open a lock file with: created if missing,
// never through a symbolic link, and without waiting on a FIFO.
const LockFlags = os.O_CREATE | os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

func replace(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(perm))
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := write(f); err != nil {
		return err
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return err
	}
	// The rename is durable once the directory is synced; a file system
	// that cannot sync a directory keeps the rename all the same.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
