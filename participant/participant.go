// Package participant is the reference external agent of the forecast
// track: it discovers open rounds, forecasts, commits with an
// EIP-712 signature, keeps its salts in a durable local queue, reveals in
// the window and uploads its reasoning. It is idempotent and safe to run
// from cron: every step can be interrupted and rerun.
package participant

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

// Strategy turns a round into predictions (basis points) and optional
// per-market reasoning.
type Strategy interface {
	Name() string
	Forecast(ctx context.Context, r *forecast.RoundJSON) (preds []uint16, reasoning []string, err error)
}

// Client runs the participant against one arena server.
type Client struct {
	Server   string
	HTTP     *http.Client
	Key      *forecast.Key
	StateDir string
	Strategy Strategy
	// LeadTime: forecast only when the commit deadline is this close
	// (0 = as soon as a round is open). LLM agents default to 600 s.
	LeadTime time.Duration
	// SigTTL is how long a signature stays valid (its deadline field).
	SigTTL time.Duration
	Now    func() time.Time
	Logger *slog.Logger
}

// Report says what one run did.
type Report struct {
	Committed, Revealed, ReasoningSent, Abandoned int
	// Open counts the rounds the server lists as open for commits.
	Open int
	// Next is the earliest step still to come of a round this client
	// takes part in (zero when none waits).
	Next Wait
}

// Wait is a round's next step that is not due yet.
type Wait struct {
	Round uint64
	For   string // "the reveal window", "the lead time before the commit deadline"
	At    time.Time
}

// wait keeps w as the report's next step if it comes first.
func (r *Report) wait(w Wait) {
	if r.Next.At.IsZero() || w.At.Before(r.Next.At) {
		r.Next = w
	}
}

// Time is the client's clock: Now when set, else the wall clock.
func (c *Client) Time() time.Time {
	return arena.Clock(c.Now)()
}

func (c *Client) log() *slog.Logger {
	return arena.Logger(c.Logger)
}

// RunOnce does every step that is due now and returns.
func (c *Client) RunOnce(ctx context.Context) (Report, error) {
	var rep Report
	unlock, err := stateDir(c.StateDir).lock()
	if err != nil {
		return rep, err
	}
	defer unlock()
	domain, err := c.domain(ctx)
	if err != nil {
		return rep, err
	}
	dir := serverDir(c.StateDir, c.Server, domain)
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return rep, fmt.Errorf("participant: state dir: %w", err)
	}
	if err := migrateLegacy(c.StateDir, dir, c.log()); err != nil {
		return rep, err
	}

	// Finish what earlier runs started: commits not yet acknowledged,
	// reveals and reasoning uploads.
	pending, skipped, err := dir.pending()
	if err != nil {
		return rep, err
	}
	// A round the server refuses (or whose state file is unreadable) is
	// reported but does not hold up the others: each is retried by the
	// next run.
	var errs []error
	for _, err := range skipped {
		c.log().Error("unreadable state file skipped; fix or remove it by hand", "err", err)
		errs = append(errs, err)
	}
	fail := func(id uint64, err error) {
		c.log().Warn("round step failed; a later run retries", "round", id, "err", err)
		errs = append(errs, fmt.Errorf("round %d: %w", id, err))
	}
	for _, st := range pending {
		if err := c.advance(ctx, domain, dir, st, &rep); err != nil {
			fail(st.RoundID, err)
		}
	}
	// New rounds.
	var open []forecast.RoundJSON
	if err := c.Get(ctx, "/api/v1/rounds?status=open", &open); err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	rep.Open = len(open)
	for i := range open {
		r := &open[i]
		if _, seen, err := dir.load(r.ID); err != nil || seen {
			continue // an unreadable file was reported above; never overwrite it
		}
		now := c.Time()
		if !now.Before(r.CommitDeadline) {
			continue
		}
		if c.LeadTime > 0 && r.CommitDeadline.Sub(now) > c.LeadTime {
			rep.wait(Wait{Round: r.ID, For: "the lead time before the commit deadline", At: r.CommitDeadline.Add(-c.LeadTime)})
			continue
		}
		preds, reasons, err := c.Strategy.Forecast(ctx, r)
		if err != nil {
			c.log().Warn("forecast failed; skipping round", "round", r.ID, "err", err)
			continue
		}
		// A commit the server would refuse to reveal is a forfeit: check first.
		if err := forecast.CheckPredictions(preds, len(r.Markets)); err != nil {
			return rep, fmt.Errorf("participant: strategy %s: %w", c.Strategy.Name(), err)
		}
		salt, err := forecast.NewSalt()
		if err != nil {
			return rep, err
		}
		st := &roundState{RoundID: r.ID, Predictions: preds, Salt: "0x" + hex.EncodeToString(salt[:]), Reasoning: reasons,
			CommitHash: forecast.CommitHash(r.ID, c.Key.Address(), preds, salt).Hex(), CommitDeadline: r.CommitDeadline}
		for _, m := range r.Markets {
			st.MarketIDs = append(st.MarketIDs, m.MarketID)
		}
		if len(reasons) > 0 {
			h, err := forecast.ReasoningHash(reasons)
			if err != nil {
				return rep, err
			}
			st.ReasoningHash = h.Hex()
		}
		// Durable before anything leaves the machine.
		if err := dir.save(st); err != nil {
			return rep, errors.Join(append(errs, err)...)
		}
		if err := c.advance(ctx, domain, dir, st, &rep); err != nil {
			fail(st.RoundID, err)
		}
	}
	return rep, errors.Join(errs...)
}

