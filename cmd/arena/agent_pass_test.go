package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena/participant"
)

// A repeated agent run says what each pass sent and what it waits for,
// and nothing while that stays the same; a failed pass leaves it to its
// error.
func TestPassPrinter(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	reveal := participant.Wait{Round: 1, For: "the reveal window", At: t0.Add(5 * time.Minute)}
	var b strings.Builder
	p := passPrinter{w: &b, agent: "0xA", strategy: "market"}
	for i, c := range []struct {
		rep  participant.Report
		err  error
		want string
	}{
		{participant.Report{}, errors.New("down"), ""},
		{participant.Report{}, nil, "agent 0xA (market): committed 0, revealed 0, reasoning 0, abandoned 0\nno round is open for commits on the server: waiting for the next one\n"},
		{participant.Report{}, nil, ""},
		{participant.Report{Open: 1, Committed: 1, Next: reveal}, nil,
			"agent 0xA (market): committed 1, revealed 0, reasoning 0, abandoned 0\nround 1: waiting for the reveal window at 2026-01-05T00:05:00Z (in 4m30s)\n"},
		{participant.Report{Open: 1, Next: reveal}, nil, ""},
		{participant.Report{Open: 1, Next: reveal}, errors.New("timeout"), ""},
		{participant.Report{Open: 1, Next: reveal}, nil, "round 1: waiting for the reveal window at 2026-01-05T00:05:00Z (in 4m30s)\n"},
		{participant.Report{Revealed: 1}, nil, "agent 0xA (market): committed 0, revealed 1, reasoning 0, abandoned 0\n"},
	} {
		b.Reset()
		p.print(c.rep, c.err, t0.Add(30*time.Second))
		if b.String() != c.want {
			t.Errorf("pass %d printed %q, want %q", i, b.String(), c.want)
		}
	}
}

// An agent pointed at an address where nothing listens says so, and what
// to do, rather than "connection refused" alone.
func TestAgentUnreachable(t *testing.T) {
	t.Parallel()
	key := t.TempDir() + "/me.key"
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", key); err != nil {
		t.Fatal(err)
	}
	want := "no arena answers at http://127.0.0.1:1 (connection refused): is 'arena serve' running there? Start it, or give the address it serves on with --server"
	for _, args := range [][]string{
		{"agent", "run", "--server", "http://127.0.0.1:1", "--key", key},
		{"agent", "profile", "--server", "http://127.0.0.1:1", "--key", key, "--name", "x"},
	} {
		out, _, err := cli(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args[:2], err, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: the cause is lost: %v", args[:2], err)
		}
		if out != "" {
			t.Errorf("%s printed %q", args[:2], out)
		}
	}
}
