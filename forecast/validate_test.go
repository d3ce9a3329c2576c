package forecast

import (
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
)

var (
	t0    = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) // commit deadline
	sched = Schedule{CommitDeadline: t0, RevealStart: t0.Add(time.Hour), RevealDeadline: t0.Add(3 * time.Hour)}
)

type fixture struct {
	agent  common.Address
	preds  []uint16
	salt   common.Hash
	round  RoundState
	commit Commit
	reveal Reveal
}

func newFixture() fixture {
	f := fixture{
		agent: common.HexToAddress("0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"),
		preds: []uint16{6500, 0, 10000},
		salt:  common.HexToHash("0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"),
		round: RoundState{ID: 9, K: 3, Schedule: sched},
	}
	f.commit = Commit{RoundID: 9, CommitHash: CommitHash(9, f.agent, f.preds, f.salt), Agent: f.agent, Nonce: 4}
	f.reveal = Reveal{RoundID: 9, Predictions: f.preds, Salt: f.salt, Agent: f.agent, Nonce: 5}
	return f
}

// deadline returns a signed deadline d after now.
func deadline(now time.Time, d time.Duration) uint64 { return uint64(now.Add(d).Unix()) }

func TestValidateCommit(t *testing.T) {
	f := newFixture()
	now := t0.Add(-10 * time.Minute)
	fresh := State{Round: &f.round, Nonce: 4}
	type tc struct {
		st   State
		edit func(*Commit)
		now  time.Time
		code string // "" = accepted
	}
	invalidated := f.round
	invalidated.Invalidated = true
	for name, c := range map[string]tc{
		"ok":                    {fresh, nil, now, ""},
		"ok at commit deadline": {fresh, nil, t0, ""},
		"ok deadline now":       {fresh, func(c *Commit) { c.Deadline = uint64(now.Unix()) }, now, ""},
		"ok deadline +24h":      {fresh, func(c *Commit) { c.Deadline = deadline(now, 24*time.Hour) }, now, ""},
		"unknown round":         {State{Nonce: 4}, nil, now, CodeRoundNotFound},
		"invalidated":           {State{Round: &invalidated, Nonce: 4}, nil, now, CodeRoundInvalidated},
		"expired deadline":      {fresh, func(c *Commit) { c.Deadline = deadline(now, -time.Second) }, now, CodeDeadlineExpired},
		"deadline 0":            {fresh, func(c *Commit) { c.Deadline = 0 }, now, CodeDeadlineExpired},
		"deadline too far":      {fresh, func(c *Commit) { c.Deadline = deadline(now, 24*time.Hour+time.Second) }, now, CodeDeadlineTooFar},
		"deadline max uint64":   {fresh, func(c *Commit) { c.Deadline = ^uint64(0) }, now, CodeDeadlineTooFar},
		"late commit":           {fresh, nil, t0.Add(time.Second), CodeCommitClosed},
		"late commit, 1ns":      {fresh, nil, t0.Add(time.Nanosecond), CodeCommitClosed},
		"second commit":         {State{Round: &f.round, Nonce: 5, Committed: true}, nil, now, CodeAlreadyCommitted},
		"stale nonce":           {fresh, func(c *Commit) { c.Nonce = 3 }, now, CodeNonceInvalid},
		"nonce ahead":           {fresh, func(c *Commit) { c.Nonce = 5 }, now, CodeNonceInvalid},
		"reused nonce":          {State{Round: &f.round, Nonce: 5}, nil, now, CodeNonceInvalid},
	} {
		msg := f.commit
		msg.Deadline = deadline(c.now, time.Hour)
		if c.edit != nil {
			c.edit(&msg)
		}
		err := ValidateCommit(c.st, msg, c.now)
		checkCode(t, name, err, c.code)
	}
}

