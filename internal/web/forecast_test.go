package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// Tests of the forecast track's HTTP API against the real server on
// loopback and a real store (SQLite, and PostgreSQL when
// ARENA_TEST_POSTGRES_URL is set).

const adminToken = "test-admin-token-0123456789"

var quiet = slog.New(slog.DiscardHandler)

// env is one running server.
type env struct {
	t      testing.TB
	db     *store.DB
	svc    *rounds.Service
	url    string
	domain forecast.Domain
	now    func() time.Time
	srv    *web.Server
	// metrics are the server's, served at /metrics.
	metrics *metrics.Metrics
}

// startServer serves the forecast API of db on a loopback port until the
// test ends. now is the service's clock (nil: real time).
func startServer(t testing.TB, db *store.DB, now func() time.Time, domain forecast.Domain) *env {
	t.Helper()
	if now == nil {
		now = time.Now
	}
	svc := &rounds.Service{Store: db, Now: now, Domain: domain, Logger: quiet}
	m := metrics.New()
	srv := web.New(web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: quiet, Forecast: svc, Metrics: m})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, srv.Handler()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &env{t: t, db: db, svc: svc, url: "http://" + ln.Addr().String(), domain: domain, now: now, srv: srv, metrics: m}
}

var httpClient = &http.Client{Timeout: 20 * time.Second}

// call sends body (raw []byte, or anything else as JSON; nil for none)
// and returns the status and the answer.
func (e *env) call(method, path string, body any, token string) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// ok sends a request that must succeed with status want and decodes the
// answer into v (when non-nil).
func (e *env) ok(want int, method, path string, body any, token string, v any) {
	e.t.Helper()
	st, out := e.call(method, path, body, token)
	if st != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, st, want, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
	}
}

// apiError is the error envelope every rejection uses.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func errorOf(t testing.TB, body []byte) apiError {
	t.Helper()
	var e apiError
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not an error envelope {\"error\":{\"code\",\"message\"}}: %s (%v)", body, err)
	}
	return e
}

