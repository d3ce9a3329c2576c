package export_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/tlog"
)

// fixture is one small demo played once per test binary, with a round
// that exercises what the demo's rounds do not (a forfeit, a reasoning
// hash, a market without a benchmark, a void and an unresolved market,
// an agent without a name, an agent that signed its profile twice, the
// second time with a name a spreadsheet or a browser would run), exported
// at three moments.
type fixture struct {
	res *demo.Result
	// early is a JSON Lines export made before that round: an earlier,
	// consistent state of the log.
	early string
	// base are the exports (by format) once that round is scored: every
	// round triggered, no log entry sealed.
	base map[string]string
	// sealed is a JSON Lines export after an open round got a commit,
	// whose log entry is sealed.
	sealed string
	// checkpointed is a JSON Lines export at the base moment carrying the
	// log's checkpoint cosigned by two witnesses, which policy (2 of 2)
	// names; vkey is the log's verifier key. The other exports carry a
	// checkpoint pub signed, without cosignatures.
	checkpointed string
	policy       []byte
	vkey         string
	pub          *tlog.Publisher
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func played(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = play() })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fix != nil {
		fix.res.Close()
		os.RemoveAll(fix.res.Dir)
	}
	os.Exit(code)
}

func (f *fixture) logKey() ed25519.PrivateKey { return f.res.App.TLog.Key }

func (f *fixture) source() export.Source {
	return export.Source{Forecast: f.res.App.Rounds, Log: f.res.App.TLog}
}

func (f *fixture) export(format string) (string, error) {
	dir, err := os.MkdirTemp(f.res.Dir, "export-")
	if err != nil {
		return "", err
	}
	n, err := f.checkpoint(context.Background())
	if err != nil {
		return "", err
	}
	_, err = export.Write(context.Background(), f.source(), dir, export.Options{Format: format, Checkpoint: n})
	return dir, err
}

// checkpoint publishes a checkpoint of the log as it stands and returns
// its note, as an arena does before it exports.
func (f *fixture) checkpoint(ctx context.Context) ([]byte, error) {
	if _, err := f.pub.Publish(ctx); err != nil {
		return nil, err
	}
	return f.pub.Checkpoint(ctx)
}

func play() (*fixture, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "arena-export-test-")
	if err != nil {
		return nil, err
	}
	res, err := demo.Run(ctx, demo.Config{Seed: 5, Rounds: 4, Dir: dir})
	if err != nil {
		return nil, err
	}
	// 28 forecasts an agent: an entry rule below the default ranks them,
	// and meta.json carries it to the verifier.
	res.App.Rounds.Method = scoring.DefaultMethod()
	res.App.Rounds.Method.MinForecasts = 10
	f := &fixture{res: res, base: map[string]string{}}
	if f.pub, err = tlog.NewPublisher(res.App.TLog, fixtureOrigin, &tlog.MemCheckpoints{}); err != nil {
		return f, err
	}
	f.vkey = f.pub.VerifierKey()
	if f.early, err = f.export(export.JSONL); err != nil {
		return f, err
	}
	if err := f.scoredRound(ctx); err != nil {
		return f, fmt.Errorf("fixture round: %w", err)
	}
	for _, format := range []string{export.JSONL, export.CSV} {
		if f.base[format], err = f.export(format); err != nil {
			return f, err
		}
	}
	if err := f.exportCheckpointed(ctx); err != nil {
		return f, fmt.Errorf("fixture checkpoint: %w", err)
	}
	if err := f.openRound(ctx); err != nil {
		return f, fmt.Errorf("fixture open round: %w", err)
	}
	f.sealed, err = f.export(export.JSONL)
	return f, err
}

// fixtureKey is a fixed agent key, so the fixture's addresses do not vary.
func fixtureKey(name string) *forecast.Key {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("export fixture " + name)))
	if err != nil {
		panic(err)
	}
	return forecast.NewKey(k)
}

var (
	named   = fixtureKey("named")   // signed its profile, reveals with a reasoning hash
	unnamed = fixtureKey("unnamed") // never registered (no name), forfeits
)

// markets saves open binary markets closing at close, with a simulator
// price at the benchmark time for the first priced ones.
func (f *fixture) markets(ctx context.Context, prefix string, n, priced int, at, close time.Time) ([]int64, error) {
	var ids []int64
	for i := range n {
		m := &arena.Market{Source: arena.SourceSim, SourceID: fmt.Sprintf("%s-%d", prefix, i), Kind: arena.KindMarket,
			Question: fmt.Sprintf("Will fixture question %s-%d resolve Yes?", prefix, i), Category: "fixture", EventID: fmt.Sprintf("%s-e%d", prefix, i),
			Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6}, Volume: 10,
			CloseTime: close, Status: arena.StatusOpen}
		if i < priced {
			m.History = []arena.PricePoint{{Outcome: arena.Yes, Time: at, Price: 0.2 + 0.2*float64(i), Source: arena.PriceSim}}
		}
		if _, err := f.res.DB.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
			return nil, err
		}
		saved, err := f.res.DB.MarketBySource(ctx, m.Source, m.SourceID)
		if err != nil {
			return nil, err
		}
		ids = append(ids, saved.ID)
	}
	return ids, nil
}

