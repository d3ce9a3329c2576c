package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain/bindings"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/store"
)

// anvil's first development account (its well-known test key).
const anvilKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

// startAnvil runs anvil (ARENA_ANVIL, else anvil on PATH) on a loopback
// port with one-second blocks, as a public chain keeps producing blocks.
func startAnvil(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ARENA_ANVIL")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("anvil"); err != nil {
			t.Fatal("ARENA_TEST_ANVIL is set but anvil is not found: set ARENA_ANVIL or put anvil on PATH (.ci/run installs it with npm)")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--block-time", "1", "--silent")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := ethclient.Dial(url)
		if err == nil {
			_, err = c.ChainID(context.Background())
			c.Close()
		}
		if err == nil {
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("anvil did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// End to end on a real local node: `arena chain deploy` to anvil, a round
// played through `arena serve` with the relayer on, serve killed with -9
// while it mirrors the commits and restarted; the round ends mirrored with
// every item on chain exactly once, and `arena chain verify` finds the
// on-chain scores equal to the database's.
func TestAnvilEndToEnd(t *testing.T) {
	if os.Getenv("ARENA_TEST_ANVIL") == "" {
		t.Skip("set ARENA_TEST_ANVIL=1 (and ARENA_ANVIL or anvil on PATH) to run the end-to-end test on anvil")
	}
	if testing.Short() {
		t.Skip("slow (a round in real time on anvil)")
	}
	ctx := context.Background()
	rpc := startAnvil(t)
	dir := t.TempDir()
	dep := filepath.Join(dir, "deploy.json")
	chainEnv := []string{"ARENA_CHAIN_RPC=" + rpc, "ARENA_CHAIN_KEY=" + anvilKey}
	if _, _, err := cli(t, chainEnv, "chain", "deploy", "--out", dep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	var addrs struct {
		ChainID         uint64         `json:"chain_id"`
		PredictionArena common.Address `json:"prediction_arena"`
	}
	if err := json.Unmarshal(b, &addrs); err != nil {
		t.Fatal(err)
	}
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	ids := fcMarkets(t, dbURL, 3)
	for _, kv := range append(chainEnv, "ARENA_CHAIN_ARENA="+addrs.PredictionArena.Hex(), "ARENA_CHAIN_REPORT_OUTCOMES=true") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	serve := func() *serveProc { return startServe(t, "--db", dbURL, "--admin-token", fcToken, "--no-rounds") }
	p := serve()
	var dom forecast.DomainJSON
	p.api(t, "GET", "/api/v1/domain", nil, "", &dom)
	if dom.ChainID != addrs.ChainID || common.HexToAddress(dom.VerifyingContract) != addrs.PredictionArena {
		t.Fatalf("serve signs under %+v, not the chain's domain (chain %d, arena %s)", dom, addrs.ChainID, addrs.PredictionArena.Hex())
	}
	d := forecast.Domain{ChainID: dom.ChainID, Contract: addrs.PredictionArena}
	// Commits close in 30 s: long enough for a restart plus the next
	// relayer period (the killed process still holds the current one).
	cd := time.Now().Add(30 * time.Second).Truncate(time.Second)
	rs, rd := cd.Add(2*time.Second), cd.Add(12*time.Second)
	var round forecast.RoundJSON
	if st := p.api(t, "POST", "/api/v1/admin/rounds", map[string]any{"market_ids": ids, "commit_deadline": cd,
		"reveal_start": rs, "reveal_deadline": rd}, fcToken, &round); st != 201 {
		t.Fatalf("create round: %d", st)
	}
	type agent struct {
		key   *forecast.Key
		preds []uint16
		salt  common.Hash
	}
	agents := []agent{{fcKey("anvil a"), []uint16{9000, 100, 5000}, crypto.Keccak256Hash([]byte("a"))},
		{fcKey("anvil b"), []uint16{2000, 8000, 0}, crypto.Keccak256Hash([]byte("b"))},
		{fcKey("anvil c"), []uint16{5000, 5000, 5000}, crypto.Keccak256Hash([]byte("c"))}}
	for _, a := range agents {
		c := forecast.Commit{RoundID: round.ID, CommitHash: forecast.CommitHash(round.ID, a.key.Address(), a.preds, a.salt), Agent: a.key.Address(),
			Deadline: uint64(time.Now().Add(time.Hour).Unix())}
		sig, _ := a.key.SignCommit(d, c)
		if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round.ID), forecast.CommitRequest{Agent: a.key.Address().Hex(),
			CommitHash: c.CommitHash.Hex(), Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}, "", nil); st != 201 {
			t.Fatalf("commit: %d", st)
		}
	}
	// Let the relayer start on the round, then kill -9 mid-mirroring.
	client, err := ethclient.Dial(rpc)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	pa, err := bindings.NewPredictionArena(addrs.PredictionArena, client)
	if err != nil {
		t.Fatal(err)
	}
	opts := &bind.CallOpts{Context: ctx}
	bid := new(big.Int).SetUint64(round.ID)
	waitFor := func(what string, until time.Time, ok func() bool) {
		t.Helper()
		for !ok() {
			if time.Now().After(until) {
				t.Fatalf("%s: timed out; serve log:\n%s", what, p.logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	rm, err := bindings.NewRoundManager(mustRounds(t, pa, opts), client)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("round on chain", cd, func() bool {
		r, err := rm.GetRound(opts, bid)
		return err == nil && r.Exists
	})
	n, _ := pa.ParticipantCount(opts, bid)
	t.Logf("kill -9 with %v of 3 commits on chain", n)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	p = serve()
	waitFor("three commits on chain", cd, func() bool {
		n, err := pa.ParticipantCount(opts, bid)
		return err == nil && n.Int64() == 3
	})
	// Two agents reveal; the third forfeits.
	time.Sleep(time.Until(rs) + 500*time.Millisecond)
	for i, a := range agents[:2] {
		rv := forecast.Reveal{RoundID: round.ID, Predictions: a.preds, Salt: a.salt, Agent: a.key.Address(), Nonce: 1, Deadline: uint64(time.Now().Add(time.Hour).Unix())}
		sig, _ := a.key.SignReveal(d, rv)
		if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/reveals", round.ID), forecast.RevealRequest{Agent: a.key.Address().Hex(),
			Predictions: a.preds, Salt: a.salt.Hex(), Nonce: 1, Deadline: rv.Deadline, Signature: forecast.EncodeSignature(sig)}, "", nil); st != 201 {
			t.Fatalf("reveal %d: %d", i, st)
		}
	}
	time.Sleep(time.Until(rd) + 500*time.Millisecond)
	for i, o := range []string{"YES", "NO", "VOID"} {
		if st := p.api(t, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ids[i]), map[string]string{"outcome": o}, fcToken, nil); st != 200 {
			t.Fatalf("resolve: %d", st)
		}
	}
	if st := p.api(t, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", round.ID), nil, fcToken, nil); st != 200 {
		t.Fatalf("trigger: %d", st)
	}
	waitFor("on-chain scoring", time.Now().Add(90*time.Second), func() bool {
		done, err := pa.ScoringDone(opts, bid)
		return err == nil && done
	})
	out, _, err := cli(t, []string{"ARENA_CHAIN_RPC=" + rpc, "ARENA_CHAIN_ARENA=" + addrs.PredictionArena.Hex()}, "chain", "verify", "--db", dbURL)
	if err != nil || !strings.Contains(out, "OK: the chain agrees") || !strings.Contains(out, "3 commits, 2 reveals, 1 outcome sets, 3 scores") {
		t.Fatalf("chain verify: %v\n%s", err, out)
	}
	// Exactly one transaction per recorded item: the relayer's nonce on
	// chain counts its transactions (three deployments before).
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	items, err := db.ChainTxs(ctx, round.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	sent, kinds, gas := 0, map[string]int{}, map[string][]uint64{}
	for _, it := range items {
		kinds[it.Kind]++
		if it.TxHash != "" {
			sent++
			if rc, err := client.TransactionReceipt(ctx, common.HexToHash(it.TxHash)); err == nil {
				gas[it.Kind] = append(gas[it.Kind], rc.GasUsed)
			}
		}
		if it.Status == arena.ChainTxFailed {
			t.Errorf("item %s/%s failed: %s", it.Kind, it.Item, it.Error)
		}
	}
	nonce, err := client.NonceAt(ctx, mustKey(t).Address(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce-3 != uint64(sent) || kinds["commit"] != 3 || kinds["reveal"] != 2 {
		t.Fatalf("relayer sent %d transactions for %d recorded items %v", nonce-3, sent, kinds)
	}
	t.Logf("mirrored with %d transactions: %v; gas used per kind: %v", sent, kinds, gas)
}

func mustRounds(t *testing.T, pa *bindings.PredictionArena, opts *bind.CallOpts) common.Address {
	t.Helper()
	a, err := pa.Rounds(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustKey(t *testing.T) *forecast.Key {
	t.Helper()
	k, err := forecast.ParseKey(anvilKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