// seedMarkets stores n open binary markets, one per event and category,
// closing at closeAt, with Yes prices 0.30, 0.40, ….
func seedMarkets(t testing.TB, db *store.DB, n int, closeAt time.Time) []*arena.Market {
	t.Helper()
	cats := []string{"politics", "sports", "crypto", "science", "economics", "culture", "weather", "tech"}
	var ms []*arena.Market
	for i := 0; i < n; i++ {
		p := math.Round((0.30+0.05*float64(i))*100) / 100
		ms = append(ms, &arena.Market{
			Source: "test", SourceID: fmt.Sprintf("m%d", i), Kind: arena.KindMarket,
			Question: fmt.Sprintf("Will test event %d happen?", i), Category: cats[i%len(cats)],
			EventID: fmt.Sprintf("ev%d", i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
			Prices: map[string]float64{arena.Yes: p, arena.No: 1 - p}, Volume: float64(100000 - i),
			Liquidity: 5000, CloseTime: closeAt, Status: arena.StatusOpen,
		})
	}
	if _, err := db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func marketIDs(ms []*arena.Market) []int64 {
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// createRound creates a round over ms through the admin API.
func (e *env) createRound(ms []*arena.Market, cd, rs, rd time.Time) forecast.RoundJSON {
	e.t.Helper()
	var r forecast.RoundJSON
	e.ok(http.StatusCreated, "POST", "/api/v1/admin/rounds", map[string]any{
		"market_ids": marketIDs(ms), "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd,
	}, adminToken, &r)
	if r.ID == 0 || len(r.Markets) != len(ms) || r.Status != arena.RoundOpen {
		e.t.Fatalf("created round %+v", r)
	}
	return r
}

// newKey derives a test agent's key from its name.
func newKey(name string) *forecast.Key {
	for i := 0; ; i++ {
		k, err := crypto.ToECDSA(crypto.Keccak256([]byte("web test agent"), []byte(name), []byte{byte(i)}))
		if err == nil {
			return forecast.NewKey(k)
		}
	}
}

func saltOf(name string) common.Hash { return crypto.Keccak256Hash([]byte("salt"), []byte(name)) }

// deadline is a signature deadline ten minutes after the server's now.
func (e *env) deadline() uint64 { return uint64(e.now().Add(10 * time.Minute).Unix()) }

// commitReq signs a commit of preds under the server's domain.
func (e *env) commitReq(k *forecast.Key, round uint64, preds []uint16, salt common.Hash, reasoning common.Hash, nonce uint64) forecast.CommitRequest {
	e.t.Helper()
	return signCommit(e.t, e.domain, k, forecast.Commit{RoundID: round, CommitHash: forecast.CommitHash(round, k.Address(), preds, salt),
		ReasoningHash: reasoning, Agent: k.Address(), Nonce: nonce, Deadline: e.deadline()})
}

func signCommit(t testing.TB, d forecast.Domain, k *forecast.Key, c forecast.Commit) forecast.CommitRequest {
	t.Helper()
	sig, err := k.SignCommit(d, c)
	if err != nil {
		t.Fatal(err)
	}
	req := forecast.CommitRequest{Agent: c.Agent.Hex(), CommitHash: c.CommitHash.Hex(), Nonce: c.Nonce,
		Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}
	if c.ReasoningHash != (common.Hash{}) {
		req.ReasoningHash = c.ReasoningHash.Hex()
	}
	return req
}

func (e *env) revealReq(k *forecast.Key, round uint64, preds []uint16, salt common.Hash, nonce uint64) forecast.RevealRequest {
	e.t.Helper()
	return signReveal(e.t, e.domain, k, forecast.Reveal{RoundID: round, Predictions: preds, Salt: salt, Agent: k.Address(),
		Nonce: nonce, Deadline: e.deadline()})
}

func signReveal(t testing.TB, d forecast.Domain, k *forecast.Key, r forecast.Reveal) forecast.RevealRequest {
	t.Helper()
	sig, err := k.SignReveal(d, r)
	if err != nil {
		t.Fatal(err)
	}
	return forecast.RevealRequest{Agent: r.Agent.Hex(), Predictions: r.Predictions, Salt: r.Salt.Hex(), Nonce: r.Nonce,
		Deadline: r.Deadline, Signature: forecast.EncodeSignature(sig)}
}

func (e *env) commit(k *forecast.Key, round uint64, preds []uint16, salt common.Hash, reasoning common.Hash, nonce uint64) {
	e.t.Helper()
	var out forecast.SubmissionJSON
	e.ok(http.StatusCreated, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round), e.commitReq(k, round, preds, salt, reasoning, nonce), "", &out)
	if out.RoundID != round || out.Agent != k.Address().Hex() || out.Nonce != nonce {
		e.t.Fatalf("commit answer %+v", out)
	}
}

func (e *env) reveal(k *forecast.Key, round uint64, preds []uint16, salt common.Hash, nonce uint64) {
	e.t.Helper()
	var out forecast.SubmissionJSON
	e.ok(http.StatusCreated, "POST", fmt.Sprintf("/api/v1/rounds/%d/reveals", round), e.revealReq(k, round, preds, salt, nonce), "", &out)
	if out.RoundID != round || out.Agent != k.Address().Hex() || out.Nonce != nonce {
		e.t.Fatalf("reveal answer %+v", out)
	}
}

func (e *env) nonce(addr string) uint64 {
	e.t.Helper()
	var n forecast.NonceJSON
	e.ok(http.StatusOK, "GET", "/api/v1/agents/"+addr+"/nonce", nil, "", &n)
	return n.Nonce
}

// stored renders everything the store holds about an agent: its nonce, its
// registration and its submission rows in every round.
func (e *env) stored(addr common.Address) string {
	e.t.Helper()
	ctx := context.Background()
	n, err := e.db.Nonce(ctx, addr.Hex())
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nonce=%d", n)
	agents, err := e.db.Agents(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range agents {
		if a.Address == addr.Hex() {
			fmt.Fprintf(&b, " registered=%+v", a)
		}
	}
	all, err := e.db.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range all {
		subs, err := e.db.Submissions(ctx, r.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, s := range subs {
			if s.Agent == addr.Hex() {
				j, _ := json.Marshal(s)
				fmt.Fprintf(&b, " round%d=%s", r.ID, j)
			}
		}
	}
	return b.String()
}

func (e *env) submissions(round uint64) []*arena.Submission {
	e.t.Helper()
	subs, err := e.db.Submissions(context.Background(), round)
	if err != nil {
		e.t.Fatal(err)
	}
	return subs
}

// Rejections: one case per rule. Each case uses a fresh
// agent, runs its accepted setup steps, sends the offending request at its
// clock time and checks the stable code, a 4xx status, and that the store
// holds exactly what it held before (nonce unchanged, no new or changed
// submission row).
func TestRejections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 5, t0.Add(30*24*time.Hour))
		cd, rs, rd := t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)
		r1 := e.createRound(ms[:3], cd, rs, rd).ID
		r2 := e.createRound(ms[2:], cd, rs, rd).ID
		preds := []uint16{6500, 0, 10000}
		reasons := []string{"base rates", "", "already \"decided\"\n"}
		rhash, err := forecast.ReasoningHash(reasons)
		if err != nil {
			t.Fatal(err)
		}
		canon, _ := forecast.CanonicalReasoning(reasons)
		inWindow := rs.Sub(t0) + 10*time.Minute
		other := newKey("someone else")

		type send func(e *env, k *forecast.Key, salt common.Hash) (int, []byte)
		post := func(path string, body any) send {
			return func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) { return e.call("POST", path, body, "") }
		}
		commitWith := func(round uint64, edit func(e *env, k *forecast.Key, c *forecast.CommitRequest)) send {
			return func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				c := e.commitReq(k, r1, preds, salt, common.Hash{}, e.nonce(k.Address().Hex()))
				if edit != nil {
					edit(e, k, &c)
				}
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round), c, "")
			}
		}
		// resign signs a commit message with key k under domain d.
		resign := func(d forecast.Domain, k *forecast.Key, edit func(*forecast.Commit)) func(e *env, a *forecast.Key, c *forecast.CommitRequest) {
			return func(e *env, a *forecast.Key, c *forecast.CommitRequest) {
				m := forecast.Commit{RoundID: r1, CommitHash: common.HexToHash(c.CommitHash), Agent: a.Address(), Nonce: c.Nonce, Deadline: c.Deadline}
				if edit != nil {
					edit(&m)
				}
				signer := k
				if signer == nil {
					signer = a
				}
				*c = signCommit(e.t, d, signer, m)
				c.Agent = a.Address().Hex()
			}
		}
		revealWith := func(round uint64, edit func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal) send {
			return func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				m := forecast.Reveal{RoundID: r1, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: e.nonce(k.Address().Hex()), Deadline: e.deadline()}
				if edit != nil {
					m = edit(e, k, salt)
				}
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/reveals", round), signReveal(e.t, e.domain, k, m), "")
			}
		}
		sigEdit := func(f func(sig []byte) []byte) func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
			return func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
				sig, err := forecast.DecodeSignature(c.Signature)
				if err != nil {
					e.t.Fatal(err)
				}
				c.Signature = forecast.EncodeSignature(f(sig))
			}
		}
		// Setup steps, at their own times.
		commitR1 := func(e *env, k *forecast.Key, salt common.Hash) {
			clk.Set(t0)
			e.commit(k, r1, preds, salt, common.Hash{}, e.nonce(k.Address().Hex()))
		}
		commitR1Reasoned := func(e *env, k *forecast.Key, salt common.Hash) {
			clk.Set(t0)
			e.commit(k, r1, preds, salt, rhash, e.nonce(k.Address().Hex()))
		}
		revealR1 := func(e *env, k *forecast.Key, salt common.Hash) {
			clk.Set(t0.Add(inWindow))
			e.reveal(k, r1, preds, salt, e.nonce(k.Address().Hex()))
		}
		reasoning := func(round uint64, content string) send {
			return func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/reasoning", round),
					forecast.ReasoningRequest{Agent: k.Address().Hex(), Content: content}, "")
			}
		}
		huge := strings.Repeat("x", web.MaxBodyBytes)

		type tc struct {
			name   string
			setup  []func(e *env, k *forecast.Key, salt common.Hash)
			at     time.Duration // clock when sending, after t0
			send   send
			code   string
			status int
		}
		cases := []tc{
			// Signatures (F3).
			{name: "signature wrong length", send: commitWith(r1, sigEdit(func(s []byte) []byte { return s[:64] })), code: "signature_malformed", status: 400},
			{name: "signature not hex", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
				c.Signature = "0x" + strings.Repeat("zz", 65)
			}), code: "signature_malformed", status: 400},
			{name: "signature r = 0", send: commitWith(r1, sigEdit(func(s []byte) []byte { clear(s[:32]); return s })), code: "signature_invalid", status: 401},
			{name: "signature s = n (out of range)", send: commitWith(r1, sigEdit(func(s []byte) []byte { copy(s[32:64], secpN); return s })), code: "signature_invalid", status: 401},
			{name: "bad signature: message altered after signing", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
				c.CommitHash = forecast.CommitHash(r1, k.Address(), []uint16{1, 2, 3}, saltOf("x")).Hex()
			}), code: "signer_mismatch", status: 401},
			{name: "wrong signer", send: commitWith(r1, resign(forecast.Domain{}, other, nil)), code: "signer_mismatch", status: 401},
			{name: "signature replayed to another round", send: commitWith(r2, nil), code: "signer_mismatch", status: 401},
			{name: "high-s twin of a valid signature", send: commitWith(r1, sigEdit(func(s []byte) []byte { highS(s); return s })), code: "signature_high_s", status: 400},
			{name: "v = recovery id (0 or 1)", send: commitWith(r1, sigEdit(func(s []byte) []byte { s[64] -= 27; return s })), code: "signature_v_invalid", status: 400},
			{name: "v = the other recovery id (1 or 0)", send: commitWith(r1, sigEdit(func(s []byte) []byte { s[64] = 55 - s[64] - 27; return s })), code: "signature_v_invalid", status: 400},
			{name: "wrong chain id (signed for chain 1)", send: commitWith(r1, resign(forecast.Domain{ChainID: 1}, nil, nil)), code: "signer_mismatch", status: 401},
			{name: "wrong chain id (declared)", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
				id := uint64(137)
				c.ChainID = &id
			}), code: "domain_mismatch", status: 400},
			{name: "wrong verifying contract (signed)", send: commitWith(r1, resign(forecast.Domain{Contract: common.HexToAddress("0x1000000000000000000000000000000000000001")}, nil, nil)), code: "signer_mismatch", status: 401},
			{name: "wrong verifying contract (declared)", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) {
				a := common.HexToAddress("0x1000000000000000000000000000000000000001")
				c.VerifyingContract = &a
			}), code: "domain_mismatch", status: 400},
			// Deadlines and nonces.
			{name: "expired deadline", send: commitWith(r1, resign(forecast.Domain{}, nil, func(c *forecast.Commit) { c.Deadline = uint64(t0.Unix()) - 1 })),
				code: "deadline_expired", status: 400},
			{name: "deadline more than 24 h ahead", send: commitWith(r1, resign(forecast.Domain{}, nil, func(c *forecast.Commit) { c.Deadline = uint64(t0.Add(24*time.Hour).Unix()) + 1 })),
				code: "deadline_too_far", status: 400},
			{name: "nonce ahead", send: commitWith(r1, resign(forecast.Domain{}, nil, func(c *forecast.Commit) { c.Nonce = 1 })), code: "nonce_invalid", status: 409},
			{name: "stale nonce (reused in another round)", setup: []func(*env, *forecast.Key, common.Hash){commitR1},
				send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
					c := e.commitReq(k, r2, preds, salt, common.Hash{}, 0)
					return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r2), c, "")
				}, code: "nonce_invalid", status: 409},
			{name: "reused nonce on reveal", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: revealWith(r1, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
					return forecast.Reveal{RoundID: r1, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: 0, Deadline: e.deadline()}
				}), code: "nonce_invalid", status: 409},
			// Commit phase.
			{name: "second commit", setup: []func(*env, *forecast.Key, common.Hash){commitR1},
				send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
					c := e.commitReq(k, r1, []uint16{1, 2, 3}, salt, common.Hash{}, 1)
					return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r1), c, "")
				}, code: "already_committed", status: 409},
			{name: "late commit", at: cd.Sub(t0) + time.Second, send: commitWith(r1, nil), code: "commit_closed", status: 409},
			{name: "unknown round", send: commitWith(999, resign(forecast.Domain{}, nil, func(c *forecast.Commit) { c.RoundID = 999 })), code: "round_not_found", status: 404},
			{name: "round id not a number", send: post("/api/v1/rounds/first/commits", map[string]any{}), code: "round_not_found", status: 404},
			{name: "round id zero", send: post("/api/v1/rounds/0/commits", map[string]any{}), code: "round_not_found", status: 404},
			{name: "agent not an address", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) { c.Agent = "0x1234" }), code: "address_invalid", status: 400},
			{name: "commit hash not 32 bytes", send: commitWith(r1, func(e *env, k *forecast.Key, c *forecast.CommitRequest) { c.CommitHash = "0xabcd" }), code: "hash_invalid", status: 400},
			// Reveal phase.
			{name: "early reveal", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: cd.Sub(t0) + time.Minute,
				send: revealWith(r1, nil), code: "reveal_not_open", status: 409},
			{name: "late reveal", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: rd.Sub(t0) + time.Second,
				send: revealWith(r1, nil), code: "reveal_closed", status: 409},
			{name: "reveal without commit", at: inWindow, send: revealWith(r1, nil), code: "not_committed", status: 409},
			{name: "second reveal", setup: []func(*env, *forecast.Key, common.Hash){commitR1, revealR1}, at: inWindow,
				send: revealWith(r1, nil), code: "already_revealed", status: 409},
			{name: "wrong prediction count", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: revealWith(r1, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
					return forecast.Reveal{RoundID: r1, Predictions: preds[:2], Salt: salt, Agent: k.Address(), Nonce: 1, Deadline: e.deadline()}
				}), code: "prediction_count", status: 400},
			{name: "prediction above 10000", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: revealWith(r1, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
					return forecast.Reveal{RoundID: r1, Predictions: []uint16{6500, 0, 10001}, Salt: salt, Agent: k.Address(), Nonce: 1, Deadline: e.deadline()}
				}), code: "prediction_range", status: 400},
			{name: "predictions missing", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: post(fmt.Sprintf("/api/v1/rounds/%d/reveals", r1), map[string]any{"agent": "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
					"salt": saltOf("").Hex(), "nonce": 1, "deadline": 1, "signature": "0x"}), code: "prediction_count", status: 400},
			{name: "hash mismatch (other predictions)", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: revealWith(r1, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
					return forecast.Reveal{RoundID: r1, Predictions: []uint16{6500, 1, 10000}, Salt: salt, Agent: k.Address(), Nonce: 1, Deadline: e.deadline()}
				}), code: "commit_mismatch", status: 400},
			{name: "hash mismatch (other salt)", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: revealWith(r1, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
					return forecast.Reveal{RoundID: r1, Predictions: preds, Salt: saltOf("wrong"), Agent: k.Address(), Nonce: 1, Deadline: e.deadline()}
				}), code: "commit_mismatch", status: 400},
			{name: "reveal in unknown round", at: inWindow, send: revealWith(998, func(e *env, k *forecast.Key, salt common.Hash) forecast.Reveal {
				return forecast.Reveal{RoundID: 998, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: 0, Deadline: e.deadline()}
			}), code: "round_not_found", status: 404},
			{name: "salt not 32 bytes", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: post(fmt.Sprintf("/api/v1/rounds/%d/reveals", r1), map[string]any{"agent": "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
					"predictions": preds, "salt": "0x01", "nonce": 1, "deadline": 1, "signature": "0x"}), code: "hash_invalid", status: 400},
			// Bodies: size limit and malformed JSON.
			{name: "oversized body", send: post(fmt.Sprintf("/api/v1/rounds/%d/commits", r1), []byte(`{"agent":"`+huge+`"}`)), code: "body_too_large", status: 413},
			{name: "malformed JSON", send: post(fmt.Sprintf("/api/v1/rounds/%d/commits", r1), []byte(`{"agent":`)), code: "malformed_json", status: 400},
			{name: "not a JSON object", send: post(fmt.Sprintf("/api/v1/rounds/%d/commits", r1), []byte(`[1,2]`)), code: "malformed_json", status: 400},
			{name: "unknown field", send: post(fmt.Sprintf("/api/v1/rounds/%d/commits", r1), []byte(`{"agent":"0x00","predictions":[1]}`)), code: "malformed_json", status: 400},
			{name: "trailing data", send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				b, _ := json.Marshal(e.commitReq(k, r1, preds, salt, common.Hash{}, 0))
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r1), append(b, []byte(`{}`)...), "")
			}, code: "malformed_json", status: 400},
			{name: "stray closing brace", send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				b, _ := json.Marshal(e.commitReq(k, r1, preds, salt, common.Hash{}, 0))
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r1), append(b, []byte(`}`)...), "")
			}, code: "malformed_json", status: 400},
			{name: "stray closing bracket", send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
				b, _ := json.Marshal(e.commitReq(k, r1, preds, salt, common.Hash{}, 0))
				return e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r1), append(b, []byte(" \n]")...), "")
			}, code: "malformed_json", status: 400},
			{name: "nonce as a string", send: post(fmt.Sprintf("/api/v1/rounds/%d/commits", r1), []byte(`{"nonce":"0"}`)), code: "malformed_json", status: 400},
			{name: "prediction beyond uint16", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: post(fmt.Sprintf("/api/v1/rounds/%d/reveals", r1), []byte(`{"predictions":[6500,0,70000]}`)), code: "malformed_json", status: 400},
			{name: "negative prediction", setup: []func(*env, *forecast.Key, common.Hash){commitR1}, at: inWindow,
				send: post(fmt.Sprintf("/api/v1/rounds/%d/reveals", r1), []byte(`{"predictions":[-1,0,0]}`)), code: "malformed_json", status: 400},
			// Reasoning (F4).
			{name: "reasoning before reveal", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned}, at: inWindow,
				send: reasoning(r1, string(canon)), code: "reasoning_not_revealed", status: 409},
			{name: "reasoning without committed hash", setup: []func(*env, *forecast.Key, common.Hash){commitR1, revealR1}, at: inWindow,
				send: reasoning(r1, string(canon)), code: "reasoning_not_committed", status: 409},
			{name: "reasoning mismatch", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned, revealR1}, at: inWindow,
				send: reasoning(r1, `["base rates","","already decided"]`), code: "reasoning_mismatch", status: 400},
			{name: "reasoning wrong count", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned, revealR1}, at: inWindow,
				send: reasoning(r1, `["base rates",""]`), code: "reasoning_malformed", status: 400},
			{name: "reasoning not an array", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned, revealR1}, at: inWindow,
				send: reasoning(r1, `{"0":"base rates"}`), code: "reasoning_malformed", status: 400},
			{name: "reasoning over 64 KiB", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned, revealR1}, at: inWindow,
				send: func(e *env, k *forecast.Key, salt common.Hash) (int, []byte) {
					long, _ := forecast.CanonicalReasoning([]string{strings.Repeat("a", 30000), strings.Repeat("b", 30000), strings.Repeat("c", 6000)})
					return reasoning(r1, string(long))(e, k, salt)
				}, code: "reasoning_too_large", status: 413},
			{name: "reasoning twice", setup: []func(*env, *forecast.Key, common.Hash){commitR1Reasoned, revealR1,
				func(e *env, k *forecast.Key, salt common.Hash) {
					var out map[string]any
					e.ok(http.StatusCreated, "POST", fmt.Sprintf("/api/v1/rounds/%d/reasoning", r1),
						forecast.ReasoningRequest{Agent: strings.ToLower(k.Address().Hex()), Content: string(canon)}, "", &out)
					if out["agent"] != k.Address().Hex() {
						e.t.Fatalf("reasoning answer names %v, want the checksummed %s", out["agent"], k.Address().Hex())
					}
				}}, at: inWindow,
				send: reasoning(r1, string(canon)), code: "reasoning_already_stored", status: 409},
			{name: "reasoning in unknown round", at: inWindow, send: reasoning(997, string(canon)), code: "round_not_found", status: 404},
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := *e
				e.t = t
				k := newKey(fmt.Sprintf("rejection agent %d", i))
				salt := saltOf(c.name)
				for _, s := range c.setup {
					s(&e, k, salt)
				}
				clk.Set(t0.Add(c.at))
				before, nonceBefore := e.stored(k.Address()), e.nonce(k.Address().Hex())
				otherBefore := e.stored(other.Address())
				st, body := c.send(&e, k, salt)
				if st < 400 || st > 499 || st != c.status {
					t.Errorf("status %d, want %d: %s", st, c.status, body)
				}
				if got := errorOf(t, body).Error.Code; got != c.code {
					t.Errorf("code %q, want %q: %s", got, c.code, body)
				}
				if after := e.stored(k.Address()); after != before {
					t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
				}
				if n := e.nonce(k.Address().Hex()); n != nonceBefore {
					t.Errorf("nonce %d after the rejection, was %d", n, nonceBefore)
				}
				if after := e.stored(other.Address()); after != otherBefore {
					t.Errorf("the other signer's record changed: %s", after)
				}
			})
		}
		// Every protocol rejection code the table covers is a registered one.
		for _, c := range cases {
			if _, ok := forecast.Codes[c.code]; !ok && !strings.Contains("body_too_large malformed_json address_invalid hash_invalid", c.code) {
				t.Errorf("case %q expects unregistered code %q", c.name, c.code)
			}
		}
	})
}

