package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/chain"
	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/relay"
)

func init() {
	register("chain", "deploy the contracts to an EVM chain, show their on-chain state, or verify the database against it", runChain)
}

const chainUsage = `Usage: arena chain <subcommand> [flags]

Subcommands:
  deploy    deploy the contracts (and a mock conditional-tokens contract where none is given)
  status    show the arena contract's on-chain state (with --round, a round's and its scores)
  verify    compare the database's rounds, commits, reveals and scores with the chain
`

func runChain(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, args, chainUsage, map[string]func(context.Context, *Env, []string) error{
		"deploy": chainDeploy,
		"status": chainStatus,
		"verify": chainVerify,
	})
}

// chainRPC is the configured node (ARENA_CHAIN_RPC or --rpc).
func chainRPC(o config.Options) (string, error) {
	if o.ChainRPC == "" {
		return "", fmt.Errorf("no chain RPC: set ARENA_CHAIN_RPC or --rpc")
	}
	return o.ChainRPC, nil
}

func chainDeploy(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "chain deploy", "[--rpc URL] [--key FILE|HEX] [--ctf ADDR] [--out FILE] [--timeout D]")
	config.Bind(fs, "ARENA_CHAIN_RPC", "ARENA_CHAIN_KEY")
	ctfFlag := fs.String("ctf", "", "conditional-tokens contract to read outcomes from (default: deploy MockConditionalTokens, for local chains)")
	out := fs.String("out", "", "also write the addresses as JSON to this file")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up waiting for the deployments after this long")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	o, err := config.Load(config.File(fs, env.Environ), env.Environ, fs)
	if err != nil {
		return err
	}
	url, err := chainRPC(o)
	if err != nil {
		return err
	}
	key, err := app.ChainKey(cmp.Or(o.ChainKey, o.ChainKeyFile))
	if err != nil {
		return err
	}
	var ctf common.Address
	if *ctfFlag != "" {
		if !common.IsHexAddress(*ctfFlag) {
			return fmt.Errorf("--ctf %q is not an address", *ctfFlag)
		}
		ctf = common.HexToAddress(*ctfFlag)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	client, chainID, err := app.DialChain(ctx, url)
	if err != nil {
		return err
	}
	defer client.Close()
	opts, err := bind.NewKeyedTransactorWithChainID(key.PrivateKey(), chainID)
	if err != nil {
		return err
	}
	opts.Context = ctx
	addrs, err := chain.Deploy(opts, client, key.Address(), ctf, chain.WaitMined(ctx, client))
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(struct {
		ChainID uint64 `json:"chain_id"`
		Curator string `json:"curator"`
		chain.Addresses
	}{chainID.Uint64(), key.Address().Hex(), addrs}, "", "  ")
	if *out != "" {
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "%s\n", b)
	fmt.Fprintf(env.Stdout, "EIP-712 domain for the arena: ARENA_CHAIN_ID=%d ARENA_CONTRACT=%s\n", chainID.Uint64(), addrs.PredictionArena.Hex())
	fmt.Fprintf(env.Stdout, "to mirror the forecast track: arena serve with ARENA_CHAIN_RPC, ARENA_CHAIN_KEY (this key: the curator relays) and ARENA_CHAIN_ARENA=%s\n", addrs.PredictionArena.Hex())
	return nil
}

// chainReadFlags adds and parses the flags of the commands that read a
// deployment: --rpc (ARENA_CHAIN_RPC), --arena (ARENA_CHAIN_ARENA), --round
// and the keys given, and resolves the configuration.
func chainReadFlags(env *Env, fs *flag.FlagSet, args []string, roundUsage string, keys ...string) (o config.Options, url string, round *uint64, err error) {
	config.Bind(fs, append([]string{"ARENA_CHAIN_RPC", "ARENA_CHAIN_ARENA"}, keys...)...)
	round = fs.Uint64("round", 0, roundUsage)
	if err = parseAll(fs, args); err != nil {
		return
	}
	if o, err = config.Load(config.File(fs, env.Environ), env.Environ, fs); err != nil {
		return
	}
	if url, err = chainRPC(o); err != nil {
		return
	}
	if !common.IsHexAddress(o.ChainArena) {
		err = fmt.Errorf("--arena %q is not an address (set --arena or ARENA_CHAIN_ARENA)", o.ChainArena)
	}
	return
}

func chainVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "chain verify", "[--db URL] [--rpc URL] [--arena ADDR] [--round N]")
	o, url, round, err := chainReadFlags(env, fs, args, "check only this round (default: every round the relayer mirrored)", "ARENA_DB")
	if err != nil {
		return err
	}
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	client, _, err := app.DialChain(ctx, url)
	if err != nil {
		return err
	}
	defer client.Close()
	var ids []uint64
	if *round > 0 {
		ids = []uint64{*round}
	}
	rep, err := relay.Verify(ctx, db, client, common.HexToAddress(o.ChainArena), relay.VerifyOptions{Rounds: ids, Relayed: db})
	return reportChainCheck(env, rep, err, "the database")
}

