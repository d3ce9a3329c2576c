package forecastbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// DatasetsURL is where ForecastBench publishes its datasets: the datasets
// folder of its repository forecastingresearch/forecastbench-datasets, as
// GitHub serves its files. A copy elsewhere (a mirror, a pinned commit:
// …/forecastbench-datasets/COMMIT/datasets) has the same layout.
const DatasetsURL = "https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets"

// HumanRound names the three files of a round with human forecasts, by
// their paths under the datasets URL: the question set the humans were
// shown, the round's resolution set and the superforecasters' individual
// forecasts.
func HumanRound(due time.Time) []string {
	d := due.Format(time.DateOnly)
	return []string{
		"question_sets/" + d + "-human.json",
		"resolution_sets/" + d + "_resolution_set.json",
		"forecast_sets/" + d + "/" + d + ".ForecastBench.human_super_individual.json",
	}
}

// Fetch downloads the files of the human round due on due from base (a
// datasets URL such as DatasetsURL) into dir, each written whole or not
// at all (a temporary file renamed into place), at most MaxFileBytes
// each, and returns them as Files, ready for Load. progress, when not
// nil, is told of each file once it is saved.
func Fetch(ctx context.Context, client *http.Client, base string, due time.Time, dir string, progress func(url, path string, n int64)) (Files, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Files{}, arena.Errorf(arena.EINVALID, "forecastbench: datasets URL %q: want an http or https URL such as %s", base, DatasetsURL)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("forecastbench: %w", err)
	}
	var paths []string
	for _, p := range HumanRound(due) {
		src := strings.TrimSuffix(u.String(), "/") + "/" + p
		dst := filepath.Join(dir, path.Base(p))
		n, err := download(ctx, client, src, dst)
		if err != nil {
			return Files{}, err
		}
		if progress != nil {
			progress(src, dst, n)
		}
		paths = append(paths, dst)
	}
	return Files{Questions: paths[:1], Resolutions: paths[1:2], Humans: paths[2:]}, nil
}

// download saves the body of url at dst.
func download(ctx context.Context, client *http.Client, src, dst string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return 0, fmt.Errorf("forecastbench: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("forecastbench: download %s: %w (no network? download the files by hand and import them with --questions, --resolutions and --humans)", src, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return 0, arena.Errorf(arena.ENOTFOUND, "forecastbench: %s: 404 Not Found: ForecastBench published human forecasts for some rounds only (2024-07-21 is one); check the date and the datasets URL", src)
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("forecastbench: download %s: %s", src, resp.Status)
	case resp.ContentLength > MaxFileBytes:
		return 0, arena.Errorf(arena.EINVALID, "forecastbench: %s is %d bytes, more than the %d a file may have", src, resp.ContentLength, MaxFileBytes)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return 0, fmt.Errorf("forecastbench: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, MaxFileBytes+1))
	if err == nil && n > MaxFileBytes {
		err = arena.Errorf(arena.EINVALID, "more than the %d bytes a file may have", MaxFileBytes)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = context.Cause(ctx)
		}
		return 0, fmt.Errorf("forecastbench: download %s: %w", src, err)
	}
	return n, nil
}
