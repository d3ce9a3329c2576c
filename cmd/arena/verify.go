package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/safefile"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

func init() {
	register("verify", "check an export against its contract: every table and column, signatures, commit hashes, scores and leaderboard recomputed, log proofs, the witnessed checkpoint; with --url, an arena's published export and log; with --chain, on-chain state", runVerify)
}

// verifyFlags are the flags of `arena verify`.
type verifyFlags struct {
	dir, arenaURL, since, save, vkey, policyFile, keyHex, rpcURL, arenaFlag *string
	known                                                                   []string
	timeout, exportWait                                                     *time.Duration
	maxDownload                                                             *int64
}

func runVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "verify", "--export DIR | --url URL [--since FILE] [--save-checkpoint FILE] [--vkey VKEY] [--known-checkpoint FILE]... [--witness-policy FILE] [--log-key HEX] [--timeout D] [--export-wait D] [--max-download BYTES] [--chain RPC --arena ADDR]")
	f := &verifyFlags{
		dir:        fs.String("export", "", "directory written by 'arena export'"),
		arenaURL:   fs.String("url", "", "an arena's address: fetch its current checkpoint (URL/log/checkpoint) and the export published with it (URL/exports/SIZE/, else the latest), verify the export, and prove the current checkpoint consistent with the export's from the log's hash tiles"),
		since:      fs.String("since", "", "with --url: a checkpoint of the arena's log kept earlier (as --save-checkpoint writes it): prove the current one consistent with it"),
		save:       fs.String("save-checkpoint", "", "with --url: once everything verifies, write the arena's current checkpoint to FILE, for the next run's --since"),
		vkey:       fs.String("vkey", "", "the arena's log verifier key (as URL/log/vkey serves it): pins the checkpoint's origin and the log key, and requires a checkpoint"),
		policyFile: fs.String("witness-policy", "", "C2SP witness policy file (log, witness, group and quorum lines): the checkpoint must be cosigned by its quorum (with --url, the arena's current checkpoint, which must extend the export's); its log line serves as --vkey"),
		keyHex:     fs.String("log-key", "", "the arena's published log public key (hex); default: the key of --vkey, else the key the export names"),
	}
	fs.Func("known-checkpoint", "a checkpoint of the arena's log seen before (an earlier export's checkpoint file, a --save-checkpoint file, a witness's copy): the export's checkpoint must extend it; repeatable", func(file string) error {
		f.known = append(f.known, file)
		return nil
	})
	f.rpcURL = fs.String("chain", "", "JSON-RPC endpoint of the chain the arena mirrors to: also compare the export with on-chain state")
	f.arenaFlag = fs.String("arena", "", "the PredictionArena address (with --chain)")
	f.timeout = fs.Duration("timeout", 0, "give up after this long in all (default: none in all, but with --url the export's files must arrive within 2m plus 4s per MiB its index lists, 256 KiB/s; and every request fails when connecting takes 10s, headers 30s, or its body brings less than 16 KiB in any 30s)")
	f.exportWait = fs.Duration("export-wait", 30*time.Second, "with --url: how long to wait for the export of the arena's current checkpoint (made after the checkpoint is signed) before verifying the latest export instead")
	f.maxDownload = fs.Int64("max-download", export.DefaultMaxDownload, "with --url: refuse an export whose index lists more than this many bytes, before downloading it")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	if *f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, *f.timeout, fmt.Errorf("verification gave up: --timeout %s passed", *f.timeout))
		defer cancel()
	}
	o, err := f.verifyOptions()
	if err != nil {
		return err
	}
	var live *liveCheckpoint
	if *f.arenaURL != "" {
		var cleanup func()
		if live, cleanup, err = f.fetchArena(ctx, env, &o); err != nil {
			return err
		}
		defer cleanup()
	}
	bar := progress.New(env.Stderr, 0, "steps")
	o.Progress = bar.Set
	rep, err := export.Verify(*f.dir, o)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("verification FAILED: %w", otherArena(err, *f.dir, o, keySource(*f.vkey, *f.keyHex)))
	}
	printVerifyReport(env, rep, live)
	ok := "OK: the export is consistent with its signed log"
	if live != nil {
		if err := verifyLive(ctx, env, rep, live, *f.since, *f.save); err != nil {
			return fmt.Errorf("verification FAILED: %w", err)
		}
		ok = "OK: the export is consistent with its signed log, and the arena's current checkpoint extends it"
	}
	if *f.rpcURL != "" {
		if err := verifyExportOnChain(ctx, env, *f.dir, *f.rpcURL, common.HexToAddress(*f.arenaFlag)); err != nil {
			return err
		}
		ok += "; on-chain state matches"
	}
	// Only now is everything verified.
	fmt.Fprintln(env.Stdout, ok)
	return nil
}