// advance moves one round's state forward as far as the clock allows.
func (c *Client) advance(ctx context.Context, d forecast.Domain, dir stateDir, st *roundState, rep *Report) error {
	var r forecast.RoundJSON
	if err := c.Get(ctx, fmt.Sprintf("/api/v1/rounds/%d", st.RoundID), &r); err != nil {
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			st.Abandoned = "round not found"
			rep.Abandoned++
			return dir.save(st)
		}
		return err
	}
	if !st.sameRound(&r) {
		st.Abandoned = fmt.Sprintf("the server's round %d is not the one prepared (markets %v, commit deadline %s)",
			st.RoundID, st.MarketIDs, st.CommitDeadline.UTC().Format(time.RFC3339))
		c.log().Warn("round differs from the one in the state file; abandoned", "round", st.RoundID)
		rep.Abandoned++
		return dir.save(st)
	}
	now := c.Time()
	// Commits are accepted while now ≤ commit_deadline (second resolution
	// is enough here: the server has the last word).
	if !st.Committed && !now.After(r.CommitDeadline) {
		if next, err := c.commitRound(ctx, d, dir, st, rep); !next {
			return err
		}
	}
	// Past the commit deadline with the commit unacknowledged, an earlier
	// run may still have landed it before crashing (or losing the answer):
	// the reveal settles it, since the server answers not_committed when it
	// never got the commit. Abandoning here instead would forfeit a round
	// that was in fact committed.
	if !st.Revealed {
		if next, err := c.revealRound(ctx, d, dir, st, rep, &r, now); !next {
			return err
		}
	}
	if len(st.Reasoning) > 0 && !st.ReasoningSent {
		return c.sendReasoning(ctx, dir, st, rep)
	}
	return nil
}

// commitRound sends the round's commit and saves the state. It reports
// whether the round goes on to its reveal; when it does not, the error
// is why (nil once a full round is abandoned and the state saved).
func (c *Client) commitRound(ctx context.Context, d forecast.Domain, dir stateDir, st *roundState, rep *Report) (bool, error) {
	err := c.commit(ctx, d, st)
	switch {
	case err == nil:
		rep.Committed++
	case arena.ErrorCode(err) == forecast.CodeAlreadyCommitted:
		// An earlier run's commit landed but its answer was lost.
	case arena.ErrorCode(err) == forecast.CodeRoundFull:
		// Final for this round: no retry can get in.
		st.Abandoned = "the round was full: " + err.Error()
		rep.Abandoned++
		return false, dir.save(st)
	default:
		return false, err
	}
	st.Committed = true
	if err := dir.save(st); err != nil {
		return false, err
	}
	return true, nil
}

