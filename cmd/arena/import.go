package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("import", "import question sets (forecastbench) into the store", runImport)
}

// importers are the sources `arena import` knows, by name.
var importers = map[string]func(ctx context.Context, env *Env, args []string) error{
	"forecastbench": runImportForecastBench,
}

func runImport(ctx context.Context, env *Env, args []string) error {
	names := make([]string, 0, len(importers))
	for n := range importers {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(env.Stderr, "Usage: arena import <source> [flags]\n\nSources: %s\n\nRun 'arena import <source> -h' for a source's flags.\n", strings.Join(names, ", "))
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	run, ok := importers[args[0]]
	if !ok {
		return fmt.Errorf("unknown source %q (want %s)", args[0], strings.Join(names, ", "))
	}
	return run(ctx, env, args[1:])
}

const importFBUsage = "--questions FILE… --resolutions FILE… [--humans FILE…] | --fetch DATE [--from URL] [--dir DIR]; [--replace-empty] [--db URL] [--now T] [--dry-run]"

func runImportForecastBench(ctx context.Context, env *Env, args []string) error {
	// The flag package takes one value per flag, but shells expand
	// "--questions dir/*.json" into many words: gather them first.
	lists, rest, err := fileLists(args, "questions", "resolutions", "humans")
	if err != nil {
		return fmt.Errorf("%v (run 'arena import forecastbench -h')", err)
	}
	fs := newFlagSet(env, "import forecastbench", importFBUsage)
	cf := addConfigFlags(fs, false)
	fs.Func("questions", "question set files (YYYY-MM-DD-llm.json), several after one flag", func(string) error { return nil })
	fs.Func("resolutions", "resolution set files (YYYY-MM-DD_resolution_set.json), several after one flag", func(string) error { return nil })
	fs.Func("humans", "individual human forecast files (YYYY-MM-DD.ForecastBench.human_super_individual.json), several after one flag", func(string) error { return nil })
	nowStr := fs.String("now", "", "import time, RFC 3339: unresolved markets past their close time are marked closed (default: the wall clock)")
	dry := fs.Bool("dry-run", false, "read, check and count the files without writing to the store")
	replaceEmpty := fs.Bool("replace-empty", false, "admit a --humans file that holds no forecast the arena imports: it empties the stored set of its round and group (refused without this flag)")
	ff := addFetchFlags(fs)
	if err := parse(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (files go after --questions or --resolutions)", fs.Arg(0))
	}
	if err := ff.fetch(ctx, env, lists); err != nil {
		return err
	}
	if len(lists["questions"]) == 0 && len(lists["resolutions"]) == 0 && len(lists["humans"]) == 0 {
		return fmt.Errorf("give --questions FILE…, --resolutions FILE… and/or --humans FILE…, or --fetch DATE (run 'arena import forecastbench -h')")
	}
	// Each file read is a step, and so is the store's one transaction.
	n := len(lists["questions"]) + len(lists["resolutions"]) + len(lists["humans"])
	if !*dry {
		n++
	}
	bar := progress.New(env.Stderr, n, "steps")
	defer bar.Finish()
	files := forecastbench.Files{Questions: lists["questions"], Resolutions: lists["resolutions"], Humans: lists["humans"], ReplaceEmpty: *replaceEmpty,
		Open: func(path string) (io.ReadCloser, error) {
			f, err := openInput(ctx, path)
			if err != nil {
				return nil, missingFile(path, err)
			}
			return closeFunc{f, func() { bar.Add(1) }}, nil
		}}
	now := time.Now().UTC()
	if *nowStr != "" {
		t, err := time.Parse(time.RFC3339, *nowStr)
		if err != nil {
			return fmt.Errorf("--now %q: want an RFC 3339 time such as 2026-01-05T00:00:00Z", *nowStr)
		}
		now = t.UTC()
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	if *dry {
		rep, err := forecastbench.DryRun(files, now)
		if err != nil {
			return err
		}
		bar.Finish()
		return rep.WriteText(env.Stdout, false)
	}
	// Parse everything before touching the store, so a bad file never
	// opens (or creates) a database.
	batch, err := forecastbench.Load(files, now)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	// Say what the human forecast sets replace before replacing them.
	reps, err := forecastbench.Replacements(ctx, db, batch)
	if err != nil {
		return err
	}
	for _, r := range reps {
		due := r.Due.Format(time.DateOnly)
		if r.Stored == 0 {
			fmt.Fprintf(env.Stdout, "humans: adding %d %s forecasts due %s (by %d forecasters); none stored\n", r.Imported, r.Group, due, r.ImportedBy)
			continue
		}
		fmt.Fprintf(env.Stdout, "humans: replacing the %d stored %s forecasts due %s (by %d forecasters) with the file's %d (by %d)\n",
			r.Stored, r.Group, due, r.StoredBy, r.Imported, r.ImportedBy)
	}
	rep, err := forecastbench.Save(ctx, db, batch, now)
	if err != nil {
		return err
	}
	bar.Add(1)
	bar.Finish()
	return rep.WriteText(env.Stdout, true)
}

// closeFunc is a ReadCloser that calls after once closed.
type closeFunc struct {
	io.ReadCloser
	after func()
}

func (c closeFunc) Close() error {
	defer c.after()
	return c.ReadCloser.Close()
}

// fileLists pulls "--name FILE FILE …" (also -name, and --name=FILE, which
// may repeat) out of args for each list flag, and returns the other args.
func fileLists(args []string, names ...string) (map[string][]string, []string, error) {
	isList := map[string]bool{}
	for _, n := range names {
		isList[n] = true
	}
	lists := map[string][]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !isList[name] {
			rest = append(rest, a)
			continue
		}
		if hasValue {
			if value == "" {
				return nil, nil, fmt.Errorf("--%s= needs a file", name)
			}
			lists[name] = append(lists[name], value)
			continue
		}
		n := 0
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			lists[name] = append(lists[name], args[i])
			n++
		}
		if n == 0 {
			return nil, nil, fmt.Errorf("--%s needs at least one file", name)
		}
	}
	return lists, rest, nil
}
