//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What OpenRegular and OpenRegularNoFollow open, and what they refuse at
// once without blocking, naming it: a FIFO (whose open for reading would
// wait for a writer for ever), a device, a directory; a symbolic link is
// followed by one and refused by the other. ReadFile bounds the size.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	mustWrite(t, file, "hello")
	fifo := filepath.Join(dir, "fifo")
	mustDo(t, syscall.Mkfifo(fifo, 0o600))
	link := filepath.Join(dir, "link")
	mustDo(t, os.Symlink(file, link))
	dangling := filepath.Join(dir, "dangling")
	mustDo(t, os.Symlink(filepath.Join(dir, "nosuch"), dangling))
	linkToFIFO := filepath.Join(dir, "link-to-fifo")
	mustDo(t, os.Symlink(fifo, linkToFIFO))
	device := filepath.Join(dir, "device")
	hasDevice := syscall.Mknod(device, syscall.S_IFCHR|0o600, 1<<8|3) == nil // only root may
	cases := []struct {
		name     string
		path     string
		noFollow bool
		want     string // "" opens; else the kind refused, or "not exist"
	}{
		{"a regular file", file, false, ""},
		{"a symbolic link to a file", link, false, ""},
		{"a symbolic link to a file, not followed", link, true, "a symbolic link"},
		{"a dangling symbolic link", dangling, false, "not exist"},
		{"a dangling symbolic link, not followed", dangling, true, "a symbolic link"},
		{"a FIFO", fifo, false, "a named pipe"},
		{"a symbolic link to a FIFO", linkToFIFO, false, "a named pipe"},
		{"a directory", dir, false, "a directory"},
		{"a device", device, false, "a device"},
		{"nothing", filepath.Join(dir, "nosuch"), false, "not exist"},
	}
	for _, c := range cases {
		if c.path == device && !hasDevice {
			t.Logf("%s: skipped, this user may not make a device", c.name)
			continue
		}
		done := make(chan error, 1)
		go func() {
			open := OpenRegular
			if c.noFollow {
				open = OpenRegularNoFollow
			}
			f, err := open(c.path)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the open blocked", c.name)
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "not exist" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s: %v, want fs.ErrNotExist", c.name, err)
		case c.want != "" && c.want != "not exist" && (!errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.path+" is "+c.want+", not a regular file")):
			t.Errorf("%s: %v, want %q refused", c.name, err, c.want)
		}
	}
	if b, err := ReadFile(file, 5); err != nil || string(b) != "hello" {
		t.Errorf("ReadFile at its bound: %q, %v", b, err)
	}
	if _, err := ReadFile(file, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile past its bound: %v", err)
	}
	if _, err := ReadFile(fifo, 4); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v", err)
	}
}
