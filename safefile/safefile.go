// Package safefile reads and replaces the small files the arena and its
// verifiers keep (the log's signed-tree record, a witness's state, a
// saved checkpoint, a chart): a file to read is opened without blocking
// and refused unless it is a regular file, so a FIFO, a device or a
// directory at its path is an error rather than a hang or an endless
// read; a file to write is replaced whole, never left half written.
//
// What "whole" means depends on the system. On Unix (Linux, macOS, the
// BSDs) WriteFile and Replace are renameio's: a synced temporary file in
// the same directory renamed over the target with rename(2), which is
// atomic, then the directory synced, so after a crash the path holds the
// old file or the new one, durably. On Windows they write and flush
// (FlushFileBuffers) a temporary file in the same directory and rename it
// over the target with os.Rename (MoveFileEx with
// MOVEFILE_REPLACE_EXISTING): a reader sees the old file or the new one,
// and a crash before the rename leaves the old one; Windows does not
// document that rename as atomic, and the rename itself is not flushed,
// so a crash right after it may leave the old file. The rename fails
// rather than tears the file when another process holds the target open
// without sharing it for deletion.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotRegular is matched (errors.Is) by the errors refusing a path that
// holds something other than a regular file, each a *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError refuses a path that holds something other than a
// regular file: Kind names what it holds (see Kind).
type NotRegularError struct {
	Path, Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Kind)
}

// Is reports whether target is ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// OpenRegular opens path for reading, following a symbolic link, and
// refuses anything but a regular file: a FIFO would block the read for
// ever, a device would never end. The open itself does not wait for a
// FIFO's writer, and the check is made on the file opened, so the path
// cannot change in between.
func OpenRegular(path string) (*os.File, error) {
	return openRegular(path, false)
}

// OpenRegularNoFollow opens path as OpenRegular does but refuses a
// symbolic link (on systems that have them), dangling or not: for a file
// that is replaced by rename, where a link would be replaced rather than
// followed.
func OpenRegularNoFollow(path string) (*os.File, error) {
	return openRegular(path, true)
}

func openRegular(path string, noFollow bool) (*os.File, error) {
	if noFollow {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &NotRegularError{Path: path, Kind: Kind(fi.Mode())}
		}
	}
	f, err := openNonBlocking(path, noFollow)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: Kind(fi.Mode())}
	}
	return f, nil
}

// Kind names the type of a file that is not a regular one ("a
// directory", "a named pipe", …).
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadFile reads the regular file at path (see OpenRegular), refusing one
// larger than max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readMax(f, path, max)
}

func readMax(f *os.File, path string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return b, nil
}

// ErrTooLarge is wrapped by ReadFile's error for a file over its bound.
var ErrTooLarge = errors.New("file too large")

// WriteFile replaces the file at path with data, whole (see the package
// comment for what that guarantees on each system), created with perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Replace(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Replace replaces the file at path with what write writes, whole or not
// at all: when write fails, path is left as it was.
func Replace(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return replace(path, perm, write)
}

// renameReplace is Replace where renameio is not (Windows): a temporary
// file beside path, written, flushed and closed, then renamed over path
// with os.Rename; on any failure the temporary file is removed and path
// left as it was. It builds everywhere, so the tests run it on Unix too.
func renameReplace(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
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