// check refuses flags that cannot go together and an export directory
// that is not one, before anything is read.
func (f *verifyFlags) check() error {
	switch {
	case (*f.dir == "") == (*f.arenaURL == ""):
		return fmt.Errorf("give one of --export and --url")
	case *f.arenaURL == "" && (*f.since != "" || *f.save != ""):
		return fmt.Errorf("--since and --save-checkpoint go with --url (an export alone holds no later checkpoint to compare with)")
	case (*f.rpcURL == "") != (*f.arenaFlag == ""):
		return fmt.Errorf("--chain and --arena go together")
	case *f.arenaFlag != "" && !common.IsHexAddress(*f.arenaFlag):
		return fmt.Errorf("--arena %q is not an address", *f.arenaFlag)
	case *f.timeout < 0:
		return fmt.Errorf("--timeout %s: want a positive duration (or 0 for the default bounds)", *f.timeout)
	case *f.exportWait < 0:
		return fmt.Errorf("--export-wait %s: want 0 or more", *f.exportWait)
	case *f.maxDownload <= 0:
		return fmt.Errorf("--max-download %d: want a positive number of bytes", *f.maxDownload)
	}
	if *f.dir != "" {
		return checkExportDir(*f.dir)
	}
	return nil
}

// verifyOptions reads what the flags pin of the arena's log: its key, its
// verifier key, the checkpoints seen before and the witness policy.
func (f *verifyFlags) verifyOptions() (export.VerifyOptions, error) {
	var o export.VerifyOptions
	if *f.keyHex != "" {
		var err error
		if o.LogKey, err = tlog.ParsePublicKey(*f.keyHex); err != nil {
			return o, err
		}
	}
	if *f.vkey != "" {
		if _, _, err := tlog.ParseVerifierKey(*f.vkey); err != nil {
			return o, fmt.Errorf("--vkey: %w", err)
		}
		o.VKey = *f.vkey
	}
	for _, file := range f.known {
		b, err := readFlagFile("--known-checkpoint", file)
		if err != nil {
			return o, err
		}
		o.KnownCheckpoints = append(o.KnownCheckpoints, b)
	}
	if *f.policyFile != "" {
		b, err := readFlagFile("--witness-policy", *f.policyFile)
		if err != nil {
			return o, err
		}
		if o.Policy, err = witness.ParsePolicy(b); err != nil {
			return o, fmt.Errorf("--witness-policy %s: %w", *f.policyFile, err)
		}
		// The policy's log line names the log key, as --vkey does.
		switch n := len(o.Policy.Logs); {
		case o.VKey == "" && n == 1:
			o.VKey = o.Policy.Logs[0].VKey
		case o.VKey == "" && n > 1:
			return o, fmt.Errorf("--witness-policy %s lists %d logs: name this arena's with --vkey", *f.policyFile, n)
		}
	}
	return o, nil
}

// fetchArena fetches the arena's current checkpoint and its export into a
// temporary directory, which becomes --export, and moves the witness
// policy of o to the current checkpoint. The returned function removes
// the directory.
func (f *verifyFlags) fetchArena(ctx context.Context, env *Env, o *export.VerifyOptions) (*liveCheckpoint, func(), error) {
	u, err := url.Parse(*f.arenaURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, nil, fmt.Errorf("--url %q: want the arena's address, such as https://arena.example.com", *f.arenaURL)
	}
	base := strings.TrimSuffix(u.String(), "/")
	if *f.dir, err = os.MkdirTemp("", "arena-verify-"); err != nil {
		return nil, nil, err
	}
	dir := *f.dir
	cleanup := func() { os.RemoveAll(dir) }
	live, err := fetchLive(ctx, env, base, dir, *f.maxDownload, *f.exportWait)
	if errors.Is(err, errNothingToVerify) {
		cleanup()
		return nil, nil, err
	} else if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("verification FAILED: %w", err)
	}
	// The witness policy is checked on the arena's current checkpoint,
	// which must extend the export's: an export made before a witness
	// was added to the policy is then covered by its cosignature.
	live.policy, o.Policy = o.Policy, nil
	return live, cleanup, nil
}

