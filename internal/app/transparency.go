package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// maxPolicyBytes bounds a witness policy file: a few lines per witness.
const maxPolicyBytes = 1 << 20

// Publisher is the log's checkpoint publisher, built by OpenLog.
func (a *App) Publisher() (*tlog.Publisher, error) {
	if a.pub == nil {
		return nil, fmt.Errorf("app: the log's publisher needs the log: open it first")
	}
	return a.pub, nil
}

// newPublisher builds the publisher of the log's checkpoints: signed under
// the configured origin, cosigned by the witnesses of the witness policy,
// the entries of untriggered rounds' commits and reveals withheld from the
// entry bundles.
func (a *App) newPublisher(ctx context.Context) (*tlog.Publisher, error) {
	origin, err := a.logOrigin(ctx)
	if err != nil {
		return nil, err
	}
	pub, err := tlog.NewPublisher(a.Log, origin, a.DB)
	if err != nil {
		return nil, err
	}
	pub.Interval, pub.Logger, pub.Sealed = a.Config.CheckpointInterval, a.Logger, a.Forecast.SealedAny
	if f := a.Config.WitnessPolicy; f != "" {
		b, err := ReadSmallFile(f, maxPolicyBytes)
		if err != nil {
			return nil, fmt.Errorf("witness policy %s: %w", f, err)
		}
		pol, err := witness.ParsePolicy(b)
		if err != nil {
			return nil, fmt.Errorf("witness policy %s: %w", f, err)
		}
		wc := &witness.Client{Witnesses: pol.Remotes()}
		pub.Cosigner = wc
		if err := a.checkWitnessed(ctx, pub, wc); err != nil {
			return nil, err
		}
	}
	return pub, nil
}

// witnessViewTimeout bounds the asking of the witnesses for their view at
// start-up.
const witnessViewTimeout = 10 * time.Second

// checkWitnessed refuses a log that lacks the tree of a checkpoint a
// witness cosigned: the witnesses remember what the log key published
// even when the key's own record beside it is lost (a new host, a key
// copied without it). A witness that cannot be asked is logged and
// skipped: the record beside the key still guards.
func (a *App) checkWitnessed(ctx context.Context, pub *tlog.Publisher, wc *witness.Client) error {
	ctx, cancel := context.WithTimeout(ctx, witnessViewTimeout)
	defer cancel()
	notes, err := wc.Seen(ctx, pub.Origin())
	if err != nil {
		a.Logger.Warn("tamper-evident log: could not ask every witness for the checkpoint it cosigned last", "err", err)
	}
	for i, n := range notes {
		if n == nil {
			continue
		}
		w := wc.Witnesses[i]
		if err := pub.CheckSeen(ctx, n, "witness "+w.Name+" ("+w.URL+")"); err != nil {
			return fmt.Errorf("%w; refusing to sign anything under this log key. See \"Restoring a backup\" in docs/operations.md", err)
		}
	}
	return nil
}

// logOrigin is the origin of the log's checkpoints: ARENA_LOG_ORIGIN, else
// derived from ARENA_PUBLIC_URL, else the origin the arena published under
// before (the saved checkpoint's), else one named after this deployment's
// identifier. Without a configured origin, every command of one arena thus
// signs under the same origin, whatever address it serves on.
func (a *App) logOrigin(ctx context.Context) (string, error) {
	o := a.Config
	switch {
	case o.LogOrigin != "":
		return o.LogOrigin, tlog.CheckOrigin(o.LogOrigin)
	case o.PublicURL != "":
		return tlog.OriginFromURL(o.PublicURL)
	}
	saved, err := a.DB.LatestCheckpoint(ctx)
	if err != nil {
		return "", err
	}
	if saved != nil {
		if c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(saved))); err == nil {
			return c.Origin, nil
		}
	}
	return "forecast-arena/" + strings.ToLower(a.Forecast.Domain.Contract.Hex()[2:]) + "/log", nil
}

// Checkpoint publishes a checkpoint of the log as it stands, if it grew
// since the last one, and returns the latest checkpoint note: what an
// export carries so that verify can check it against the published log.
func (a *App) Checkpoint(ctx context.Context) ([]byte, error) {
	pub, err := a.Publisher()
	if err != nil {
		return nil, err
	}
	if _, err := pub.Publish(ctx); err != nil {
		return nil, err
	}
	return pub.Checkpoint(ctx)
}

// exportDir is where serve publishes its exports: ARENA_EXPORT_DIR, else
// exports in the data directory.
func (a *App) exportDir() (string, error) {
	if a.Config.ExportDir != "" {
		return a.Config.ExportDir, nil
	}
	dir, ok := a.Config.DataDirectory()
	if !ok {
		return "", fmt.Errorf("published exports need a directory: set ARENA_EXPORT_DIR or ARENA_DATA_DIR")
	}
	return filepath.Join(dir, "exports"), nil
}

// Export writes an export of the arena to dir, carrying the latest
// checkpoint (published first if the log grew), in the given format.
func (a *App) Export(ctx context.Context, dir string, opt export.Options) (export.Counts, error) {
	cp, err := a.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	opt.Checkpoint = cp
	return export.Write(ctx, export.Source{Forecast: a.Forecast, Log: a.Log, Traces: a.DB}, dir, opt)
}

// PublishExport writes a new export beside the published ones and makes
// it the latest: written whole into its own directory, then the "latest"
// link swapped by a rename, so a reader sees the old export or the new
// one, never part of one. The export before it is kept; older ones are
// removed.
func (a *App) PublishExport(ctx context.Context, at time.Time) error {
	root, err := a.exportDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("publish export: %w", err)
	}
	name := "export-" + at.UTC().Format("20060102T150405Z")
	if _, err := a.Export(ctx, filepath.Join(root, name), export.Options{Format: export.JSONL}); err != nil {
		return fmt.Errorf("publish export: %w", err)
	}
	latest := filepath.Join(root, "latest")
	prev, _ := os.Readlink(latest)
	tmp := latest + ".new"
	os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return fmt.Errorf("publish export: %w", err)
	}
	if err := os.Rename(tmp, latest); err != nil {
		return fmt.Errorf("publish export: %w", err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("publish export: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && n != name && n != prev && len(n) > len("export-") && n[:len("export-")] == "export-" {
			os.RemoveAll(filepath.Join(root, n))
		}
	}
	a.Logger.Info("export published", "dir", filepath.Join(root, name))
	return nil
}

// exportJob publishes an export every ARENA_EXPORT_EVERY (none when 0,
// and none, with a warning, without a directory to write them to).
func (a *App) exportJob() ([]jobs.Job, error) {
	if a.Config.ExportEvery == 0 {
		return nil, nil
	}
	if _, err := a.exportDir(); err != nil {
		a.Logger.Warn("no published exports", "reason", err.Error())
		return nil, nil
	}
	return []jobs.Job{jobs.Periodic("export-publish", a.Config.ExportEvery, func(ctx context.Context, period time.Time) error {
		return a.PublishExport(ctx, period)
	})}, nil
}
