package main

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/tlog"
)

func init() {
	register("verify", "recompute and check an export: signatures, commit hashes, scores, leaderboard, log proofs", runVerify)
}

func runVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "verify", "--export DIR [--log-key HEX]")
	dir := fs.String("export", "", "directory written by 'arena export'")
	keyHex := fs.String("log-key", "", "the arena's published log public key (hex, as GET /api/v1/log/sth names it); default: trust the key the export names")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--export is required")
	}
	var pub ed25519.PublicKey
	if *keyHex != "" {
		var err error
		if pub, err = tlog.ParsePublicKey(*keyHex); err != nil {
			return err
		}
	}
	rep, err := export.Verify(*dir, export.VerifyOptions{LogKey: pub})
	if rep != nil {
		fmt.Fprintf(env.Stdout, "log: %d entries (%d sealed until their round is triggered: hash only), root %s; %d inclusion proofs, %d signed heads consistent with the latest\n",
			rep.LogEntries, rep.SealedEntries, rep.LogRoot, rep.InclusionProofs, rep.Heads)
		fmt.Fprintf(env.Stdout, "rounds %d, markets %d, submissions %d: %d EIP-712 signatures, %d commit hashes, %d benchmarks, %d outcomes, %d scores recomputed\n",
			rep.Rounds, rep.Markets, rep.Submissions, rep.Signatures, rep.CommitHashes, rep.Benchmarks, rep.Outcomes, rep.Scores)
		if rep.LeaderboardSkip != "" {
			fmt.Fprintf(env.Stdout, "leaderboard not recomputed: %s\n", rep.LeaderboardSkip)
		} else {
			fmt.Fprintf(env.Stdout, "leaderboard: %d rows recomputed\n", rep.LeaderboardRows)
		}
	}
	if err != nil {
		return fmt.Errorf("verification FAILED: %w", err)
	}
	if rep.KeyFromExport {
		fmt.Fprintln(env.Stdout, "note: the log key was taken from the export itself; pass --log-key with the arena's published key to rule out a re-signed log")
	}
	fmt.Fprintln(env.Stdout, "OK: the export is consistent with its signed log")
	return nil
}
