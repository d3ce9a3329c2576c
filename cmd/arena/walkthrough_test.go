package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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
// user would: sync the simulated world, serve it (a real process), take
// part with the reference agent, and see a round scored with Alpha. The
// round's markets close days later in the simulated world, so, as the
// README says, the operator resolves them by hand to score the round now.
func TestOfflineServeWalkthrough(t *testing.T) {
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
		"--round-every", "1h", "--commit-in", "3s", "--reveal-delay", "1s", "--reveal-window", "3s", "--grace", "1s")
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
	for i, m := range round.Markets {
		outcome := []string{"Yes", "no"}[i%2] // the market's own names, any case
		adminPost(t, fmt.Sprintf("%s/api/v1/admin/markets/%d/resolve", base, m.MarketID), token, `{"outcome":"`+outcome+`"}`)
	}
	adminPost(t, fmt.Sprintf("%s/api/v1/admin/rounds/%d/trigger", base, round.ID), token, `{}`)

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
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func adminPost(t *testing.T, url, token, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("POST %s: %d %v", url, resp.StatusCode, e)
	}
}