// revealRound sends the round's reveal once its window (in r) is open at
// now, and saves the state. It reports whether the round goes on to its
// reasoning; when it does not, the error is why (nil when the window is
// not open yet, or once the round is abandoned and the state saved).
func (c *Client) revealRound(ctx context.Context, d forecast.Domain, dir stateDir, st *roundState, rep *Report, r *forecast.RoundJSON, now time.Time) (bool, error) {
	if now.Before(r.RevealStart) {
		rep.wait(Wait{Round: st.RoundID, For: "the reveal window", At: r.RevealStart})
		return false, nil // not yet: a later run reveals
	}
	if !now.Before(r.RevealDeadline) {
		st.Abandoned = "reveal window closed before the reveal was sent"
		if !st.Committed {
			st.Abandoned = "commit deadline passed before the commit was acknowledged"
		}
		rep.Abandoned++
		return false, dir.save(st)
	}
	err := c.reveal(ctx, d, st)
	switch {
	case err == nil:
		rep.Revealed++
	case arena.ErrorCode(err) == forecast.CodeAlreadyRevealed:
	case arena.ErrorCode(err) == forecast.CodeNotCommitted && !st.Committed:
		st.Abandoned = "commit deadline passed; the server never received the commit"
		rep.Abandoned++
		return false, dir.save(st)
	default:
		return false, err
	}
	st.Committed = true
	st.Revealed = true
	if err := dir.save(st); err != nil {
		return false, err
	}
	return true, nil
}

// sendReasoning posts the round's reasoning once revealed, and saves the
// state. Reasoning the server refuses is given up on, not retried.
func (c *Client) sendReasoning(ctx context.Context, dir stateDir, st *roundState, rep *Report) error {
	content, err := forecast.CanonicalReasoning(st.Reasoning)
	if err != nil {
		return err
	}
	err = c.post(ctx, fmt.Sprintf("/api/v1/rounds/%d/reasoning", st.RoundID),
		forecast.ReasoningRequest{Agent: c.Key.Address().Hex(), Content: string(content)}, nil)
	if err != nil && arena.ErrorCode(err) != forecast.CodeReasoningStored {
		var ae *arena.Error
		if !errors.As(err, &ae) || ae.Kind == arena.EUNAVAILABLE || ae.Kind == arena.EINTERNAL {
			return err // transport or server trouble: a later run retries
		}
		// The server refused it (4xx): retrying the same text cannot
		// succeed, and must not keep the round open for ever.
		st.ReasoningGivenUp = err.Error()
		c.log().Warn("reasoning refused by the server; giving up on it", "round", st.RoundID, "err", err)
		if serr := dir.save(st); serr != nil {
			return serr
		}
		return err
	}
	if err == nil {
		rep.ReasoningSent++
	}
	st.ReasoningSent = true
	return dir.save(st)
}

// SetProfile registers or updates the agent's profile: the fields in
// normal form (forecast.NormalizeProfile), signed by the agent's key as
// the version after the stored one, under the server's domain. It
// returns the profile as the server stored it. It needs no state
// directory: the server keeps the version.
func (c *Client) SetProfile(ctx context.Context, p forecast.ProfileFields) (forecast.ProfileJSON, error) {
	var out forecast.ProfileJSON
	d, err := c.domain(ctx)
	if err != nil {
		return out, err
	}
	path := "/api/v1/agents/" + c.Key.Address().Hex() + "/profile"
	var cur forecast.ProfileJSON
	if err := c.Get(ctx, path, &cur); err != nil {
		return out, err
	}
	msg := forecast.Profile{Agent: c.Key.Address(), ProfileFields: forecast.NormalizeProfile(p), Version: cur.Version + 1, Deadline: c.deadline()}
	if err := forecast.CheckProfile(msg.ProfileFields); err != nil {
		return out, err // what the server would refuse, said before signing
	}
	sig, err := c.Key.SignProfile(d, msg)
	if err != nil {
		return out, err
	}
	req := forecast.ProfileRequest{ProfileFields: msg.ProfileFields, Version: msg.Version, Deadline: msg.Deadline, Signature: forecast.EncodeSignature(sig)}
	err = c.post(ctx, path, req, &out)
	return out, err
}

// domain reads the server's EIP-712 domain.
func (c *Client) domain(ctx context.Context) (forecast.Domain, error) {
	var dom forecast.DomainJSON
	if err := c.Get(ctx, "/api/v1/domain", &dom); err != nil {
		return forecast.Domain{}, err
	}
	if !common.IsHexAddress(dom.VerifyingContract) {
		return forecast.Domain{}, fmt.Errorf("participant: server domain has bad verifying_contract %q", dom.VerifyingContract)
	}
	return forecast.Domain{ChainID: dom.ChainID, Contract: common.HexToAddress(dom.VerifyingContract)}, nil
}

func (c *Client) nonce(ctx context.Context) (uint64, error) {
	var n forecast.NonceJSON
	err := c.Get(ctx, "/api/v1/agents/"+c.Key.Address().Hex()+"/nonce", &n)
	return n.Nonce, err
}