// secpN is the secp256k1 group order, for tampering with signatures.
var secpN = common.FromHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")

// highS replaces s by n − s and flips v: the malleable twin, which
// recovers the same signer but must be refused.
func highS(sig []byte) {
	var borrow int
	s := sig[32:64]
	out := make([]byte, 32)
	for i := 31; i >= 0; i-- {
		d := int(secpN[i]) - int(s[i]) - borrow
		borrow = 0
		if d < 0 {
			d += 256
			borrow = 1
		}
		out[i] = byte(d)
	}
	copy(s, out)
	sig[64] = 55 - sig[64] // 27 ↔ 28
}

// hand is a round score computed here from the round-scoring definitions (Brier, Alpha over the frozen set),
// independently of package forecast and package stats.
type hand struct {
	brier, alpha         float64
	brierBps2, alphaBps2 int64
	scored, benchmarked  int
}

// byHand scores predictions p (bps; nil = forfeit) against outcomes x (1,
// 0, or -1 for void/unresolved) and benchmarks b (bps; -1 = none).
func byHand(p []int64, b []int64, x []int) hand {
	var h hand
	var sumF, sumAF float64
	var sumI, sumAI int64
	for i := range x {
		if x[i] < 0 {
			continue
		}
		pi := int64(10000 * (1 - x[i])) // a forfeit is the opposite of the outcome
		if p != nil {
			pi = p[i]
		}
		xi := int64(10000 * x[i])
		pf, xf := float64(pi)/10000, float64(x[i])
		h.scored++
		sumF += (pf - xf) * (pf - xf)
		sumI += (pi - xi) * (pi - xi)
		if b[i] >= 0 {
			h.benchmarked++
			bf := float64(b[i]) / 10000
			sumAF += (bf-xf)*(bf-xf) - (pf-xf)*(pf-xf)
			sumAI += (b[i]-xi)*(b[i]-xi) - (pi-xi)*(pi-xi)
		}
	}
	h.brier, h.brierBps2 = sumF/float64(h.scored), sumI/int64(h.scored)
	if h.benchmarked > 0 {
		h.alpha, h.alphaBps2 = sumAF/float64(h.benchmarked), sumAI/int64(h.benchmarked) // Go truncates toward zero, as Solidity
	}
	return h
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func waitUntil(t time.Time) { time.Sleep(time.Until(t) + 30*time.Millisecond) }

// TestEndToEndRealTime drives several agents through a whole round over
// HTTP on the real clock: a round created by the admin API with deadlines
// seconds away, signed commits, benchmark capture, reveals in the window,
// reasoning, resolution, trigger, and scores checked against values
// computed by hand.
func TestEndToEndRealTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		e := startServer(t, db, nil, forecast.Domain{ChainID: 31337, Contract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")})
		var dom forecast.DomainJSON
		e.ok(200, "GET", "/api/v1/domain", nil, "", &dom)
		if dom.ChainID != 31337 || dom.VerifyingContract != "0x5FbDB2315678afecb367f032d93F642f64180aa3" || dom.Name != "ForecastArena" || dom.Version != "1" {
			t.Fatalf("domain %+v", dom)
		}
		ms := seedMarkets(t, db, 4, time.Now().Add(30*24*time.Hour))
		start := time.Now()
		cd := start.Add(2 * time.Second)
		rs, rd := cd.Add(time.Second), cd.Add(2500*time.Millisecond)
		round := e.createRound(ms, cd, rs, rd)
		id := round.ID
		for i, m := range round.Markets {
			if m.Price == nil || *m.Price != ms[i].Prices[arena.Yes] || m.MarketID != ms[i].ID || m.Index != i || m.Question != ms[i].Question {
				t.Fatalf("market %d listed as %+v", i, m)
			}
		}
		type agent struct {
			name      string
			key       *forecast.Key
			preds     []int64
			reasons   []string
			forfeit   bool
			reasoning common.Hash
		}
		agents := []*agent{
			{name: "alice", preds: []int64{7000, 2000, 5000, 9000}},
			{name: "bob", preds: []int64{5000, 5000, 5000, 5000}},
			{name: "carol", preds: []int64{9000, 1000, 100, 6000}, reasons: []string{"polls lead", "no catalyst", "coin flip", "momentum ü"}},
			{name: "dave", preds: []int64{8000, 8000, 8000, 8000}, forfeit: true},
		}
		bps := func(p []int64) []uint16 {
			out := make([]uint16, len(p))
			for i, v := range p {
				out[i] = uint16(v)
			}
			return out
		}
		var wg sync.WaitGroup
		for _, a := range agents {
			a.key = newKey("e2e " + a.name)
			if err := db.SetAgent(ctx, arena.AgentInfo{Address: a.key.Address().Hex(), Name: a.name, Kind: "external"}); err != nil {
				t.Fatal(err)
			}
			if a.reasons != nil {
				var err error
				if a.reasoning, err = forecast.ReasoningHash(a.reasons); err != nil {
					t.Fatal(err)
				}
			}
			wg.Add(1)
			go func() { // agents commit concurrently
				defer wg.Done()
				e.commit(a.key, id, bps(a.preds), saltOf(a.name), a.reasoning, e.nonce(a.key.Address().Hex()))
			}()
		}
		wg.Wait()
		if time.Now().After(cd) {
			t.Fatalf("commits took %s: the machine is too slow for a %s commit phase", time.Since(start), cd.Sub(start))
		}

		// Commit phase over: commits are refused, prices hidden.
		waitUntil(cd)
		late := newKey("e2e late")
		st, body := e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", id), e.commitReq(late, id, []uint16{1, 2, 3, 4}, saltOf("late"), common.Hash{}, 0), "")
		if st != 409 || errorOf(t, body).Error.Code != "commit_closed" {
			t.Fatalf("late commit: %d %s", st, body)
		}
		var rj forecast.RoundJSON
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d", id), nil, "", &rj)
		if rj.Status != arena.RoundRevealing || rj.Benchmarks != nil || rj.Outcomes != nil {
			t.Fatalf("after the commit deadline: %+v", rj)
		}
		for _, m := range rj.Markets {
			if m.Price != nil {
				t.Fatalf("price still shown after the commit deadline: %+v", m)
			}
		}

		// Benchmarks (F5): CLOB mids around the commit deadline. Market 0
		// has points 40 s before and 20 s after (the later one is nearer)
		// and a Gamma quote exactly at the deadline, which never counts;
		// market 1 one point 100 s before and one outside the ±300 s
		// window; market 2 one at the deadline; market 3 only a point
		// 301 s before: no benchmark.
		pt := func(d time.Duration, p float64, src arena.PriceSource) arena.PricePoint {
			return arena.PricePoint{Outcome: arena.Yes, Time: cd.Add(d), Price: p, Source: src}
		}
		ms[0].History = []arena.PricePoint{pt(-40*time.Second, 0.60, arena.PriceCLOBMid), pt(20*time.Second, 0.62, arena.PriceCLOBMid), pt(0, 0.99, arena.PriceGamma)}
		ms[1].History = []arena.PricePoint{pt(-100*time.Second, 0.35, arena.PriceCLOBMid), pt(400*time.Second, 0.90, arena.PriceCLOBMid)}
		ms[2].History = []arena.PricePoint{pt(0, 0.5, arena.PriceCLOBMid)}
		ms[3].History = []arena.PricePoint{pt(-301*time.Second, 0.4, arena.PriceCLOBMid)}
		if _, err := db.SaveMarkets(ctx, ms); err != nil {
			t.Fatal(err)
		}
		// The capture job waits until the tolerance window after the
		// deadline has passed, so that later points are in; it runs here
		// on a clock that far ahead instead of waiting five minutes.
		capture := &rounds.Service{Store: e.svc.Store, Logger: e.svc.Logger, Now: func() time.Time { return time.Now().Add(forecast.BenchmarkTolerance) }}
		if n, err := e.svc.CaptureBenchmarks(ctx); err != nil || n != 0 {
			t.Fatalf("capture before the window closed: %d rounds, %v", n, err)
		}
		if n, err := capture.CaptureBenchmarks(ctx); err != nil || n != 1 {
			t.Fatalf("capture: %d rounds, %v", n, err)
		}
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d", id), nil, "", &rj)
		bench := []int64{6200, 3500, 5000, -1}
		if len(rj.Benchmarks) != 4 || rj.Benchmarks[3] != nil {
			t.Fatalf("benchmarks %v", rj.Benchmarks)
		}
		for i := 0; i < 3; i++ {
			if rj.Benchmarks[i] == nil || *rj.Benchmarks[i]*10000 != float64(bench[i]) {
				t.Fatalf("benchmark %d: %v, want %d bps", i, rj.Benchmarks[i], bench[i])
			}
		}

		// Reveal window: everyone but dave reveals; carol uploads her
		// reasoning, which stays unpublished until the trigger.
		waitUntil(rs)
		for _, a := range agents {
			if a.forfeit {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.reveal(a.key, id, bps(a.preds), saltOf(a.name), e.nonce(a.key.Address().Hex()))
			}()
		}
		wg.Wait()
		carol := agents[2]
		content := `[ "polls lead", "no catalyst",
			"coin flip", "momentum \u00fc" ]` // any JSON layout; the hash is over the canonical form
		var up map[string]any
		e.ok(201, "POST", fmt.Sprintf("/api/v1/rounds/%d/reasoning", id), forecast.ReasoningRequest{Agent: carol.key.Address().Hex(), Content: content}, "", &up)
		st, body = e.call("GET", fmt.Sprintf("/api/v1/rounds/%d/reasoning/%s", id, carol.key.Address().Hex()), nil, "")
		if st != 404 || errorOf(t, body).Error.Code != "reasoning_unpublished" {
			t.Fatalf("reasoning before the trigger: %d %s", st, body)
		}
		var scores []forecast.ScoreJSON
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d/scores", id), nil, "", &scores)
		if len(scores) != 0 {
			t.Fatalf("scores before the trigger: %+v", scores)
		}

		// An outcome is not published while agents can still reveal.
		st, body = e.call("POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[0].ID), map[string]string{"outcome": "YES"}, adminToken)
		if st != 409 || errorOf(t, body).Error.Code != forecast.CodeMarketInOpenRound {
			t.Fatalf("resolve before the reveal deadline: %d %s", st, body)
		}
		waitUntil(rd)
		// Resolution: YES, NO, VOID, YES.
		outcomes := []int{1, 0, -1, 1}
		for i, o := range []string{"YES", "NO", "VOID", "YES"} {
			var mj arena.MarketJSON
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[i].ID), map[string]string{"outcome": o}, adminToken, &mj)
			if mj.Status != arena.StatusResolved {
				t.Fatalf("resolve %d: %+v", i, mj)
			}
		}
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d", id), nil, "", &rj)
		if rj.Status != arena.RoundScoring {
			t.Fatalf("after the reveal deadline: status %s", rj.Status)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", id), nil, adminToken, &scores)

		// Scores, by hand.
		want := map[string]hand{}
		names := map[string]string{}
		for _, a := range agents {
			p := a.preds
			if a.forfeit {
				p = nil
			}
			want[a.key.Address().Hex()], names[a.key.Address().Hex()] = byHand(p, bench, outcomes), a.name
		}
		rnd := scoring.RandomPredictions(id, rj.CommitDeadline, 4) // public and recomputable
		rp := make([]int64, 4)
		for i, v := range rnd {
			rp[i] = int64(v)
		}
		want["random"], names["random"] = byHand(rp, bench, outcomes), "random"
		mk := byHand([]int64{6200, 3500, 5000, 0}, bench, []int{1, 0, -1, -1}) // the market echoes b on the benchmarked set
		want["market"], names["market"] = mk, "market"
		// Two figures written out: alice's Brier over {0,1,3} and alpha over {0,1}.
		if a := want[agents[0].key.Address().Hex()]; a.brierBps2 != 4666666 || a.alphaBps2 != 6845000 || !near(a.alpha, 0.06845) {
			t.Fatalf("hand computation off: %+v", a)
		}
		if d := want[agents[3].key.Address().Hex()]; d.brierBps2 != 100000000 || d.alphaBps2 != -86655000 || !near(d.alpha, 0.13345-1) {
			t.Fatalf("forfeit computation off: %+v", d)
		}
		if len(scores) != len(want) {
			t.Fatalf("%d scores, want %d: %+v", len(scores), len(want), scores)
		}
		for _, s := range scores {
			w, ok := want[s.Agent]
			if !ok {
				t.Fatalf("unexpected agent %q in scores", s.Agent)
			}
			if !near(s.Brier, w.brier) || s.BrierBps2 != w.brierBps2 || s.Alpha == nil || !near(*s.Alpha, w.alpha) ||
				s.AlphaBps2 == nil || *s.AlphaBps2 != w.alphaBps2 || s.ScoredMarkets != w.scored || s.Forfeit != (names[s.Agent] == "dave") {
				t.Errorf("%s: got %+v (alpha %v, alpha_bps2 %v), want %+v", names[s.Agent], s, deref(s.Alpha), derefI(s.AlphaBps2), w)
			}
			if names[s.Agent] == "market" && (*s.Alpha != 0 || *s.AlphaBps2 != 0) {
				t.Errorf("market alpha must be exactly 0: %+v", s)
			}
		}

		for _, s := range scores {
			t.Logf("%-7s brier %.6f (%d bps²) alpha %+.6f (%d bps²) forfeit %v", names[s.Agent], s.Brier, s.BrierBps2, *s.Alpha, *s.AlphaBps2, s.Forfeit)
		}
		// Published after the trigger: outcomes, reasoning, leaderboard.
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d", id), nil, "", &rj)
		if rj.Status != arena.RoundScored || len(rj.Outcomes) != 4 || *rj.Outcomes[0] != "YES" || *rj.Outcomes[1] != "NO" || *rj.Outcomes[2] != "VOID" || *rj.Outcomes[3] != "YES" {
			t.Fatalf("scored round: %+v", rj)
		}
		var rsn struct {
			RoundID   uint64   `json:"round_id"`
			Agent     string   `json:"agent"`
			Reasoning []string `json:"reasoning"`
		}
		e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d/reasoning/%s", id, strings.ToLower(carol.key.Address().Hex())), nil, "", &rsn)
		if rsn.Agent != carol.key.Address().Hex() || strings.Join(rsn.Reasoning, "|") != strings.Join(carol.reasons, "|") {
			t.Fatalf("published reasoning %+v", rsn)
		}
		st, body = e.call("GET", fmt.Sprintf("/api/v1/rounds/%d/reasoning/%s", id, agents[0].key.Address().Hex()), nil, "")
		if st != 404 || errorOf(t, body).Error.Code != "reasoning_not_found" {
			t.Fatalf("reasoning of an agent without any: %d %s", st, body)
		}
		var lbBoard web.BoardJSON
		e.ok(200, "GET", "/api/v1/leaderboard?track=forecast", nil, "", &lbBoard)
		lb := lbBoard.Rows
		if len(lb) != len(want) {
			t.Fatalf("leaderboard has %d rows, want %d: %+v", len(lb), len(want), lb)
		}
		for _, row := range lb {
			w := want[row.Agent]
			if row.Rounds != 1 || row.N != w.scored && row.Agent != "market" || !near(row.Brier, w.brier) || row.Alpha == nil || !near(*row.Alpha, w.alpha) || !row.Provisional {
				t.Errorf("leaderboard row %+v (alpha %v), want %+v", row, deref(row.Alpha), w)
			}
			if names[row.Agent] != "random" && names[row.Agent] != "market" && row.Name != names[row.Agent] {
				t.Errorf("leaderboard name %q for %s, want %q", row.Name, row.Agent, names[row.Agent])
			}
		}
		var listed []forecast.RoundJSON
		e.ok(200, "GET", "/api/v1/rounds?status=scored", nil, "", &listed)
		if len(listed) != 1 || listed[0].ID != id {
			t.Fatalf("scored rounds %+v", listed)
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefI(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRoundPhases follows one round's public view through its phases on a
// controlled clock, and the admin endpoints' refusals.
func TestRoundPhases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(10*24*time.Hour))
		cd, rs, rd := t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), t0.Add(3*time.Hour)
		countRounds := func() int {
			rs, err := db.Rounds(ctx, arena.RoundFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}

		// Admin refusals store nothing.
		create := map[string]any{"market_ids": marketIDs(ms), "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd}
		for _, c := range []struct {
			name, token string
			body        any
			status      int
			code        string
		}{
			{"no token", "", create, 401, "unauthorized"},
			{"wrong token", adminToken + "x", create, 401, "unauthorized"},
			{"token prefix", adminToken[:5], create, 401, "unauthorized"},
			{"reveal before commit deadline", adminToken, map[string]any{"market_ids": marketIDs(ms), "commit_deadline": cd, "reveal_start": cd.Add(-time.Second), "reveal_deadline": rd}, 400, "schedule_invalid"},
			{"reveal start equals commit deadline", adminToken, map[string]any{"market_ids": marketIDs(ms), "commit_deadline": cd, "reveal_start": cd, "reveal_deadline": rd}, 400, "schedule_invalid"},
			{"commit deadline passed", adminToken, map[string]any{"market_ids": marketIDs(ms), "commit_deadline": t0.Add(-time.Second), "reveal_start": rs, "reveal_deadline": rd}, 400, "schedule_invalid"},
			{"missing deadlines", adminToken, map[string]any{"market_ids": marketIDs(ms)}, 400, "schedule_invalid"},
			{"market closes before the reveal deadline (F1)", adminToken, map[string]any{"market_ids": marketIDs(ms), "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": t0.Add(11 * 24 * time.Hour)}, 400, "round_markets_invalid"},
			{"duplicate market", adminToken, map[string]any{"market_ids": []int64{ms[0].ID, ms[0].ID}, "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd}, 400, "round_markets_invalid"},
			{"unknown market", adminToken, map[string]any{"market_ids": []int64{ms[0].ID, 424242}, "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd}, 404, "not_found"},
			{"unknown field", adminToken, map[string]any{"markets": marketIDs(ms), "commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd}, 400, "malformed_json"},
			{"no eligible markets for the rules", adminToken, map[string]any{"commit_deadline": cd, "reveal_start": rs, "reveal_deadline": rd}, 400, "not_enough_markets"},
		} {
			st, body := e.call("POST", "/api/v1/admin/rounds", c.body, c.token)
			if st != c.status || errorOf(t, body).Error.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, st, body, c.status, c.code)
			}
			if n := countRounds(); n != 0 {
				t.Fatalf("%s: %d rounds stored", c.name, n)
			}
		}
		// A server without a token has no admin API at all.
		bare := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: e.svc})
		rec := httptestDo(bare.Handler(), "POST", "/api/v1/admin/rounds", create, "anything")
		if rec.status != 403 || errorOf(t, rec.body).Error.Code != "admin_disabled" {
			t.Errorf("admin without a configured token: %d %s", rec.status, rec.body)
		}

		r := e.createRound(ms, cd, rs, rd)
		list := func(status string) []uint64 {
			var out []forecast.RoundJSON
			e.ok(200, "GET", "/api/v1/rounds?status="+status, nil, "", &out)
			var ids []uint64
			for _, x := range out {
				ids = append(ids, x.ID)
			}
			return ids
		}
		view := func() forecast.RoundJSON {
			var v forecast.RoundJSON
			e.ok(200, "GET", fmt.Sprintf("/api/v1/rounds/%d", r.ID), nil, "", &v)
			return v
		}
		expectStatus := func(want string) forecast.RoundJSON {
			t.Helper()
			v := view()
			if v.Status != want {
				t.Fatalf("at %s: status %s, want %s", clk.Now(), v.Status, want)
			}
			for _, s := range []string{"open", "revealing", "scoring", "scored"} {
				ids := list(s)
				if (s == want) != (len(ids) == 1 && ids[0] == r.ID) {
					t.Fatalf("at %s: ?status=%s lists %v", clk.Now(), s, ids)
				}
			}
			return v
		}
		// Open: latest prices shown; no benchmarks or outcomes.
		v := expectStatus("open")
		if !v.CommitDeadline.Equal(cd) || !v.RevealStart.Equal(rs) || !v.RevealDeadline.Equal(rd) || v.Benchmarks != nil || v.Outcomes != nil {
			t.Fatalf("open round: %+v", v)
		}
		for i, m := range v.Markets {
			if m.Price == nil || m.Category != ms[i].Category || !m.CloseTime.Equal(ms[i].CloseTime) {
				t.Fatalf("open round market %+v", m)
			}
		}
		st, body := e.call("POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken)
		if st != 409 || errorOf(t, body).Error.Code != "trigger_not_allowed" {
			t.Fatalf("trigger of an open round: %d %s", st, body)
		}
		k := newKey("phases")
		e.commit(k, r.ID, []uint16{100, 200, 300}, saltOf("phases"), common.Hash{}, 0)

		// Revealing: prices hidden; benchmarks once captured.
		clk.Set(cd.Add(time.Second))
		v = expectStatus("revealing")
		if v.Markets[0].Price != nil || v.Benchmarks != nil {
			t.Fatalf("revealing round before capture: %+v", v)
		}
		ms[0].History = []arena.PricePoint{{Outcome: arena.Yes, Time: cd.Add(-time.Minute), Price: 0.41, Source: arena.PriceCLOBMid}}
		if _, err := db.SaveMarkets(ctx, ms[:1]); err != nil {
			t.Fatal(err)
		}
		clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if n, err := e.svc.CaptureBenchmarks(ctx); err != nil || n != 1 {
			t.Fatalf("capture: %d, %v", n, err)
		}
		if n, err := e.svc.CaptureBenchmarks(ctx); err != nil || n != 0 {
			t.Fatalf("second capture: %d, %v (benchmarks are recorded once)", n, err)
		}
		v = expectStatus("revealing")
		if len(v.Benchmarks) != 3 || v.Benchmarks[0] == nil || *v.Benchmarks[0] != 0.41 || v.Benchmarks[1] != nil || v.Benchmarks[2] != nil {
			t.Fatalf("benchmarks %v", v.Benchmarks)
		}
		e.reveal(k, r.ID, []uint16{100, 200, 300}, saltOf("phases"), 1)

		// Scoring: trigger needs a resolved market.
		clk.Set(rd.Add(time.Second))
		expectStatus("scoring")
		st, body = e.call("POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken)
		if st != 409 || errorOf(t, body).Error.Code != "no_resolved_markets" {
			t.Fatalf("trigger with nothing resolved: %d %s", st, body)
		}
		for _, c := range []struct {
			path, outcome string
			status        int
			code          string
		}{
			{fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[1].ID), "MAYBE", 400, "invalid"},
			{fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[1].ID), "", 400, "invalid"},
			{"/api/v1/admin/markets/999999/resolve", "YES", 404, "not_found"},
			{"/api/v1/admin/markets/x/resolve", "YES", 400, "invalid"},
		} {
			st, body := e.call("POST", c.path, map[string]string{"outcome": c.outcome}, adminToken)
			if st != c.status || errorOf(t, body).Error.Code != c.code {
				t.Errorf("resolve %s %s: %d %s", c.path, c.outcome, st, body)
			}
		}
		st, body = e.call("POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[1].ID), map[string]string{"outcome": "NO"}, "")
		if st != 401 {
			t.Fatalf("resolve without a token: %d %s", st, body)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[1].ID), map[string]string{"outcome": "NO"}, adminToken, nil)
		st, body = e.call("POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[1].ID), map[string]string{"outcome": "YES"}, adminToken)
		if st != 409 {
			t.Fatalf("re-resolving to another outcome: %d %s", st, body)
		}
		// Only one of three markets resolved, before the grace period:
		// the scheduled trigger waits, the admin trigger scores now.
		if n, err := e.svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("TriggerDue before grace: %d, %v", n, err)
		}
		var scores []forecast.ScoreJSON
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken, &scores)
		v = expectStatus("scored")
		// Unresolved at the trigger is null (not VOID), and stays frozen.
		if len(v.Outcomes) != 3 || v.Outcomes[0] != nil || v.Outcomes[1] == nil || *v.Outcomes[1] != "NO" || v.Outcomes[2] != nil {
			t.Fatalf("outcomes %v", v.Outcomes)
		}
		// One scored market (NO), no benchmark on it: Brier only.
		for _, s := range scores {
			if s.ScoredMarkets != 1 || s.Alpha != nil || s.AlphaBps2 != nil {
				t.Errorf("score %+v: want one scored market and no alpha", s)
			}
			if s.Agent == k.Address().Hex() && (s.BrierBps2 != 200*200 || !near(s.Brier, 0.0004)) {
				t.Errorf("agent score %+v, want (0.02 − 0)²", s)
			}
			if s.Agent == "market" {
				t.Errorf("market baseline scored without a benchmarked market: %+v", s)
			}
		}
		if len(scores) != 2 {
			t.Errorf("scores %+v: want the agent and random", scores)
		}
		st, body = e.call("POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken)
		if st != 409 || errorOf(t, body).Error.Code != "trigger_not_allowed" {
			t.Fatalf("second trigger: %d %s", st, body)
		}
		for _, p := range []string{"/api/v1/rounds/77", "/api/v1/rounds/77/scores", "/api/v1/rounds/abc"} {
			st, body := e.call("GET", p, nil, "")
			if st != 404 || errorOf(t, body).Error.Code != "round_not_found" {
				t.Errorf("GET %s: %d %s", p, st, body)
			}
		}
		st, body = e.call("GET", "/api/v1/rounds?status=pending", nil, "")
		if st != 400 {
			t.Errorf("bad status filter: %d %s", st, body)
		}
		st, body = e.call("GET", "/api/v1/leaderboard?track=chess", nil, "")
		if st != 400 {
			t.Errorf("bad track: %d %s", st, body)
		}
	})
}

type recorded struct {
	status int
	body   []byte
}

// httptestDo runs one request through h in-process.
func httptestDo(h http.Handler, method, path string, body any, token string) recorded {
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, path, bytes.NewReader(j))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := &recorder{header: http.Header{}}
	h.ServeHTTP(w, req)
	return recorded{w.status, w.body.Bytes()}
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) { r.status = s }

// Addresses are accepted in any case and returned checksummed.
func TestAddressesAnyCase(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 2, t0.Add(10*24*time.Hour))
		r := e.createRound(ms, t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour))
		k := newKey("mixed case")
		addr := k.Address().Hex()
		lower, upper := strings.ToLower(addr), "0x"+strings.ToUpper(addr[2:])
		req := e.commitReq(k, r.ID, []uint16{1, 2}, saltOf("mc"), common.Hash{}, 0)
		req.Agent = lower
		var out forecast.SubmissionJSON
		e.ok(201, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r.ID), req, "", &out)
		if out.Agent != addr {
			t.Fatalf("commit answer agent %q, want checksummed %q", out.Agent, addr)
		}
		for _, a := range []string{lower, upper, addr} {
			if n := e.nonce(a); n != 1 {
				t.Fatalf("nonce of %s = %d", a, n)
			}
		}
		subs := e.submissions(r.ID)
		if len(subs) != 1 || subs[0].Agent != addr {
			t.Fatalf("stored agent %+v", subs)
		}
		clk.Set(t0.Add(2 * time.Hour))
		rv := e.revealReq(k, r.ID, []uint16{1, 2}, saltOf("mc"), 1)
		rv.Agent = upper
		e.ok(201, "POST", fmt.Sprintf("/api/v1/rounds/%d/reveals", r.ID), rv, "", &out)
		if out.Agent != addr || out.Nonce != 1 {
			t.Fatalf("reveal answer %+v", out)
		}
		for _, bad := range []string{"0x123", addr[2:] + "00", "0x" + strings.Repeat("g", 40), addr + "0"} {
			st, body := e.call("GET", "/api/v1/agents/"+bad+"/nonce", nil, "")
			if st != 400 || errorOf(t, body).Error.Code != "address_invalid" {
				t.Errorf("nonce of %q: %d %s", bad, st, body)
			}
		}
	})
}

