//go:build unix

package export

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without waiting for a FIFO's
// writer; the descriptor goes back to blocking reads once opened.
func openNonBlocking(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