func (c *Client) deadline() uint64 {
	ttl := c.SigTTL
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	return uint64(c.Time().Add(ttl).Unix())
}

func (c *Client) commit(ctx context.Context, d forecast.Domain, st *roundState) error {
	nonce, err := c.nonce(ctx)
	if err != nil {
		return err
	}
	msg := forecast.Commit{RoundID: st.RoundID, CommitHash: common.HexToHash(st.CommitHash), Agent: c.Key.Address(),
		Nonce: nonce, Deadline: c.deadline()}
	if st.ReasoningHash != "" {
		msg.ReasoningHash = common.HexToHash(st.ReasoningHash)
	}
	sig, err := c.Key.SignCommit(d, msg)
	if err != nil {
		return err
	}
	req := forecast.CommitRequest{Agent: msg.Agent.Hex(), CommitHash: msg.CommitHash.Hex(), Nonce: nonce,
		Deadline: msg.Deadline, Signature: forecast.EncodeSignature(sig)}
	if st.ReasoningHash != "" {
		req.ReasoningHash = st.ReasoningHash
	}
	return c.post(ctx, fmt.Sprintf("/api/v1/rounds/%d/commits", st.RoundID), req, nil)
}

func (c *Client) reveal(ctx context.Context, d forecast.Domain, st *roundState) error {
	nonce, err := c.nonce(ctx)
	if err != nil {
		return err
	}
	msg := forecast.Reveal{RoundID: st.RoundID, Predictions: st.Predictions, Salt: common.HexToHash(st.Salt),
		Agent: c.Key.Address(), Nonce: nonce, Deadline: c.deadline()}
	sig, err := c.Key.SignReveal(d, msg)
	if err != nil {
		return err
	}
	req := forecast.RevealRequest{Agent: msg.Agent.Hex(), Predictions: st.Predictions, Salt: st.Salt, Nonce: nonce,
		Deadline: msg.Deadline, Signature: forecast.EncodeSignature(sig)}
	return c.post(ctx, fmt.Sprintf("/api/v1/rounds/%d/reveals", st.RoundID), req, nil)
}

// Get reads the JSON of a GET of the server's API path (e.g.
// "/api/v1/rounds/7") into v. A non-2xx answer is an error carrying the
// server's error code and message.
func (c *Client) Get(ctx context.Context, path string, v any) error {
	return c.do(ctx, http.MethodGet, path, nil, v)
}

func (c *Client) post(ctx context.Context, path string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, b, v)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, v any) error {
	u, err := url.JoinPath(strings.TrimRight(c.Server, "/"), "")
	if err != nil {
		return arena.Errorf(arena.EINVALID, "participant: bad server URL %q: %w", c.Server, err)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u+path, rd)
	if err != nil {
		return arena.Errorf(arena.EINVALID, "participant: bad request %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return arena.Errorf(arena.EUNAVAILABLE, "participant: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return arena.Errorf(arena.EUNAVAILABLE, "participant: %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return &arena.Error{Kind: kindOf(resp.StatusCode), Code: e.Error.Code,
				Message: fmt.Sprintf("server rejected %s %s: %s (%s)", method, path, e.Error.Message, e.Error.Code)}
		}
		return arena.Errorf(kindOf(resp.StatusCode), "participant: %s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return arena.Errorf(arena.EUNAVAILABLE, "participant: %s %s: bad JSON answer: %w", method, path, err)
	}
	return nil
}

func kindOf(status int) string {
	switch {
	case status == http.StatusNotFound:
		return arena.ENOTFOUND
	case status == http.StatusConflict:
		return arena.ECONFLICT
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return arena.EUNAUTHORIZED
	case status == http.StatusTooManyRequests:
		return arena.ETOOMANY
	case status >= 500:
		return arena.EUNAVAILABLE
	}
	return arena.EINVALID
}

// LookupMarket resolves a market id through GET /api/v1/markets/{id}.
func (c *Client) LookupMarket(ctx context.Context, id int64) (string, string, error) {
	var m struct {
		Source   string `json:"source"`
		SourceID string `json:"source_id"`
	}
	if err := c.Get(ctx, fmt.Sprintf("/api/v1/markets/%d", id), &m); err != nil {
		return "", "", err
	}
	return m.Source, m.SourceID, nil
}
