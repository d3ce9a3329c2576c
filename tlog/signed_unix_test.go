//go:build unix

package tlog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena/tlog"
)

// Whatever is at the record's path but a regular file is refused, at
// once, as no record (never as "nothing signed"), and left as it was: a
// dangling symbolic link (a restored backup's), a link to a good record
// (the next record would replace the link), a FIFO (which once blocked
// serve at start, deaf to signals), a device, a directory. The same for
// the lock file beside it, which the record's readers open.
func TestStateFileNotAFile(t *testing.T) {
	good := "forecast-arena signed tree v1\n5\n" + strings.Repeat("ab", 32) + "\n"
	cases := []struct {
		name string
		make func(t *testing.T, path string) // makes what sits at path
		lock bool                            // at the lock file's path instead
		want string
	}{
		{"a dangling symbolic link", func(t *testing.T, p string) { noErr(t, os.Symlink(filepath.Join(filepath.Dir(p), "nosuch"), p)) }, false, "a symbolic link"},
		{"a symbolic link to a good record", func(t *testing.T, p string) {
			noErr(t, os.WriteFile(p+".real", []byte(good), 0o600))
			noErr(t, os.Symlink(p+".real", p))
		}, false, "a symbolic link"},
		{"a FIFO", func(t *testing.T, p string) { noErr(t, syscall.Mkfifo(p, 0o600)) }, false, "a named pipe"},
		{"a device", func(t *testing.T, p string) { mknodNull(t, p) }, false, "a device"},
		{"a directory", func(t *testing.T, p string) { noErr(t, os.Mkdir(p, 0o700)) }, false, "a directory"},
		{"a FIFO at the lock", func(t *testing.T, p string) { noErr(t, syscall.Mkfifo(p, 0o600)) }, true, "a named pipe"},
		{"a directory at the lock", func(t *testing.T, p string) { noErr(t, os.Mkdir(p, 0o700)) }, true, "a directory"},
		{"a dangling symbolic link at the lock", func(t *testing.T, p string) { noErr(t, os.Symlink(p+".elsewhere", p)) }, true, "a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := tlog.StateFile{Path: filepath.Join(dir, "log.key.signed")}
			at := s.Path
			if c.lock {
				noErr(t, os.WriteFile(s.Path, []byte(good), 0o600))
				at = s.Path + ".lock"
			}
			c.make(t, at)
			before := describe(at)
			err := within(t, func() error { _, err := s.LastSigned(); return err })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("LastSigned: %v, want a refusal naming %q", err, c.want)
			}
			if !c.lock && !errors.Is(err, tlog.ErrNoRecord) {
				t.Errorf("LastSigned: %v, want ErrNoRecord", err)
			}
			if err := within(t, func() error { return s.RecordSigned(tlog.SignedTree{Size: 9, Root: make([]byte, 32)}) }); err == nil {
				t.Error("RecordSigned recorded a tree")
			}
			if err := within(t, func() error { return s.Create(tlog.SignedTree{}) }); err == nil {
				t.Error("Create made a record over it")
			}
			if after := describe(at); after != before {
				t.Errorf("changed: %s, was %s", after, before)
			}
		})
	}
}

// within runs f, failing the test if it takes more than 10 s (a FIFO
// opened for reading blocks until a writer comes).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("blocked")
		return nil
	}
}

func describe(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return err.Error()
	}
	target, _ := os.Readlink(path)
	return fi.Mode().String() + " " + target
}

// mknodNull makes a character device like /dev/null at path, skipping
// the test where this user may not (only root may make devices).
func mknodNull(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
		t.Skipf("cannot make a device here: %v", err)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
