package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/redact"
)

func init() {
	register("export", "export rounds, submissions, scores and the tamper-evident log for verification; 'export prune' deletes the published exports the retention no longer keeps", runExport)
}

func runExport(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "prune" {
		return exportPrune(ctx, env, args[1:])
	}
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
	// The export is of one state of the database, with the checkpoint of
	// exactly that state's log (signed if none is published yet): a live
	// arena appending meanwhile changes neither.
	counts, err := a.Export(ctx, *out, export.Options{Format: *format, Since: t, WithPrompts: *withPrompts, Redact: redact.String, Progress: bar.Set})
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

// exportPrune deletes the published exports the retention no longer keeps
// and the parts no export names, as serve does every hour.
func exportPrune(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "export prune", "[--keep N] [--keep-days D] [--db URL]")
	cf := addConfigFlags(fs, false, "ARENA_EXPORT_KEEP", "ARENA_EXPORT_KEEP_DAYS")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	a, err := roundApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.PruneExports(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d published exports: %d deleted, %d kept (the latest %d, the last of each day for %d days, and every one younger than %s); %d parts no export names deleted\n",
		st.Exports, st.ExportsDeleted, st.Exports-st.ExportsDeleted, a.Config.ExportKeep, a.Config.ExportKeepDays, export.Grace, st.PartsDeleted)
	return nil
}