// printVerifyReport writes what the export's verification checked.
func printVerifyReport(env *Env, rep *export.Report, live *liveCheckpoint) {
	fmt.Fprintf(env.Stdout, "log: %d entries (%d sealed until their round is triggered: hash only), root %s; %d inclusion proofs, %d known checkpoints consistent with the export's\n",
		rep.LogEntries, rep.SealedEntries, rep.LogRoot, rep.InclusionProofs, rep.KnownCheckpoints)
	if c := rep.Checkpoint; c != nil {
		witnessed := "no witness policy given"
		switch {
		case rep.Quorum:
			witnessed = "cosigned by a quorum of the witness policy"
		case live != nil && live.policy != nil:
			witnessed = "the witness policy is checked on the current checkpoint below"
		}
		fmt.Fprintf(env.Stdout, "checkpoint: log %s at %d entries, signed by the log key (%s); the exported leaves hash to its root\n", c.Origin, c.Size, witnessed)
	}
	fmt.Fprintf(env.Stdout, "rounds %d, markets %d, submissions %d: %d EIP-712 signatures, %d commit hashes, %d benchmarks, %d outcomes, %d scores recomputed\n",
		rep.Rounds, rep.Markets, rep.Submissions, rep.Signatures, rep.CommitHashes, rep.Benchmarks, rep.Outcomes, rep.Scores)
	fmt.Fprintf(env.Stdout, "agents: %d signed profiles matched their latest logged update\n", rep.Profiles)
	fmt.Fprintf(env.Stdout, "%d cells checked against the export contract (docs/verification.md)\n", rep.Cells)
	if rep.LeaderboardSkip != "" {
		fmt.Fprintf(env.Stdout, "leaderboard not recomputed: %s\n", rep.LeaderboardSkip)
	} else {
		fmt.Fprintf(env.Stdout, "leaderboard: %d rows recomputed\n", rep.LeaderboardRows)
	}
	if rep.KeyFromExport {
		fmt.Fprintln(env.Stdout, "note: the log key was taken from the export itself; pass --vkey or --log-key with the arena's published key to rule out a re-signed log")
	}
}

// liveCheckpoint is an arena's current checkpoint as verify --url fetched
// it, before the export: unverified until verifyLive.
type liveCheckpoint struct {
	note   []byte
	remote *tlog.Remote
	policy *witness.Policy
}

// fetchLive fetches the arena's current checkpoint, then the export
// published with it into dir: the export of its size (waiting up to
// exportWait for it), else (an arena that published none for it) the
// latest.
func fetchLive(ctx context.Context, env *Env, base, dir string, maxDownload int64, exportWait time.Duration) (*liveCheckpoint, error) {
	remote := &tlog.Remote{URL: base + "/log/"}
	msg, err := remote.Checkpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("the arena's current checkpoint: %w", err)
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(msg)))
	if err != nil {
		return nil, fmt.Errorf("the arena's current checkpoint: %w", err)
	}
	if c.Size == 0 {
		return nil, errNothingToVerify
	}
	f := export.Fetcher{MaxBytes: maxDownload, Budget: downloadBudget}
	// An arena saves a checkpoint, then makes its export: one signed a
	// moment ago gets its export within seconds.
	deadline := time.Now().Add(exportWait)
	_, err = f.Fetch(ctx, fmt.Sprintf("%s/exports/%d/", base, c.Size), dir)
	for arena.ErrorKind(err) == arena.ENOTFOUND && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fetching the published export: %w", context.Cause(ctx))
		case <-time.After(2 * time.Second):
		}
		if err = clearDir(dir); err != nil {
			return nil, err
		}
		_, err = f.Fetch(ctx, fmt.Sprintf("%s/exports/%d/", base, c.Size), dir)
	}
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		fmt.Fprintf(env.Stdout, "note: no export published for the current checkpoint (%d entries) yet: verifying the latest export; the entries after it are proved only by the checkpoint's consistency\n", c.Size)
		if err = clearDir(dir); err == nil {
			_, err = f.Fetch(ctx, base+"/exports/latest/", dir)
		}
		// The latest export may be of a checkpoint published since the
		// one read: the current one is read again, at least as large.
		if err == nil {
			if msg, err = remote.Checkpoint(ctx); err != nil {
				return nil, fmt.Errorf("the arena's current checkpoint: %w", err)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the published export: %w", err)
	}
	return &liveCheckpoint{note: msg, remote: remote}, nil
}