func TestValidateReveal(t *testing.T) {
	f := newFixture()
	now := t0.Add(2 * time.Hour)
	committed := State{Round: &f.round, Nonce: 5, Committed: true, CommitHash: f.commit.CommitHash}
	invalidated := f.round
	invalidated.Invalidated = true
	triggered := f.round
	triggered.Triggered = true
	type tc struct {
		st   State
		edit func(*Reveal)
		now  time.Time
		code string
	}
	for name, c := range map[string]tc{
		"ok":                    {committed, nil, now, ""},
		"ok at reveal start":    {committed, nil, sched.RevealStart, ""},
		"ok at reveal end":      {committed, nil, sched.RevealDeadline, ""},
		"unknown round":         {State{Nonce: 5}, nil, now, CodeRoundNotFound},
		"invalidated":           {State{Round: &invalidated, Nonce: 5, Committed: true, CommitHash: f.commit.CommitHash}, nil, now, CodeRoundInvalidated},
		"expired deadline":      {committed, func(r *Reveal) { r.Deadline = deadline(now, -time.Minute) }, now, CodeDeadlineExpired},
		"deadline too far":      {committed, func(r *Reveal) { r.Deadline = deadline(now, 25*time.Hour) }, now, CodeDeadlineTooFar},
		"too few predictions":   {committed, func(r *Reveal) { r.Predictions = r.Predictions[:2] }, now, CodePredictionCount},
		"too many predictions":  {committed, func(r *Reveal) { r.Predictions = append([]uint16{1}, r.Predictions...) }, now, CodePredictionCount},
		"no predictions":        {committed, func(r *Reveal) { r.Predictions = nil }, now, CodePredictionCount},
		"value > 10000":         {committed, func(r *Reveal) { r.Predictions = []uint16{6500, 10001, 0} }, now, CodePredictionRange},
		"value 65535":           {committed, func(r *Reveal) { r.Predictions = []uint16{65535, 0, 0} }, now, CodePredictionRange},
		"early reveal":          {committed, nil, sched.RevealStart.Add(-time.Second), CodeRevealNotOpen},
		"reveal in the gap":     {committed, nil, t0.Add(time.Minute), CodeRevealNotOpen},
		"late reveal":           {committed, nil, sched.RevealDeadline.Add(time.Second), CodeRevealClosed},
		"reveal after trigger":  {State{Round: &triggered, Nonce: 5, Committed: true, CommitHash: f.commit.CommitHash}, nil, now, CodeRevealClosed},
		"reveal without commit": {State{Round: &f.round, Nonce: 5}, nil, now, CodeNotCommitted},
		"second reveal": {State{Round: &f.round, Nonce: 6, Committed: true, Revealed: true, CommitHash: f.commit.CommitHash},
			func(r *Reveal) { r.Nonce = 6 }, now, CodeAlreadyRevealed},
		"stale nonce (reused commit nonce)": {committed, func(r *Reveal) { r.Nonce = 4 }, now, CodeNonceInvalid},
		"nonce ahead":                       {committed, func(r *Reveal) { r.Nonce = 6 }, now, CodeNonceInvalid},
		"other predictions":                 {committed, func(r *Reveal) { r.Predictions = []uint16{6501, 0, 10000} }, now, CodeCommitMismatch},
		"other salt":                        {committed, func(r *Reveal) { r.Salt[31]++ }, now, CodeCommitMismatch},
		"compat-format commit": {State{Round: &f.round, Nonce: 5, Committed: true, CommitHash: CompatCommitHash(9, f.preds, f.salt)},
			nil, now, CodeCommitMismatch},
	} {
		msg := f.reveal
		msg.Predictions = append([]uint16(nil), f.preds...)
		msg.Deadline = deadline(c.now, time.Hour)
		if c.edit != nil {
			c.edit(&msg)
		}
		checkCode(t, name, ValidateReveal(c.st, msg, c.now), c.code)
	}
}

