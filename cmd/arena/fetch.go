package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/forecast-arena/arena/httpclient"
	"github.com/forecast-arena/arena/internal/forecastbench"
)

// fetchFlags are import forecastbench's flags that download a round of
// ForecastBench's published datasets instead of naming files.
type fetchFlags struct {
	date, from, dir *string
}

func addFetchFlags(fs *flag.FlagSet) *fetchFlags {
	return &fetchFlags{
		date: fs.String("fetch", "", "download the round with human forecasts due on this date (YYYY-MM-DD, such as 2024-07-21) from ForecastBench's published datasets, then import it: its human question set, resolution set and superforecasters' forecasts"),
		from: fs.String("from", forecastbench.DatasetsURL, "with --fetch: the datasets URL to download from (a mirror, or a commit of the repository: …/forecastbench-datasets/COMMIT/datasets)"),
		dir:  fs.String("dir", "", "with --fetch: where to keep the downloaded files (default: forecastbench/DATE in the user cache directory)"),
	}
}

// fetch downloads the round --fetch names, when it is given, and puts its
// files in lists as if named on the command line.
func (f *fetchFlags) fetch(ctx context.Context, env *Env, lists map[string][]string) error {
	if *f.date == "" {
		if *f.from != forecastbench.DatasetsURL || *f.dir != "" {
			return fmt.Errorf("--from and --dir go with --fetch DATE")
		}
		return nil
	}
	if len(lists["questions"])+len(lists["resolutions"])+len(lists["humans"]) > 0 {
		return fmt.Errorf("give --fetch DATE or the files (--questions, --resolutions, --humans), not both")
	}
	due, err := time.Parse(time.DateOnly, *f.date)
	if err != nil {
		return fmt.Errorf("--fetch %q: want the round's due date, YYYY-MM-DD (such as 2024-07-21)", *f.date)
	}
	dir := *f.dir
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("--fetch: no user cache directory (%v): give --dir", err)
		}
		dir = filepath.Join(cache, "arena", "forecastbench", due.Format(time.DateOnly))
	}
	files, err := forecastbench.Fetch(ctx, httpclient.New(httpclient.Default), *f.from, due, dir, func(url, path string, n int64) {
		fmt.Fprintf(env.Stdout, "downloaded %s (%d bytes) to %s\n", url, n, path)
	})
	if err != nil {
		return err
	}
	lists["questions"], lists["resolutions"], lists["humans"] = files.Questions, files.Resolutions, files.Humans
	return nil
}

// missingFile says where a ForecastBench file that does not exist comes
// from; other errors are err.
func missingFile(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%s does not exist: ForecastBench publishes its files at %s (question_sets/, resolution_sets/, forecast_sets/); 'arena import forecastbench --fetch DATE' downloads and imports a round with human forecasts", path, forecastbench.DatasetsURL)
}
