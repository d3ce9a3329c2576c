package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/tlog"
)

func init() {
	register("verify", "check an export against its contract: every table and column, signatures, commit hashes, scores and leaderboard recomputed, log proofs; with --chain, compare it with on-chain state", runVerify)
}

func runVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "verify", "--export DIR [--log-key HEX] [--chain RPC --arena ADDR]")
	dir := fs.String("export", "", "directory written by 'arena export'")
	keyHex := fs.String("log-key", "", "the arena's published log public key (hex, as GET /api/v1/log/sth names it); default: trust the key the export names")
	rpcURL := fs.String("chain", "", "JSON-RPC endpoint of the chain the arena mirrors to: also compare the export with on-chain state")
	arenaFlag := fs.String("arena", "", "the PredictionArena address (with --chain)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--export is required")
	}
	if (*rpcURL == "") != (*arenaFlag == "") {
		return fmt.Errorf("--chain and --arena go together")
	}
	if *arenaFlag != "" && !common.IsHexAddress(*arenaFlag) {
		return fmt.Errorf("--arena %q is not an address", *arenaFlag)
	}
	var pub ed25519.PublicKey
	if *keyHex != "" {
		var err error
		if pub, err = tlog.ParsePublicKey(*keyHex); err != nil {
			return err
		}
	}
	bar := progress.New(env.Stderr, 0, "steps")
	rep, err := export.Verify(*dir, export.VerifyOptions{LogKey: pub, Progress: bar.Set})
	bar.Finish()
	if err != nil {
		return fmt.Errorf("verification FAILED: %w", err)
	}
	fmt.Fprintf(env.Stdout, "log: %d entries (%d sealed until their round is triggered: hash only), root %s; %d inclusion proofs, %d signed heads consistent with the latest\n",
		rep.LogEntries, rep.SealedEntries, rep.LogRoot, rep.InclusionProofs, rep.Heads)
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
		fmt.Fprintln(env.Stdout, "note: the log key was taken from the export itself; pass --log-key with the arena's published key to rule out a re-signed log")
	}
	fmt.Fprintln(env.Stdout, "OK: the export is consistent with its signed log")
	if *rpcURL == "" {
		return nil
	}
	return verifyExportOnChain(ctx, env, *dir, *rpcURL, common.HexToAddress(*arenaFlag))
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