// reportChainCheck prints what a chain comparison checked and every
// difference, and fails naming the first one.
func reportChainCheck(env *Env, rep *relay.VerifyReport, err error, record string) error {
	if rep != nil {
		fmt.Fprintf(env.Stdout, "compared with the chain: %d rounds, %d markets, %d benchmarks, %d commits, %d reveals, %d outcome sets, %d scores (bps²)\n",
			rep.Rounds, rep.Markets, rep.Benchmarks, rep.Commits, rep.Reveals, rep.Outcomes, rep.Scores)
		if rep.Sealed > 0 {
			fmt.Fprintf(env.Stdout, "%d on-chain commits of rounds not triggered yet: %s shows them once the round is triggered\n", rep.Sealed, record)
		}
		if len(rep.NotOnChain) > 0 {
			fmt.Fprintf(env.Stdout, "not on chain (never mirrored; nothing to compare): rounds %v\n", rep.NotOnChain)
		}
	}
	if err != nil {
		return err
	}
	if len(rep.Mismatches) > 0 {
		for _, m := range rep.Mismatches {
			fmt.Fprintln(env.Stdout, "MISMATCH "+m)
		}
		return fmt.Errorf("chain verification FAILED: %d differences between the chain and %s; the first: %s", len(rep.Mismatches), record, rep.Mismatches[0])
	}
	if rep.Rounds == 0 {
		fmt.Fprintln(env.Stdout, "note: no round is on chain yet")
	}
	fmt.Fprintf(env.Stdout, "OK: the chain agrees with %s\n", record)
	return nil
}

func chainStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "chain status", "--arena ADDR [--rpc URL] [--round N]")
	o, url, round, err := chainReadFlags(env, fs, args, "also show this round's on-chain state and scores")
	if err != nil {
		return err
	}
	client, chainID, err := app.DialChain(ctx, url)
	if err != nil {
		return err
	}
	defer client.Close()
	addr := common.HexToAddress(o.ChainArena)
	code, err := client.CodeAt(ctx, addr, nil)
	if err != nil {
		return fmt.Errorf("chain: code at %s: %w", addr.Hex(), err)
	}
	if len(code) == 0 {
		return fmt.Errorf("no contract at %s", addr.Hex())
	}
	pa, err := bindings.NewPredictionArena(addr, client)
	if err != nil {
		return err
	}
	opts := &bind.CallOpts{Context: ctx}
	rmAddr, err := pa.Rounds(opts)
	if err != nil {
		return fmt.Errorf("chain: %s is not a PredictionArena: %w", addr.Hex(), err)
	}
	ctf, err := pa.Ctf(opts)
	if err != nil {
		return err
	}
	rm, err := bindings.NewRoundManager(rmAddr, client)
	if err != nil {
		return err
	}
	curator, err := rm.Curator(opts)
	if err != nil {
		return err
	}
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "chain %d, block %d (%s)\nPredictionArena %s\nRoundManager    %s (curator %s)\nConditionalTokens %s\n",
		chainID, head.Number, time.Unix(int64(head.Time), 0).UTC().Format(time.RFC3339), addr.Hex(), rmAddr.Hex(), curator.Hex(), ctf.Hex())
	if *round == 0 {
		return nil
	}
	id := new(big.Int).SetUint64(*round)
	r, err := rm.GetRound(opts, id)
	if err != nil {
		return err
	}
	if !r.Exists {
		return fmt.Errorf("round %d is not on chain", *round)
	}
	res, err := pa.ResultOf(opts, id)
	if err != nil {
		return err
	}
	n, err := pa.ParticipantCount(opts, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "round %d: %d markets, commit deadline %s, reveal %s – %s, invalidated %v, benchmarks %v, triggered %v, %d participants, %d scored\n",
		*round, r.MarketCount, unix(r.CommitDeadline), unix(r.RevealStart), unix(r.RevealDeadline), r.Invalidated, r.BenchmarksSet, res.Triggered, n, res.ScoredCount)
	if res.Triggered {
		fmt.Fprintf(env.Stdout, "outcomes %v (1 YES, 0 NO, -1 void, -2 unresolved); scored %d, benchmarked %d, base Brier %s bps²\n",
			res.Outcomes, res.Scored, res.Benchmarked, res.BaseBrierBps2)
	}
	for i := int64(0); i < n.Int64(); i++ {
		agent, err := pa.ParticipantAt(opts, id, big.NewInt(i))
		if err != nil {
			return err
		}
		s, err := pa.ScoreOf(opts, id, agent)
		if err != nil {
			return err
		}
		if s.Scored {
			fmt.Fprintf(env.Stdout, "  %s brier %d bps² alpha %d bps² forfeit %v\n", agent.Hex(), s.BrierBps2, s.AlphaBps2, s.Forfeit)
		} else {
			fmt.Fprintf(env.Stdout, "  %s not scored yet\n", agent.Hex())
		}
	}
	return nil
}

func unix(t uint64) string { return time.Unix(int64(t), 0).UTC().Format(time.RFC3339) }
