package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/relay"
)

// relayPeriod is how long one claimed run of the relayer lasts, and
// relayPoll how often it looks for new items within it. A replica that
// dies mid-run holds its period's claim, so relaying pauses for at most a
// period: short, because commits must reach the chain before the deadline.
const (
	relayPeriod = 15 * time.Second
	relayPoll   = 2 * time.Second
)

// relayJobs builds the relayer when a chain is configured
// (ARENA_CHAIN_RPC and ARENA_CHAIN_ARENA): the forecast track's EIP-712
// domain must be that chain's, so that agents' signatures are valid on
// chain too. It returns no job without a chain.
func (a *App) relayJobs(ctx context.Context) ([]jobs.Job, error) {
	o := a.Config
	if o.ChainRPC == "" && o.ChainArena == "" {
		return nil, nil
	}
	if o.ChainRPC == "" || o.ChainArena == "" {
		return nil, fmt.Errorf("chain: set both ARENA_CHAIN_RPC and ARENA_CHAIN_ARENA to mirror the forecast track (or neither)")
	}
	key, err := relayKey(o)
	if err != nil {
		return nil, err
	}
	client, _, err := DialChain(ctx, o.ChainRPC)
	if err != nil {
		return nil, err
	}
	rel := &relay.Relayer{Store: a.DB, Client: client, Key: key.PrivateKey(), Arena: common.HexToAddress(o.ChainArena),
		ReportOutcomes: o.ChainReportOutcomes, Confirmations: uint64(o.ChainConfirmations), Logger: a.Logger}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := rel.Init(ictx); err != nil {
		client.Close()
		return nil, err
	}
	if d := rel.Domain(); d != a.Rounds.Domain {
		client.Close()
		return nil, fmt.Errorf("chain: ARENA_CHAIN_ID=%d ARENA_CONTRACT=%s differ from the chain's EIP-712 domain (chain %d, PredictionArena %s); signatures made for one could not be relayed to the other: unset them or make them equal",
			o.ChainID, o.Contract, d.ChainID, d.Contract.Hex())
	}
	a.closers = append(a.closers, func() error { client.Close(); return nil })
	a.Logger.Info("mirroring the forecast track to a chain", "chain_id", a.Rounds.Domain.ChainID, "arena", a.Rounds.Domain.Contract.Hex(),
		"relayer", rel.From().Hex(), "report_outcomes", o.ChainReportOutcomes, "confirmations", o.ChainConfirmations)
	return []jobs.Job{relay.Job(rel, relayPeriod, relayPoll)}, nil
}

// chainDomain is the EIP-712 domain of the configured chain: its chain id
// and the PredictionArena.
func chainDomain(ctx context.Context, o config.Options) (forecast.Domain, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, id, err := DialChain(ctx, o.ChainRPC)
	if err != nil {
		return forecast.Domain{}, err
	}
	client.Close()
	return forecast.Domain{ChainID: id.Uint64(), Contract: common.HexToAddress(o.ChainArena)}, nil
}

// DialChain connects to a JSON-RPC node and reads its chain id.
func DialChain(ctx context.Context, url string) (*ethclient.Client, *big.Int, error) {
	client, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("chain: dial %s: %w", url, err)
	}
	id, err := client.ChainID(ctx)
	if err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("chain: chain id of %s: %w", url, err)
	}
	return client, id, nil
}

// relayKey is the relayer's key: ARENA_CHAIN_KEY (hex, or a key file's
// path) or ARENA_CHAIN_KEY_FILE.
func relayKey(o config.Options) (*forecast.Key, error) {
	switch {
	case o.ChainKey != "" && o.ChainKeyFile != "":
		return nil, fmt.Errorf("chain: set ARENA_CHAIN_KEY or ARENA_CHAIN_KEY_FILE, not both")
	case o.ChainKeyFile != "":
		return forecast.LoadKey(o.ChainKeyFile)
	}
	return ChainKey(o.ChainKey)
}

// ChainKey reads the relayer's, curator's or deployer's key: a key file's
// path, or the hex key.
func ChainKey(v string) (*forecast.Key, error) {
	if v == "" {
		return nil, fmt.Errorf("no chain key: set ARENA_CHAIN_KEY (the hex private key, or a key file), ARENA_CHAIN_KEY_FILE or --key")
	}
	if _, err := os.Stat(v); err == nil {
		return forecast.LoadKey(v)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	k, err := forecast.ParseKey(v)
	if err != nil {
		return nil, fmt.Errorf("ARENA_CHAIN_KEY is neither a key file nor a hex private key")
	}
	return k, nil
}
