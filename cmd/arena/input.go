package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/forecast-arena/arena/stats"
	"github.com/forecast-arena/arena/stats/scoreio"
)

// openInput opens a file the user named for reading, so that the read
// stops when ctx ends: each read first checks ctx, and a read blocked on
// a pipe or FIFO is woken (its deadline passes). The error is then
// ctx's cause, the signal that stopped the command. The size bounds are
// the readers' (stats/scoreio, oracle, forecastbench): a file may be
// endless, as /dev/zero or a pipe is.
func openInput(ctx context.Context, path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Regular files have no deadline (SetReadDeadline fails, harmlessly):
	// their reads never block for long.
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	return &ctxFile{ctx: ctx, f: f, stop: stop}, nil
}

type ctxFile struct {
	ctx  context.Context
	f    *os.File
	stop func() bool
}

func (c *ctxFile) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	n, err := c.f.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) && c.ctx.Err() != nil {
		err = context.Cause(c.ctx)
	}
	return n, err
}

// Stat is the opened file's: scoreio.Read sizes the rows it builds from a
// regular file's size (a hint), which the reader would otherwise hide.
func (c *ctxFile) Stat() (os.FileInfo, error) { return c.f.Stat() }

func (c *ctxFile) Close() error {
	c.stop()
	return c.f.Close()
}

// readScores reads the scores file the user named (score --in, report
// --in), stopping when ctx ends.
func readScores(ctx context.Context, path string) (*stats.Table, error) {
	f, err := openInput(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read scores: %w", err)
	}
	defer f.Close()
	return scoreio.Read(f, path)
}
