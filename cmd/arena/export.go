package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/retry"
)

func init() {
	register("export", "export rounds, submissions, scores and the tamper-evident log for verification", runExport)
}

// maxExportAttempts bounds the exports tried while the log grows past
// each new checkpoint before its export is read; they are spread by a
// backoff from exportRetryBase, so that a burst of appends can end.
const (
	maxExportAttempts = 5
	exportRetryBase   = 500 * time.Millisecond
)

func runExport(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "export", "--out DIR [--db URL] [--format csv|jsonl] [--since TIME] [--with-prompts] [--log-key PATH]")
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	out := fs.String("out", "", "directory to write the export to (created if needed)")
	format := fs.String("format", export.JSONL, "table format: csv or jsonl")
	since := fs.String("since", "", "only rounds whose commit deadline is at or after this RFC 3339 time (the log is always exported whole)")
	withPrompts := fs.Bool("with-prompts", false, "also export traces: what each LLM agent was shown and answered in each triggered round, prompts included (secrets redacted)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if err := checkFormat(*format, export.CSV, export.JSONL); err != nil {
		return err
	}
	var t time.Time
	if *since != "" {
		var err error
		if t, err = time.Parse(time.RFC3339, *since); err != nil {
			return fmt.Errorf("--since %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", *since)
		}
	}
	a, err := loggedApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	bar := progress.New(env.Stderr, 0, "tables")
	var counts export.Counts
	// A live arena appends while the checkpoint is signed and cosigned:
	// an export whose checkpoint the log grew past is made again with the
	// next checkpoint, a few times.
	for attempt := 1; ; attempt++ {
		counts, err = a.Export(ctx, *out, export.Options{Format: *format, Since: t, WithPrompts: *withPrompts, Redact: redact.String, Progress: bar.Set})
		if !errors.Is(err, export.ErrLogGrew) || attempt == maxExportAttempts {
			break
		}
		wait := time.NewTimer(retry.Backoff(attempt, exportRetryBase, 8*exportRetryBase, rand.Int64N))
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
	}
	bar.Finish()
	if err != nil {
		return err
	}
	pub, err := a.Publisher()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(env.Stdout, "%-14s %d rows\n", n, counts[n])
	}
	fmt.Fprintf(env.Stdout, "exported to %s with the log's checkpoint\nlog verifier key: %s\nverify with: arena verify --export %s --vkey %s\n", *out, pub.VerifierKey(), *out, pub.VerifierKey())
	return nil
}
