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
	"github.com/forecast-arena/arena/internal/relay"
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
// of 30 agents played through `arena serve` with the relayer on, serve
// killed with -9 while the commits are part-mirrored (the relayer keeps at
// most 16 transactions unmined, so the kill is forced between its first
// and second batch of commits) and restarted; the round ends mirrored
// with every item on chain exactly once, and `arena chain verify` and
// `arena verify --export --chain` find the on-chain state, scores to the
// bps², equal to the database's and the export's.
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
	// Commits close in 60 s: long enough for two kills and restarts, each
	// followed by the next relayer period (the killed process still holds
	// the current one, up to 15 s).
	cd := time.Now().Add(60 * time.Second).Truncate(time.Second)
	rs, rd := cd.Add(2*time.Second), cd.Add(22*time.Second)
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
	const nAgents, nReveal = 2*relay.DefaultMaxInFlight - 2, 20
	var agents []agent
	for i := range nAgents {
		agents = append(agents, agent{fcKey(fmt.Sprint("anvil ", i)), []uint16{uint16(i * 300), uint16(10000 - i*300), uint16(i * 123)},
			crypto.Keccak256Hash([]byte(fmt.Sprint("salt ", i)))})
	}
	for _, a := range agents {
		c := forecast.Commit{RoundID: round.ID, CommitHash: forecast.CommitHash(round.ID, a.key.Address(), a.preds, a.salt), Agent: a.key.Address(),
			Deadline: uint64(time.Now().Add(time.Hour).Unix())}
		sig, _ := a.key.SignCommit(d, c)
		if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round.ID), forecast.CommitRequest{Agent: a.key.Address().Hex(),
			CommitHash: c.CommitHash.Hex(), Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}, "", nil); st != 201 {
			t.Fatalf("commit: %d", st)
		}
	}
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
			time.Sleep(20 * time.Millisecond)
		}
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	commitItems := func() (recorded, mined int) {
		items, err := db.ChainTxs(ctx, round.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Kind == relay.KindCommit {
				recorded++
				if it.Block > 0 || it.Status == arena.ChainTxConfirmed {
					mined++
				}
			}
		}
		return recorded, mined
	}
	// kill -9 twice while the commits are part-mirrored: once the first
	// commit is recorded (its broadcast may not have happened), and once
	// the first batch of MaxInFlight is recorded (some sent, maybe mined;
	// the rest waits for them, so the kill is always mid-mirroring).
	for _, at := range []int{1, relay.DefaultMaxInFlight} {
		var recorded int
		waitFor(fmt.Sprintf("%d commits recorded", at), cd, func() bool {
			recorded, _ = commitItems()
			return recorded >= at
		})
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		recorded, mined := commitItems()
		onChain, _ := pa.ParticipantCount(opts, bid)
		if recorded == 0 || recorded >= nAgents {
			t.Fatalf("killed with %d of %d commits recorded: not mid-mirroring", recorded, nAgents)
		}
		t.Logf("kill -9 with %d of %d commits recorded and sent (%d mined per the records, %v on chain)", recorded, nAgents, mined, onChain)
		p = serve()
	}
	waitFor("every commit on chain", cd, func() bool {
		n, err := pa.ParticipantCount(opts, bid)
		return err == nil && n.Int64() == nAgents
	})
	// Each commit on chain exactly once: one Committed event per agent.
	// The node may answer for logs a moment after its state shows the
	// commits, so the events are read until all are there (or time runs out).
	var events int
	var seen map[common.Address]bool
	waitFor("every Committed event", time.Now().Add(10*time.Second), func() bool {
		it, err := pa.FilterCommitted(&bind.FilterOpts{Context: ctx}, []*big.Int{bid}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		events, seen = 0, map[common.Address]bool{}
		for it.Next() {
			events++
			seen[it.Event.Agent] = true
		}
		return events >= nAgents
	})
	if events != nAgents || len(seen) != nAgents {
		t.Fatalf("%d Committed events for %d agents, want %d each", events, len(seen), nAgents)
	}
	t.Logf("after the restart: %d commits on chain, %d Committed events, %d duplicates", nAgents, events, events-len(seen))
	// Twenty agents reveal; the others forfeit.
	time.Sleep(time.Until(rs) + 500*time.Millisecond)
	for i, a := range agents[:nReveal] {
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
	counts := fmt.Sprintf("%d commits, %d reveals, 1 outcome sets, %d scores", nAgents, nReveal, nAgents)
	out, _, err := cli(t, []string{"ARENA_CHAIN_RPC=" + rpc, "ARENA_CHAIN_ARENA=" + addrs.PredictionArena.Hex()}, "chain", "verify", "--db", dbURL)
	if err != nil || !strings.Contains(out, "OK: the chain agrees") || !strings.Contains(out, counts) {
		t.Fatalf("chain verify: %v\n%s", err, out)
	}
	// The export verifies alone and agrees with the chain item by item.
	exp := filepath.Join(dir, "export")
	// The export signs under the chain's domain, as serve does.
	if _, _, err := cli(t, []string{"ARENA_CHAIN_RPC=" + rpc, "ARENA_CHAIN_ARENA=" + addrs.PredictionArena.Hex()}, "export", "--db", dbURL, "--out", exp); err != nil {
		t.Fatal(err)
	}
	out, _, err = cli(t, nil, "verify", "--export", exp, "--chain", rpc, "--arena", addrs.PredictionArena.Hex())
	if err != nil || !strings.Contains(out, "OK: the chain agrees with the export") || !strings.Contains(out, counts) {
		t.Fatalf("verify --export --chain: %v\n%s", err, out)
	}
	t.Logf("arena verify --export --chain:\n%s", out)
	// Exactly one transaction per recorded item: the relayer's nonce on
	// chain counts its transactions (three deployments before).
	items, err := db.ChainTxs(ctx, round.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	type figures struct {
		n, gasMin, gasMax int
		gas, feeGwei      float64
	}
	sent, kinds, figs := 0, map[string]int{}, map[string]*figures{}
	var totalGas, totalFee float64
	for _, it := range items {
		kinds[it.Kind]++
		if it.TxHash != "" {
			sent++
			tx, _, err := client.TransactionByHash(ctx, common.HexToHash(it.TxHash))
			if err != nil || tx.Type() != 2 {
				t.Errorf("%s/%s: transaction %s is not an EIP-1559 one (%v)", it.Kind, it.Item, it.TxHash, err)
			}
			rc, err := client.TransactionReceipt(ctx, common.HexToHash(it.TxHash))
			if err != nil {
				t.Fatal(err)
			}
			f := figs[it.Kind]
			if f == nil {
				f = &figures{gasMin: int(rc.GasUsed)}
				figs[it.Kind] = f
			}
			f.n++
			f.gasMin, f.gasMax = min(f.gasMin, int(rc.GasUsed)), max(f.gasMax, int(rc.GasUsed))
			fee := float64(rc.GasUsed) * float64(rc.EffectiveGasPrice.Uint64()) / 1e9
			f.gas += float64(rc.GasUsed)
			f.feeGwei += fee
			totalGas += float64(rc.GasUsed)
			totalFee += fee
		}
		if it.Status == arena.ChainTxFailed {
			t.Errorf("item %s/%s failed: %s", it.Kind, it.Item, it.Error)
		}
	}
	nonce, err := client.NonceAt(ctx, mustKey(t).Address(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce-3 != uint64(sent) || kinds["commit"] != nAgents || kinds["reveal"] != nReveal {
		t.Fatalf("relayer sent %d transactions for %d recorded items %v", nonce-3, sent, kinds)
	}
	t.Logf("mirrored with %d EIP-1559 transactions (relayer nonce %d less 3 deployments), %.0f gas, %.0f gwei in fees:", sent, nonce, totalGas, totalFee)
	for _, k := range []string{relay.KindRound, relay.KindCommit, relay.KindBenchmarks, relay.KindReveal, relay.KindPayout, relay.KindTrigger, relay.KindScore} {
		if f := figs[k]; f != nil {
			t.Logf("  %-10s %2d tx, gas %d–%d (mean %.0f), fees %.0f gwei (mean %.0f gwei/tx)", k, f.n, f.gasMin, f.gasMax, f.gas/float64(f.n), f.feeGwei, f.feeGwei/float64(f.n))
		}
	}
}

func mustKey(t *testing.T) *forecast.Key {
	t.Helper()
	k, err := forecast.ParseKey(anvilKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
