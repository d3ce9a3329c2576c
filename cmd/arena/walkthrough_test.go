package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOfflineServeWalkthrough follows the README's offline path as a new
// user would: sync the simulated world, serve it (a real process), name
// an agent and take part with the reference client, and see a round
// scored with Alpha and the agent's forecast on a question's page. The
// round's markets close days later in the simulated world, so, as the
// README says, the operator resolves them from the simulator once
// reveals have closed (arena round resolve --from-sim) and scores the
// round (arena round trigger).
func TestOfflineServeWalkthrough(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	out, _, err := cli(t, nil, "sync", "--source", "sim", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`\((\d+) open\)`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Fatalf("sync left no open market: %s", out)
	}

	const token = "walkthrough-admin-token-012345678"
	cmd := exec.Command(os.Args[0], "serve", "--db", db, "--addr", "127.0.0.1:0", "--no-sync",
		"--commit-in", "3s", "--reveal-delay", "1s", "--reveal-window", "3s", "--grace", "1s")
	cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1", "ARENA_ADMIN_TOKEN="+token)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	addr := make(chan string, 1)
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg=serving addr=(\S+)`)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}

	// The scheduler opens a round on the simulated markets at start.
	var round struct {
		ID             uint64    `json:"id"`
		RevealDeadline time.Time `json:"reveal_deadline"`
		Markets        []struct {
			MarketID int64 `json:"market_id"`
		} `json:"markets"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var rounds []json.RawMessage
		getJSON(t, base+"/api/v1/rounds?status=open", &rounds)
		if len(rounds) > 0 {
			if err := json.Unmarshal(rounds[0], &round); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no open round; serve log:\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(round.Markets) != 7 {
		t.Fatalf("round %d has %d markets", round.ID, len(round.Markets))
	}

	// An external agent commits, then reveals, as it would from cron.
	key := filepath.Join(dir, "me.key")
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", key); err != nil {
		t.Fatal(err)
	}
	if out, _, err := cli(t, nil, "agent", "profile", "--server", base, "--key", key, "--name", "My first agent"); err != nil || !strings.Contains(out, "My first agent") {
		t.Fatalf("agent profile: %v\n%s", err, out)
	}
	revealed := false
	for deadline := time.Now().Add(20 * time.Second); !revealed && time.Now().Before(deadline); {
		out, _, err := cli(t, nil, "agent", "run", "--server", base, "--key", key, "--strategy", "market")
		if err != nil {
			t.Fatal(err)
		}
		revealed = strings.Contains(out, "revealed 1")
		time.Sleep(500 * time.Millisecond)
	}
	if !revealed {
		t.Fatal("the agent never revealed")
	}

	// The operator resolves the round's markets once reveals have closed,
	// then triggers scoring.
	time.Sleep(time.Until(round.RevealDeadline) + 100*time.Millisecond)
	id := fmt.Sprint(round.ID)
	if out, _, err := cli(t, nil, "round", "resolve", id, "--from-sim", "--db", db); err != nil || !strings.Contains(out, "7 resolved now") {
		t.Fatalf("round resolve --from-sim: %v\n%s", err, out)
	}
	if out, _, err := cli(t, nil, "round", "trigger", id, "--db", db); err != nil || !strings.Contains(out, "(scored)") || !strings.Contains(out, "My first agent (0x") {
		t.Fatalf("round trigger: %v\n%s", err, out)
	}

	var scores []struct {
		Agent string   `json:"agent"`
		Alpha *float64 `json:"alpha"`
	}
	getJSON(t, fmt.Sprintf("%s/api/v1/rounds/%d/scores", base, round.ID), &scores)
	var sawAgent bool
	for _, s := range scores {
		if s.Alpha == nil {
			t.Errorf("agent %s: alpha is null (no benchmark from the simulated prices)", s.Agent)
		}
		sawAgent = sawAgent || strings.HasPrefix(s.Agent, "0x")
	}
	if !sawAgent {
		t.Fatalf("no external agent among the scores: %+v", scores)
	}
	// A question's page overlays the agent's revealed forecast, by name
	// (a voided market's forecasts are not scored, nor shown).
	shown := 0
	for _, m := range round.Markets {
		resp, err := http.Get(fmt.Sprintf("%s/markets/%d", base, m.MarketID))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /markets/%d: %d", m.MarketID, resp.StatusCode)
		}
		if strings.Contains(string(page), "My first agent, round #"+id) {
			shown++
		}
	}
	if shown == 0 {
		t.Fatalf("no question page of round %s shows the forecast of My first agent", id)
	}
	// What the tour wrote (database, log key, agent key and state) stays
	// out of a commit.
	checkIgnored(t, dir)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(getOK(t, url), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// getOK is the body of url's 200 answer.
func getOK(t *testing.T, url string) []byte {
	t.Helper()
	code, b := get(t, url)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, b)
	}
	return b
}

// get is the status and body of url's answer.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
