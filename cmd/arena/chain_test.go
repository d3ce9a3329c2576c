package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/forecast-arena/arena/internal/store"
)

// A simulated chain served over HTTP on loopback, mining every 50 ms.
func httpChain(t *testing.T, funded common.Address) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	sim := simulated.NewBackend(types.GenesisAlloc{funded: {Balance: new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)}},
		func(nc *node.Config, _ *ethconfig.Config) {
			nc.HTTPHost, nc.HTTPPort, nc.HTTPModules = "127.0.0.1", port, []string{"eth", "net", "web3"}
		})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			sim.Commit()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; sim.Close() })
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

// arena chain deploy deploys the three contracts with the configured key
// and prints their addresses; arena chain status reads them back.
func TestChainDeployAndStatus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (contract deployment on a simulated chain): run without -short")
	}
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey)
	url := httpChain(t, addr)
	out := filepath.Join(t.TempDir(), "deploy.json")
	env := []string{"ARENA_CHAIN_RPC=" + url, "ARENA_CHAIN_KEY=" + hex.EncodeToString(crypto.FromECDSA(key))}
	stdout, _, err := cli(t, env, "chain", "deploy", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		ChainID         uint64         `json:"chain_id"`
		Curator         common.Address `json:"curator"`
		PredictionArena common.Address `json:"prediction_arena"`
		RoundManager    common.Address `json:"round_manager"`
	}
	if err := json.Unmarshal(b, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Curator != addr || dep.PredictionArena == (common.Address{}) || dep.ChainID != 1337 {
		t.Fatalf("deployment %+v\n%s", dep, stdout)
	}
	if !strings.Contains(stdout, "ARENA_CONTRACT="+dep.PredictionArena.Hex()) {
		t.Fatalf("no domain hint:\n%s", stdout)
	}
	st, _, err := cli(t, env, "chain", "status", "--arena", dep.PredictionArena.Hex())
	if err != nil || !strings.Contains(st, dep.RoundManager.Hex()) || !strings.Contains(st, "curator "+addr.Hex()) {
		t.Fatalf("status: %v\n%s", err, st)
	}
	if _, _, err := cli(t, env, "chain", "status", "--arena", dep.PredictionArena.Hex(), "--round", "1"); err == nil || !strings.Contains(err.Error(), "not on chain") {
		t.Fatalf("status of a missing round: %v", err)
	}
	if _, _, err := cli(t, env, "chain", "status", "--arena", addr.Hex()); err == nil || !strings.Contains(err.Error(), "no contract") {
		t.Fatalf("status of an account: %v", err)
	}
	if _, _, err := cli(t, []string{"ARENA_CHAIN_RPC=" + url}, "chain", "deploy"); err == nil || !strings.Contains(err.Error(), "ARENA_CHAIN_KEY") {
		t.Fatalf("deploy without a key: %v", err)
	}
	// An export whose signatures are for another domain (this arena never
	// mirrored to the deployment) fails the chain comparison at once: the
	// export's own checks are printed, and no OK, since not everything
	// verified.
	dir := t.TempDir()
	exp, dbURL := filepath.Join(dir, "export"), "sqlite:"+filepath.Join(dir, "arena.db")
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, _, err := cli(t, nil, "export", "--db", dbURL, "--out", exp); err != nil {
		t.Fatal(err)
	}
	out, _, err = cli(t, nil, "verify", "--export", exp, "--chain", url, "--arena", dep.PredictionArena.Hex())
	if err == nil || !strings.Contains(err.Error(), "is not this deployment") || !strings.Contains(out, "leaderboard: 0 rows recomputed") || strings.Contains(out, "OK") {
		t.Fatalf("verify --chain of another domain's export: %v\n%s", err, out)
	}
	if _, _, err := cli(t, nil, "verify", "--export", exp, "--chain", url); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Fatalf("verify --chain without --arena: %v", err)
	}
}
