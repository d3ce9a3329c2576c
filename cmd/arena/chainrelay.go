package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/internal/store"
)

// relayPeriod is how long one claimed run of the relayer lasts, and
// relayPoll how often it looks for new items within it. A replica that
// dies mid-run holds its period's claim, so relaying pauses for at most a
// period: short, because commits must reach the chain before the deadline.
const (
	relayPeriod = 15 * time.Second
	relayPoll   = 2 * time.Second
)

// chainRelayJob builds the relayer of `arena serve` when a chain is
// configured (ARENA_CHAIN_RPC and ARENA_CHAIN_ARENA) and makes the forecast
// track's EIP-712 domain that chain's, so that agents' signatures are valid
// on chain too. It returns no job without a chain.
func chainRelayJob(ctx context.Context, o *config.Options, db *store.DB, logger *slog.Logger) ([]jobs.Job, func(), error) {
	if o.ChainRPC == "" && o.ChainArena == "" {
		return nil, func() {}, nil
	}
	if o.ChainRPC == "" || o.ChainArena == "" {
		return nil, nil, fmt.Errorf("chain: set both ARENA_CHAIN_RPC and ARENA_CHAIN_ARENA to mirror the forecast track (or neither)")
	}
	key, err := relayKey(o)
	if err != nil {
		return nil, nil, err
	}
	client, _, err := dialChain(ctx, o.ChainRPC)
	if err != nil {
		return nil, nil, err
	}
	rel := &relay.Relayer{Store: db, Client: client, Key: key.PrivateKey(), Arena: common.HexToAddress(o.ChainArena),
		ReportOutcomes: o.ChainReportOutcomes, Confirmations: uint64(o.ChainConfirmations), Logger: logger}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := rel.Init(ictx); err != nil {
		client.Close()
		return nil, nil, err
	}
	d := rel.Domain()
	zero := o.ChainID == 0 && common.HexToAddress(o.Contract) == (common.Address{})
	if !zero && (uint64(o.ChainID) != d.ChainID || common.HexToAddress(o.Contract) != d.Contract) {
		client.Close()
		return nil, nil, fmt.Errorf("chain: ARENA_CHAIN_ID=%d ARENA_CONTRACT=%s differ from the chain's EIP-712 domain (chain %d, PredictionArena %s); signatures made for one could not be relayed to the other: unset them or make them equal",
			o.ChainID, o.Contract, d.ChainID, d.Contract.Hex())
	}
	o.ChainID, o.Contract = int64(d.ChainID), d.Contract.Hex()
	logger.Info("mirroring the forecast track to a chain", "chain_id", d.ChainID, "arena", d.Contract.Hex(), "relayer", rel.From().Hex(),
		"report_outcomes", o.ChainReportOutcomes, "confirmations", o.ChainConfirmations)
	return []jobs.Job{relay.Job(rel, relayPeriod, relayPoll)}, client.Close, nil
}

// chainDomain is the EIP-712 domain of the configured chain: its chain id
// and the PredictionArena (the commands other than serve sign and check
// under it, as serve does once it mirrors to the chain).
func chainDomain(ctx context.Context, o config.Options) (forecast.Domain, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, id, err := dialChain(ctx, o.ChainRPC)
	if err != nil {
		return forecast.Domain{}, err
	}
	client.Close()
	return forecast.Domain{ChainID: id.Uint64(), Contract: common.HexToAddress(o.ChainArena)}, nil
}

// relayKey is the relayer's key: ARENA_CHAIN_KEY (hex, or a key file's
// path) or ARENA_CHAIN_KEY_FILE.
func relayKey(o *config.Options) (*forecast.Key, error) {
	switch {
	case o.ChainKey != "" && o.ChainKeyFile != "":
		return nil, fmt.Errorf("chain: set ARENA_CHAIN_KEY or ARENA_CHAIN_KEY_FILE, not both")
	case o.ChainKeyFile != "":
		return forecast.LoadKey(o.ChainKeyFile)
	}
	return chainKey(o.ChainKey)
}