func (f *fixture) commit(ctx context.Context, r *arena.Round, k *forecast.Key, nonce uint64, preds []uint16, reasons []string) error {
	svc := f.res.App.Rounds
	salt := common.BytesToHash(crypto.Keccak256([]byte(fmt.Sprint("salt", r.ID, k.Address()))))
	c := forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, salt), Agent: k.Address(), Nonce: nonce,
		Deadline: uint64(r.CommitDeadline.Unix())}
	req := forecast.CommitRequest{Agent: k.Address().Hex(), CommitHash: c.CommitHash.Hex(), Nonce: nonce, Deadline: c.Deadline}
	if reasons != nil {
		h, err := forecast.ReasoningHash(reasons)
		if err != nil {
			return err
		}
		c.ReasoningHash, req.ReasoningHash = h, h.Hex()
	}
	sig, err := k.SignCommit(svc.Domain, c)
	if err != nil {
		return err
	}
	req.Signature = forecast.EncodeSignature(sig)
	_, err = svc.Commit(ctx, r.ID, req)
	return err
}

// fixtureName is the named agent's display name: a formula to a
// spreadsheet, markup to a browser.
const fixtureName = `=HYPERLINK("x") <b>agent</b>`

// profile signs and records a profile of the named agent.
func (f *fixture) profile(ctx context.Context, p forecast.ProfileFields, version uint64) error {
	svc := f.res.App.Rounds
	msg := forecast.Profile{Agent: named.Address(), ProfileFields: p, Version: version, Deadline: uint64(svc.Clock().Add(time.Hour).Unix())}
	sig, err := named.SignProfile(svc.Domain, msg)
	if err != nil {
		return err
	}
	_, err = svc.SetProfile(ctx, named.Address().Hex(), forecast.ProfileRequest{ProfileFields: p, Version: version, Deadline: msg.Deadline,
		Signature: forecast.EncodeSignature(sig)})
	return err
}

func (f *fixture) reveal(ctx context.Context, r *arena.Round, k *forecast.Key, nonce uint64, preds []uint16) error {
	svc := f.res.App.Rounds
	salt := common.BytesToHash(crypto.Keccak256([]byte(fmt.Sprint("salt", r.ID, k.Address()))))
	rv := forecast.Reveal{RoundID: r.ID, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: nonce, Deadline: uint64(r.RevealDeadline.Unix())}
	sig, err := k.SignReveal(svc.Domain, rv)
	if err != nil {
		return err
	}
	_, err = svc.Reveal(ctx, r.ID, forecast.RevealRequest{Agent: k.Address().Hex(), Predictions: preds, Salt: salt.Hex(), Nonce: nonce,
		Deadline: rv.Deadline, Signature: forecast.EncodeSignature(sig)})
	return err
}

// scoredRound plays a round of four markets (the last without a price at
// the commit deadline): one agent reveals, the other forfeits; the
// markets resolve Yes, No, void and not at all before the trigger.
func (f *fixture) scoredRound(ctx context.Context) error {
	clk, svc := f.res.Clock, f.res.App.Rounds
	now := clk.Now().Truncate(time.Hour).Add(time.Hour)
	clk.Set(now)
	cd := now.Add(time.Hour)
	ids, err := f.markets(ctx, "scored", 4, 3, cd, cd.Add(72*time.Hour))
	if err != nil {
		return err
	}
	r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids, CommitDeadline: cd, RevealStart: cd.Add(time.Minute), RevealDeadline: cd.Add(2 * time.Hour)})
	if err != nil {
		return err
	}
	if err := f.profile(ctx, forecast.ProfileFields{Name: "fixture agent"}, 1); err != nil {
		return err
	}
	if err := f.profile(ctx, forecast.ProfileFields{Name: fixtureName, Organisation: "Fixture & Co", Model: "fixture-1",
		Homepage: "https://fixture.example/agent?a=1&b=2", Description: `Signs its profile; "quotes", <tags> and =formulas stay text.`}, 2); err != nil {
		return err
	}
	preds := []uint16{7000, 2000, 5000, 6000}
	clk.Set(now.Add(30 * time.Minute))
	if err := f.commit(ctx, r, named, 0, preds, []string{"a", "b", "c", "d"}); err != nil {
		return err
	}
	if err := f.commit(ctx, r, unnamed, 0, []uint16{1, 2, 3, 4}, nil); err != nil {
		return err
	}
	clk.Set(cd.Add(10 * time.Minute))
	if err := f.reveal(ctx, r, named, 1, preds); err != nil {
		return err
	}
	clk.Set(r.RevealDeadline.Add(time.Hour))
	for i, res := range []string{arena.Yes, arena.No, arena.Void} {
		if _, err := svc.ResolveMarket(ctx, ids[i], res); err != nil {
			return err
		}
	}
	return svc.Trigger(ctx, r.ID)
}

// openRound opens a one-market round and commits to it.
func (f *fixture) openRound(ctx context.Context) error {
	clk, svc := f.res.Clock, f.res.App.Rounds
	now := clk.Now().Add(time.Hour)
	clk.Set(now)
	cd := now.Add(time.Hour)
	ids, err := f.markets(ctx, "open", 1, 1, cd, cd.Add(72*time.Hour))
	if err != nil {
		return err
	}
	r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids, CommitDeadline: cd, RevealStart: cd.Add(time.Minute), RevealDeadline: cd.Add(2 * time.Hour)})
	if err != nil {
		return err
	}
	return f.commit(ctx, r, named, 2, []uint16{4200}, nil)
}

// copyExport copies an export directory into a test's own.
func copyExport(t *testing.T, from string) string {
	t.Helper()
	return cloneExport(t, from, func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// linkExport hard-links an export's files into a test's own directory, for
// the catalogue's hundreds of edited copies: its edits replace a file
// (writeFile), never write through the link into the fixture.
func linkExport(t *testing.T, from string) string {
	t.Helper()
	return cloneExport(t, from, os.Link)
}

func cloneExport(t *testing.T, from string, clone func(src, dst string) error) string {
	t.Helper()
	to := t.TempDir()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := clone(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return to
}