// The default bound of verify --url's download: a base for the requests
// themselves, and a least pace the export's size is given at.
const (
	downloadBase = 2 * time.Minute
	downloadRate = 256 << 10 // bytes a second
)

// downloadBudget is how long an export of total bytes may take to
// download (see --timeout).
func downloadBudget(total int64) time.Duration {
	return downloadBase + time.Duration(total/downloadRate)*time.Second
}

// clearDir removes what dir holds.
func clearDir(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// verifyLive checks an arena's current checkpoint, fetched before its
// export, against the verified export's: signed by the same log key (and
// cosigned by the policy's quorum), and its tree an extension of the
// export's, proved from the log's hash tiles; and likewise against the
// checkpoint kept in the file since. It saves the current checkpoint in
// the file save.
func verifyLive(ctx context.Context, env *Env, rep *export.Report, live *liveCheckpoint, since, save string) error {
	if rep.Checkpoint == nil {
		return fmt.Errorf("the published export carries no checkpoint to tie it to the arena's log")
	}
	remote, msg := live.remote, live.note
	cur, err := tlog.OpenCheckpoint(msg, rep.VKey)
	if err != nil {
		return fmt.Errorf("the arena's current checkpoint: %w", err)
	}
	if live.policy != nil {
		lv, err := note.NewVerifier(rep.VKey)
		if err == nil {
			_, err = live.policy.Verify(msg, lv)
		}
		if err != nil {
			return fmt.Errorf("the arena's current checkpoint: %w", err)
		}
	}
	if err := remote.ProveConsistent(ctx, *rep.Checkpoint, cur); err != nil {
		return fmt.Errorf("the export's checkpoint (%d entries) and the arena's current one (%d entries): %w", rep.Checkpoint.Size, cur.Size, err)
	}
	if live.policy != nil {
		fmt.Fprintf(env.Stdout, "live: the arena's current checkpoint is cosigned by a quorum of the witness policy\n")
	}
	fmt.Fprintf(env.Stdout, "live: the arena's current checkpoint (%d entries) extends the export's (%d), proved from its hash tiles\n", cur.Size, rep.Checkpoint.Size)
	if since != "" {
		b, err := readFlagFile("--since", since)
		if err != nil {
			return err
		}
		old, err := tlog.OpenCheckpoint(b, rep.VKey)
		if err != nil {
			return fmt.Errorf("--since %s: %w", since, err)
		}
		if err := remote.ProveConsistent(ctx, old, cur); err != nil {
			return fmt.Errorf("--since %s (%d entries) and the arena's current checkpoint (%d entries): %w", since, old.Size, cur.Size, err)
		}
		fmt.Fprintf(env.Stdout, "since: the arena's current checkpoint extends the one kept in %s (%d entries)\n", since, old.Size)
	}
	if save != "" {
		if err := safefile.WriteFile(save, msg, 0o644); err != nil {
			return fmt.Errorf("--save-checkpoint: %w", err)
		}
		fmt.Fprintf(env.Stdout, "saved the current checkpoint to %s: pass it as --since next time\n", save)
	}
	return nil
}

// verifyExportOnChain compares a verified export with the chain it was
// mirrored to, with the comparison arena chain verify makes for the
// database.
func verifyExportOnChain(ctx context.Context, env *Env, dir, url string, addr common.Address) error {
	rec, err := export.Load(dir)
	if err != nil {
		return err
	}
	client, id, err := app.DialChain(ctx, url)
	if err != nil {
		return err
	}
	defer client.Close()
	// The export's signatures are made for one chain and contract: another
	// deployment could never have accepted them.
	if m := rec.Meta; m.ChainID != id.Uint64() || !strings.EqualFold(m.VerifyingContract, addr.Hex()) {
		return fmt.Errorf("verification FAILED: meta.json: the export's EIP-712 domain (chain %d, contract %s) is not this deployment (chain %s, PredictionArena %s)",
			m.ChainID, m.VerifyingContract, id, addr.Hex())
	}
	o := relay.VerifyOptions{Name: "the export", SealedUntilTrigger: true, Also: rec.RoundIDs()}
	if rec.Meta.Since != nil {
		o.Since = *rec.Meta.Since
	}
	rep, err := relay.Verify(ctx, rec, client, addr, o)
	return reportChainCheck(env, rep, err, "the export")
}