// TestCommitRevealAgent runs one agent's full protocol across the
// signature and state checks, threading the state the way the service will.
func TestCommitRevealAgent(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	d := Domain{ChainID: 31337, Contract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")}
	round := RoundState{ID: 3, K: 3, Schedule: sched}
	preds := []uint16{2500, 5000, 9900}
	salt, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	reasons := []string{"base rates", "coin flip", "already announced"}
	rh, err := ReasoningHash(reasons)
	if err != nil {
		t.Fatal(err)
	}
	st := State{Round: &round}

	now := t0.Add(-time.Minute)
	c := Commit{RoundID: 3, CommitHash: CommitHash(3, key.Address(), preds, salt), ReasoningHash: rh,
		Agent: key.Address(), Nonce: st.Nonce, Deadline: deadline(now, time.Hour)}
	sig, err := key.SignCommit(d, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.VerifyCommit(c, sig); err != nil {
		t.Fatal(err)
	}
	if err := ValidateCommit(st, c, now); err != nil {
		t.Fatal(err)
	}
	st.Committed, st.CommitHash, st.ReasoningHash, st.Nonce = true, c.CommitHash, c.ReasoningHash, st.Nonce+1

	// Replaying the accepted commit is refused.
	checkCode(t, "replayed commit", ValidateCommit(st, c, now), CodeAlreadyCommitted)
	// Reasoning before the reveal is refused.
	_, _, err = ValidateReasoning(st, []byte(`["base rates","coin flip","already announced"]`))
	checkCode(t, "early reasoning", err, CodeReasoningNotRevealed)

	now = sched.RevealStart.Add(time.Minute)
	r := Reveal{RoundID: 3, Predictions: preds, Salt: salt, Agent: key.Address(), Nonce: st.Nonce, Deadline: deadline(now, time.Hour)}
	rsig, err := key.SignReveal(d, r)
	if err != nil {
		t.Fatal(err)
	}
	// Another address cannot reveal this commit with a copied message.
	thief, _ := GenerateKey()
	stolen := r
	stolen.Agent = thief.Address()
	tsig, _ := thief.SignReveal(d, stolen)
	if err := d.VerifyReveal(stolen, tsig); err != nil {
		t.Fatal(err)
	}
	checkCode(t, "thief reveal", ValidateReveal(State{Round: &round, Committed: true, CommitHash: c.CommitHash, Nonce: 0}, Reveal{
		RoundID: 3, Predictions: preds, Salt: salt, Agent: thief.Address(), Nonce: 0, Deadline: stolen.Deadline}, now), CodeCommitMismatch)
	checkCode(t, "reveal signed by thief for agent", d.VerifyReveal(r, tsig), CodeSignerMismatch)

	if err := d.VerifyReveal(r, rsig); err != nil {
		t.Fatal(err)
	}
	if err := ValidateReveal(st, r, now); err != nil {
		t.Fatal(err)
	}
	st.Revealed, st.Nonce = true, st.Nonce+1
	checkCode(t, "replayed reveal", ValidateReveal(st, r, now), CodeAlreadyRevealed)

	// Reasoning: any JSON formatting of the same strings is accepted once.
	_, _, err = ValidateReasoning(st, []byte(`["base rates","coin flip","already announced!"]`))
	checkCode(t, "other reasoning", err, CodeReasoningMismatch)
	got, canon, err := ValidateReasoning(st, []byte("[\n  \"base rates\",\n  \"coin flip\",\n  \"already announced\"\n]"))
	if err != nil || len(got) != 3 || string(canon) != `["base rates","coin flip","already announced"]` {
		t.Fatalf("reasoning: %q %s %v", got, canon, err)
	}
	st.ReasoningStored = true
	_, _, err = ValidateReasoning(st, canon)
	checkCode(t, "second reasoning", err, CodeReasoningStored)
	st.ReasoningStored, st.ReasoningHash = false, common.Hash{}
	_, _, err = ValidateReasoning(st, canon)
	checkCode(t, "reasoning never committed", err, CodeReasoningNotCommitted)
	_, _, err = ValidateReasoning(State{}, canon)
	checkCode(t, "reasoning unknown round", err, CodeRoundNotFound)
}

func TestValidateWrongRoundStateIsInternal(t *testing.T) {
	f := newFixture()
	c := f.commit
	c.RoundID = 10
	c.Deadline = deadline(t0, -time.Minute+time.Hour)
	err := ValidateCommit(State{Round: &f.round, Nonce: 4}, c, t0.Add(-time.Minute))
	var ae *arena.Error
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("state for another round: err %v, want an internal (non-arena) error", err)
	}
}

// TestCodesTable checks every code is registered with a known kind and that
// codes are distinct.
func TestCodesTable(t *testing.T) {
	kinds := map[string]bool{arena.EINVALID: true, arena.ECONFLICT: true, arena.ENOTFOUND: true, arena.EUNAUTHORIZED: true, arena.ETOOLARGE: true, arena.ETOOMANY: true}
	for code, kind := range Codes {
		if !kinds[kind] {
			t.Errorf("code %s has kind %q", code, kind)
		}
		if e := Reject(code, "x"); e.Code != code || e.Kind != kind {
			t.Errorf("Reject(%s) = %+v", code, e)
		}
	}
	if len(Codes) != 45 {
		t.Errorf("%d codes registered; update this count and the table in errors.go together", len(Codes))
	}
}

func checkCode(t *testing.T, name string, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Errorf("%s: rejected: %v", name, err)
		}
		return
	}
	if got := arena.ErrorCode(err); got != code {
		t.Errorf("%s: err %v (code %s), want %s", name, err, got, code)
		return
	}
	if kind := arena.ErrorKind(err); kind != Codes[code] {
		t.Errorf("%s: kind %s, want %s", name, kind, Codes[code])
	}
}

func TestScheduleValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		s  Schedule
		ok bool
	}{
		"ok":                        {sched, true},
		"reveal starts at deadline": {Schedule{t0, t0.Add(time.Second), t0.Add(time.Second)}, true},
		"commit = reveal start":     {Schedule{t0, t0, t0.Add(time.Hour)}, false},
		"commit after reveal start": {Schedule{t0.Add(time.Minute), t0, t0.Add(time.Hour)}, false},
		"reveal ends before start":  {Schedule{t0, t0.Add(time.Hour), t0.Add(time.Minute)}, false},
		"zero":                      {Schedule{}, false},
	} {
		err := tc.s.Validate()
		if (err == nil) != tc.ok || (err != nil && arena.ErrorCode(err) != CodeScheduleInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