// One nonce, many concurrent requests: exactly one is accepted, on both
// engines (the nonce advances by compare-and-set inside the transaction).
func TestConcurrentSameNonce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 2, t0.Add(10*24*time.Hour))
		const n = 12
		var ids []uint64
		for i := 0; i < n; i++ {
			ids = append(ids, e.createRound(ms, t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)).ID)
		}
		k := newKey("racer")
		reqs := make([]forecast.CommitRequest, n)
		for i, id := range ids {
			reqs[i] = e.commitReq(k, id, []uint16{5000, 5000}, saltOf(fmt.Sprint(i)), common.Hash{}, 0)
		}
		statuses := make([]int, n)
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i], bodies[i] = e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", ids[i]), reqs[i], "")
			}()
		}
		close(start)
		wg.Wait()
		accepted := 0
		for i, st := range statuses {
			switch {
			case st == 201:
				accepted++
			case st == 409 && errorOf(t, bodies[i]).Error.Code == "nonce_invalid":
			default:
				t.Errorf("request %d: %d %s", i, st, bodies[i])
			}
		}
		rows := 0
		for _, id := range ids {
			rows += len(e.submissions(id))
		}
		if accepted != 1 || rows != 1 || e.nonce(k.Address().Hex()) != 1 {
			t.Fatalf("%d accepted, %d rows, nonce %d: want exactly one", accepted, rows, e.nonce(k.Address().Hex()))
		}
	})
}

