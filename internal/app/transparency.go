package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/safefile"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// maxPolicyBytes bounds a witness policy file: a few lines per witness.
const maxPolicyBytes = 1 << 20

// errReadOnlyLog is the error of what signs with the log of an app built
// to read it.
var errReadOnlyLog = errors.New("app: the log is open to read only: signing and serving need it opened with its key (LogWrite)")

// Publisher is the log's checkpoint publisher, which signs: there is one
// only under LogWrite.
func (a *App) Publisher() (*tlog.Publisher, error) {
	if a.pub == nil {
		return nil, errReadOnlyLog
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
	a.exports.Store, a.exports.Now = a.DB, a.deps.Now
	pub, err := tlog.NewPublisher(a.TLog, origin, a.DB)
	if err != nil {
		return nil, err
	}
	pub.Interval, pub.Logger, pub.Sealed = a.Config.CheckpointInterval, a.Logger, a.Rounds.SealedAny
	if f := a.Config.WitnessPolicy; f != "" {
		b, err := safefile.ReadFile(f, maxPolicyBytes)
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
	return "forecast-arena/" + strings.ToLower(a.Rounds.Domain.Contract.Hex()[2:]) + "/log", nil
}

// exportFailed logs a published export that failed. Another server that
// published a larger checkpoint meanwhile is no failure: the next export,
// of the log as it then stands, follows it.
func (a *App) exportFailed(ctx context.Context, what string, err error) {
	if errors.Is(err, export.ErrLogGrew) || errors.Is(err, tlog.ErrPublishedPast) {
		a.Logger.DebugContext(ctx, "published exports: a larger checkpoint was published meanwhile; the next export follows it", "err", err)
		return
	}
	a.Logger.ErrorContext(ctx, "published exports: "+what, "err", err)
}

// PublishExport publishes into the database the export of the log as it
// stands, and its checkpoint (signed and cosigned if none of that size is
// published yet), as serve does every checkpoint interval.
func (a *App) PublishExport(ctx context.Context) error {
	pub, err := a.Publisher()
	if err != nil {
		return err
	}
	start := time.Now()
	st, err := a.exports.Publish(ctx, export.Source{Forecast: a.Rounds, Log: a.TLog}, pub.PublishAt)
	if err != nil {
		return err
	}
	if st.Stored {
		a.Logger.InfoContext(ctx, "export published", "size", st.Size, "bytes", st.Bytes, "parts", st.Parts, "tables_read", st.Read,
			"new_bytes", st.NewBytes, "new_parts", st.NewParts, "manifest_bytes", st.Manifest, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// followExports publishes, until ctx ends, a checkpoint of the log as it
// stands and its export at most a checkpoint interval after each append
// (it looks four times an interval): whoever appended (this server,
// another replica, a command), each export is of one state of the
// database and carries the checkpoint of exactly that state. A
// checkpoint published already is offered again to the witnesses missing
// from it.
func (a *App) followExports(ctx context.Context, pub *tlog.Publisher) {
	tick := time.NewTicker(cmp.Or(pub.Interval, tlog.DefaultInterval) / 4)
	defer tick.Stop()
	var last string
	for {
		err := a.PublishExport(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && err.Error() != last:
			a.exportFailed(ctx, "exporting the log as it stands", err)
		}
		last = ""
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// exportDir is where serve mirrors its latest published export:
// ARENA_EXPORT_DIR, else exports in the data directory.
func (a *App) exportDir() (string, error) {
	if a.Config.ExportDir != "" {
		return a.Config.ExportDir, nil
	}
	dir, ok := a.Config.DataDirectory()
	if !ok {
		return "", fmt.Errorf("a file copy of the published exports needs a directory: set ARENA_EXPORT_DIR or ARENA_DATA_DIR")
	}
	return filepath.Join(dir, "exports"), nil
}

// Export writes an export of the arena to dir, in the given format, of
// the log as it stands and carrying its checkpoint (signed and published
// first if none of that size is).
func (a *App) Export(ctx context.Context, dir string, opt export.Options) (export.Counts, error) {
	pub, err := a.Publisher()
	if err != nil {
		return nil, err
	}
	opt.Sign = pub.PublishAt
	return export.Write(ctx, export.Source{Forecast: a.Rounds, Log: a.TLog, Traces: a.DB}, dir, opt)
}

// MirrorExport copies the latest export published in the database into
// the export directory, as a file copy to archive or upload: written whole
// into its own directory, then the "latest" link swapped by a rename, so
// a reader sees the old copy or the new one, never part of one. The copy
// before it is kept; older ones are removed.
func (a *App) MirrorExport(ctx context.Context) error {
	root, err := a.exportDir()
	if err != nil {
		return err
	}
	size, b, err := a.DB.ExportManifest(ctx, 0, true)
	if err != nil {
		return fmt.Errorf("mirror export: %w", err)
	}
	name := fmt.Sprintf("export-%d", size)
	if _, err := os.Stat(filepath.Join(root, name, export.IndexFile)); err == nil {
		return nil // copied already
	}
	if err := export.Mirror(ctx, a.DB, b, filepath.Join(root, name)); err != nil {
		return fmt.Errorf("mirror export: %w", err)
	}
	latest := filepath.Join(root, "latest")
	prev, _ := os.Readlink(latest)
	tmp := latest + ".new"
	os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return fmt.Errorf("mirror export: %w", err)
	}
	if err := os.Rename(tmp, latest); err != nil {
		return fmt.Errorf("mirror export: %w", err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("mirror export: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && n != name && n != prev && strings.HasPrefix(n, "export-") {
			os.RemoveAll(filepath.Join(root, n))
		}
	}
	a.Logger.Info("export mirrored", "dir", filepath.Join(root, name))
	return nil
}

// exportJob mirrors the latest published export into the export
// directory every ARENA_EXPORT_EVERY (none when 0, and none, with a
// warning, without a directory to write them to).
func (a *App) exportJob() ([]jobs.Job, error) {
	js := []jobs.Job{jobs.Periodic("export-prune", PruneExportsEvery, func(ctx context.Context, _ time.Time) error {
		_, err := a.PruneExports(ctx)
		return err
	})}
	if a.Config.ExportEvery == 0 {
		return js, nil
	}
	if _, err := a.exportDir(); err != nil {
		a.Logger.Warn("no file copy of the published exports", "reason", err.Error())
		return js, nil
	}
	return append(js, jobs.Periodic("export-mirror", a.Config.ExportEvery, func(ctx context.Context, _ time.Time) error {
		err := a.MirrorExport(ctx)
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			return nil // none published yet
		}
		return err
	})), nil
}

// PruneExportsEvery is how often serve prunes the published exports.
const PruneExportsEvery = time.Hour

// PruneExports deletes the published exports the configured retention no
// longer keeps (ARENA_EXPORT_KEEP, ARENA_EXPORT_KEEP_DAYS), then the
// parts no export names.
func (a *App) PruneExports(ctx context.Context) (export.PruneStats, error) {
	st, err := export.Prune(ctx, a.DB, export.Retention{Latest: a.Config.ExportKeep, Days: a.Config.ExportKeepDays}, a.now())
	if err != nil {
		return st, fmt.Errorf("prune exports: %w", err)
	}
	if st.ExportsDeleted > 0 || st.PartsDeleted > 0 {
		a.Logger.Info("published exports pruned", "exports", st.Exports, "deleted", st.ExportsDeleted, "parts_deleted", st.PartsDeleted)
	}
	return st, nil
}