// FuzzSubmissionBodies sends arbitrary bodies to the commit, reveal and
// reasoning endpoints: every answer is a success or a 4xx with the error
// envelope, never a 5xx or a crash.
func FuzzSubmissionBodies(f *testing.F) {
	dir := f.TempDir()
	db, err := store.Open(context.Background(), "sqlite:"+dir+"/fuzz.db")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	clk := clock.New(t0)
	svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
	h := web.New(web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: quiet, Forecast: svc}).Handler()
	ms := seedMarkets(f, db, 3, t0.Add(10*24*time.Hour))
	r, err := svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: marketIDs(ms),
		CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour)})
	if err != nil {
		f.Fatal(err)
	}
	e := &env{t: f, db: db, svc: svc, now: clk.Now}
	k := newKey("fuzz")
	valid, _ := json.Marshal(e.commitReq(k, r.ID, []uint16{1, 2, 3}, saltOf("fuzz"), common.Hash{}, 0))
	reveal, _ := json.Marshal(e.revealReq(k, r.ID, []uint16{1, 2, 3}, saltOf("fuzz"), 1))
	for _, s := range []string{string(valid), string(reveal), `{}`, `{"agent":null}`, `{"predictions":[1,2,3],"salt":"0x"}`,
		`{"agent":"0x2c7536e3605d9c16a7a3d7b1898e529396a65c23","content":"[\"a\",\"b\",\"c\"]"}`, `[`, `"x"`, `{"nonce":1e400}`,
		`{"signature":"0x` + strings.Repeat("1b", 65) + `"}`} {
		for _, ep := range []uint8{0, 1, 2} {
			f.Add(ep, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, ep uint8, body []byte) {
		path := fmt.Sprintf("/api/v1/rounds/%d/%s", r.ID, []string{"commits", "reveals", "reasoning"}[ep%3])
		req, _ := http.NewRequest("POST", path, bytes.NewReader(body))
		w := &recorder{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.status == 201 {
			return
		}
		if w.status < 400 || w.status > 499 {
			t.Fatalf("%s %q: status %d %s", path, body, w.status, w.body.Bytes())
		}
		errorOf(t, w.body.Bytes())
	})
}
