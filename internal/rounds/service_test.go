package rounds_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// Service tests on a real store (SQLite, and PostgreSQL when
// ARENA_TEST_POSTGRES_URL is set) with a controlled clock.

var quiet = slog.New(slog.DiscardHandler)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// spec describes a test market.
type spec struct {
	id, event, category string
	volume              float64
	closeIn             time.Duration // after t0
	price               float64       // Yes price; 0: none
	multi               bool
	status              arena.MarketStatus
}

func saveMarkets(t *testing.T, db *store.DB, specs []spec) map[string]*arena.Market {
	t.Helper()
	var ms []*arena.Market
	for _, s := range specs {
		m := &arena.Market{Source: "test", SourceID: s.id, Kind: arena.KindMarket, Question: "Q " + s.id, Category: s.category,
			EventID: s.event, Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Volume: s.volume, Liquidity: 5000,
			CloseTime: t0.Add(s.closeIn), Status: arena.StatusOpen}
		if s.price > 0 {
			m.Prices = map[string]float64{arena.Yes: s.price, arena.No: 1 - s.price}
		}
		if s.multi {
			m.Type, m.Outcomes, m.Prices = arena.Multi, []string{"Red", "Blue", "Green"}, nil
		}
		if s.status != "" {
			m.Status = s.status
		}
		ms = append(ms, m)
	}
	if _, err := db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	out := map[string]*arena.Market{}
	for _, m := range ms {
		out[m.SourceID] = m
	}
	return out
}

func testRules() rounds.Rules {
	return rounds.Rules{MinVolume: 10_000, MinLiquidity: 1_000, MinPrice: 0.03, MaxPrice: 0.97,
		MinCloseAfter: arena.Duration(time.Hour), MaxCloseAfter: arena.Duration(7 * 24 * time.Hour), Sources: []string{"test"}}
}

// F1: k markets chosen by the stored rules — binary, liquid, one per
// event, categories mixed round-robin, all closing after the reveal
// deadline (plus the rules' margin), so reveals close before any market.
func TestCreateRoundByRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Rules: testRules()}
		cd, rs, rd := t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)
		d3 := 3 * 24 * time.Hour
		ms := saveMarkets(t, db, []spec{
			{id: "A", event: "ev1", category: "Politics", volume: 1_000_000, closeIn: d3, price: 0.5},
			{id: "B", event: "ev1", category: "politics", volume: 990_000, closeIn: d3, price: 0.5}, // same event as A
			{id: "C", event: "ev2", category: "sports", volume: 950_000, closeIn: d3, price: 0.4},
			{id: "D", event: "ev3", category: "crypto", volume: 940_000, closeIn: d3, price: 0.6},
			{id: "E", event: "ev4", category: "politics", volume: 930_000, closeIn: d3, price: 0.7},
			{id: "F", event: "ev5", category: "sports", volume: 920_000, closeIn: d3, price: 0.2},
			{id: "G", event: "ev6", category: "science", volume: 500_000, closeIn: d3, price: 0.3},
			{id: "H", event: "ev7", category: "crypto", volume: 910_000, closeIn: 3*time.Hour + 30*time.Minute, price: 0.5}, // within an hour of the reveal deadline
			{id: "I", event: "ev8", category: "politics", volume: 2_000_000, closeIn: 2 * time.Hour, price: 0.5},            // before the reveal deadline
			{id: "J", event: "ev9", category: "sports", volume: 3_000_000, closeIn: d3, price: 0.99},                        // nearly decided
			{id: "K", event: "ev10", category: "sports", volume: 3_000_000, closeIn: d3, multi: true},                       // not binary
			{id: "L", event: "ev11", category: "culture", volume: 5_000, closeIn: d3, price: 0.5},                           // illiquid
			{id: "M", event: "ev12", category: "culture", volume: 800_000, closeIn: d3, price: 0.5, status: arena.StatusClosed},
			{id: "N", event: "ev13", category: "", volume: 450_000, closeIn: d3, price: 0.5},
			{id: "O", event: "ev14", category: "economics", volume: 400_000, closeIn: 10 * 24 * time.Hour, price: 0.5}, // closes too late
			{id: "P", event: "ev15", category: "crypto", volume: 300_000, closeIn: d3, price: 0.5},
			{id: "Q", event: "ev16", category: "weather", volume: 200_000, closeIn: d3}, // no price
		})
		r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd})
		if err != nil {
			t.Fatal(err)
		}
		// Categories by their best market's volume: politics, sports,
		// crypto, science, uncategorized; then a second layer.
		want := []string{"A", "C", "D", "G", "N", "E", "F"}
		got := sourceIDs(t, db, r)
		if !slices.Equal(got, want) {
			t.Fatalf("round markets %v, want %v", got, want)
		}
		if len(r.Markets) != rounds.DefaultK {
			t.Fatalf("k = %d", len(r.Markets))
		}
		stored, err := db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		earliest := time.Time{}
		for _, rm := range stored.Markets {
			m, _ := db.Market(ctx, rm.MarketID)
			if earliest.IsZero() || m.CloseTime.Before(earliest) {
				earliest = m.CloseTime
			}
		}
		if !stored.RevealDeadline.Before(earliest) || stored.Grace != 24*time.Hour {
			t.Fatalf("reveal deadline %s not before the earliest close %s (grace %s)", stored.RevealDeadline, earliest, stored.Grace)
		}
		var rules struct {
			K     int          `json:"k"`
			Rules rounds.Rules `json:"rules"`
		}
		if err := json.Unmarshal(stored.Rules, &rules); err != nil || rules.K != 7 || rules.Rules.MinVolume != 10_000 ||
			rules.Rules.MaxCloseAfter != arena.Duration(7*24*time.Hour) || !slices.Equal(rules.Rules.Sources, []string{"test"}) {
			t.Fatalf("stored rules %s (%v)", stored.Rules, err)
		}
		// Same candidates, same rules: the same round.
		r2, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd})
		if err != nil || !slices.Equal(sourceIDs(t, db, r2), want) {
			t.Fatalf("second round %v (%v)", sourceIDs(t, db, r2), err)
		}

		// Refusals store nothing.
		count := func() int {
			rs, err := db.Rounds(ctx, arena.RoundFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		before := count()
		svc.K = 9
		for name, c := range map[string]struct {
			req  rounds.CreateRoundRequest
			code string
		}{
			"too few eligible markets": {rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, forecast.CodeNotEnoughMarkets},
			"commit deadline passed":   {rounds.CreateRoundRequest{CommitDeadline: t0, RevealStart: rs, RevealDeadline: rd}, forecast.CodeScheduleInvalid},
			"reveal before commit":     {rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: cd, RevealDeadline: rd}, forecast.CodeScheduleInvalid},
			"closed market":            {rounds.CreateRoundRequest{MarketIDs: []int64{ms["A"].ID, ms["M"].ID}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, forecast.CodeRoundMarketsInvalid},
			"market closes too early":  {rounds.CreateRoundRequest{MarketIDs: []int64{ms["A"].ID, ms["I"].ID}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, forecast.CodeRoundMarketsInvalid},
			"two on one event":         {rounds.CreateRoundRequest{MarketIDs: []int64{ms["A"].ID, ms["B"].ID}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, forecast.CodeRoundMarketsInvalid},
			"not binary":               {rounds.CreateRoundRequest{MarketIDs: []int64{ms["A"].ID, ms["K"].ID}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, forecast.CodeRoundMarketsInvalid},
			"unknown market":           {rounds.CreateRoundRequest{MarketIDs: []int64{ms["A"].ID, 9999}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd}, arena.ENOTFOUND},
		} {
			_, err := svc.CreateRound(ctx, c.req)
			if arena.ErrorCode(err) != c.code {
				t.Errorf("%s: %v, want code %s", name, err, c.code)
			}
		}
		if n := count(); n != before {
			t.Fatalf("%d rounds after refusals, want %d", n, before)
		}
		// Manual selection: any k, in the given order, rules recorded as manual.
		svc.K = 0
		r3, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: []int64{ms["Q"].ID, ms["A"].ID}, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd})
		if err != nil || !slices.Equal(sourceIDs(t, db, r3), []string{"Q", "A"}) {
			t.Fatalf("manual round %v (%v)", r3, err)
		}
		if s, _ := db.Round(ctx, r3.ID); string(s.Rules) != fmt.Sprintf(`{"manual":true,"market_ids":[%d,%d]}`, ms["Q"].ID, ms["A"].ID) {
			t.Fatalf("manual rules %s", s.Rules)
		}
	})
}

func sourceIDs(t *testing.T, db *store.DB, r *arena.Round) []string {
	t.Helper()
	var out []string
	for _, rm := range r.Markets {
		m, err := db.Market(context.Background(), rm.MarketID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.SourceID)
	}
	return out
}

// newRound stores n plain markets and a round over them, commit deadline
// at t0+1h, reveals t0+2h..t0+3h.
func newRound(t *testing.T, db *store.DB, svc *rounds.Service, prefix string, n int) (*arena.Round, []*arena.Market) {
	t.Helper()
	return newRoundAt(t, db, svc, prefix, n, forecast.Schedule{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour)})
}

// newRoundAt stores n plain markets and a round over them on schedule s.
func newRoundAt(t *testing.T, db *store.DB, svc *rounds.Service, prefix string, n int, s forecast.Schedule) (*arena.Round, []*arena.Market) {
	t.Helper()
	var specs []spec
	for i := 0; i < n; i++ {
		specs = append(specs, spec{id: fmt.Sprintf("%s%d", prefix, i), event: fmt.Sprintf("%s-ev%d", prefix, i), category: "c",
			volume: 100_000, closeIn: 5 * 24 * time.Hour, price: 0.5})
	}
	byID := saveMarkets(t, db, specs)
	ms := make([]*arena.Market, n)
	ids := make([]int64, n)
	for i, sp := range specs {
		ms[i], ids[i] = byID[sp.id], byID[sp.id].ID
	}
	r, err := svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: ids,
		CommitDeadline: s.CommitDeadline, RevealStart: s.RevealStart, RevealDeadline: s.RevealDeadline})
	if err != nil {
		t.Fatal(err)
	}
	return r, ms
}

func addPoints(t *testing.T, db *store.DB, m *arena.Market, pts ...arena.PricePoint) {
	t.Helper()
	for i := range pts {
		pts[i].Outcome = arena.Yes
	}
	m.History = pts
	if _, err := db.SaveMarkets(context.Background(), []*arena.Market{m}); err != nil {
		t.Fatal(err)
	}
	m.History = nil
}

// F5: the benchmark is the mid-price nearest the commit deadline within
// ±300 s (never Gamma's quote or a freeze value; earlier point on a tie),
// else the lookup, else none; captured once, after the window has closed.
func TestCaptureBenchmarks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		var mu sync.Mutex
		var asked []string
		lookupErr := errors.New("CLOB down")
		failing := true
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		svc.Lookup = func(ctx context.Context, m *arena.Market, at time.Time) (arena.PricePoint, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, m.SourceID)
			if failing {
				return arena.PricePoint{}, false, lookupErr
			}
			if m.SourceID == "b3" { // a venue's own history, with its provenance
				return arena.PricePoint{Time: at.Add(-5 * time.Second), Price: 0.33, Source: arena.PriceCandleMid}, true, nil
			}
			if m.SourceID == "b4" { // a venue's price too far from the deadline is none
				return arena.PricePoint{Time: at.Add(-time.Hour), Price: 0.8, Source: arena.PriceAMMHistory}, true, nil
			}
			return arena.PricePoint{}, false, nil
		}
		r, ms := newRound(t, db, svc, "b", 6)
		cd := r.CommitDeadline
		p := func(d time.Duration, v float64, src arena.PriceSource) arena.PricePoint {
			return arena.PricePoint{Time: cd.Add(d), Price: v, Source: src}
		}
		addPoints(t, db, ms[0], p(-60*time.Second, 0.40, arena.PriceCLOBMid), p(60*time.Second, 0.44, arena.PriceCLOBMid))
		addPoints(t, db, ms[1], p(-10*time.Second, 0.50, arena.PriceGamma), p(100*time.Second, 0.52, arena.PriceCLOBMid))
		addPoints(t, db, ms[2], p(0, 0.70, arena.PriceFreeze), p(299*time.Second, 0.71, arena.PriceSim))
		addPoints(t, db, ms[3], p(301*time.Second, 0.90, arena.PriceCLOBMid), p(-301*time.Second, 0.10, arena.PriceCLOBMid))
		addPoints(t, db, ms[4], p(0, 1, arena.PriceSettlement)) // the outcome itself is never a benchmark
		addPoints(t, db, ms[5], p(-300*time.Second, 0.25, arena.PriceCLOBHistory))

		for _, at := range []time.Time{t0, cd, cd.Add(forecast.BenchmarkTolerance - time.Microsecond)} {
			clk.Set(at)
			if n, err := svc.CaptureBenchmarks(ctx); err != nil || n != 0 {
				t.Fatalf("capture at %s: %d, %v (points after the deadline may still arrive)", at, n, err)
			}
		}
		clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if n, err := svc.CaptureBenchmarks(ctx); !errors.Is(err, lookupErr) || n != 0 {
			t.Fatalf("capture with a failing lookup: %d, %v", n, err)
		}
		if got, _ := db.Round(ctx, r.ID); !got.BenchmarkAt.IsZero() {
			t.Fatal("benchmarks recorded although the lookup failed")
		}
		failing = false
		asked = nil
		if n, err := svc.CaptureBenchmarks(ctx); err != nil || n != 1 {
			t.Fatalf("capture: %d, %v", n, err)
		}
		if !slices.Equal(asked, []string{"b3", "b4"}) {
			t.Fatalf("lookup asked for %v, want only the markets without a local point", asked)
		}
		got, err := db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			price float64 // -1: none
			bps   int32
			at    time.Duration
			src   arena.PriceSource
		}{
			{0.40, 4000, -60 * time.Second, arena.PriceCLOBMid},
			{0.52, 5200, 100 * time.Second, arena.PriceCLOBMid},
			{0.71, 7100, 299 * time.Second, arena.PriceSim},
			{0.33, 3300, -5 * time.Second, arena.PriceCandleMid},
			{-1, 0, 0, ""},
			{0.25, 2500, -300 * time.Second, arena.PriceCLOBHistory},
		}
		if !got.BenchmarkAt.Equal(cd.Add(forecast.BenchmarkTolerance)) {
			t.Fatalf("benchmark_at %s", got.BenchmarkAt)
		}
		for i, w := range want {
			m := got.Markets[i]
			if w.price < 0 {
				if m.Benchmark != nil {
					t.Errorf("market %d: benchmark %v, want none (never a silent 0.5)", i, *m.Benchmark)
				}
				continue
			}
			if m.Benchmark == nil || *m.Benchmark != w.price || m.BenchmarkBps != w.bps || !m.BenchmarkTime.Equal(cd.Add(w.at)) || m.BenchmarkSource != w.src {
				t.Errorf("market %d: %+v (benchmark %v), want %+v", i, m, m.Benchmark, w)
			}
		}
		// Recorded once: later points change nothing.
		addPoints(t, db, ms[4], p(0, 0.99, arena.PriceCLOBMid))
		if n, err := svc.CaptureBenchmarks(ctx); err != nil || n != 0 {
			t.Fatalf("recapture: %d, %v", n, err)
		}
		if again, _ := db.Round(ctx, r.ID); again.Markets[4].Benchmark != nil {
			t.Fatal("benchmark changed after capture")
		}
	})
}

// agentKey derives a test key from a name.
func agentKey(name string) *forecast.Key {
	for i := 0; ; i++ {
		k, err := crypto.ToECDSA(crypto.Keccak256([]byte("service test"), []byte(name), []byte{byte(i)}))
		if err == nil {
			return forecast.NewKey(k)
		}
	}
}

// commitAndReveal sends a signed commit now and, when reveal is set,
// the matching reveal at the reveal start.
func commit(t *testing.T, svc *rounds.Service, clk *clock.Manual, k *forecast.Key, r *arena.Round, preds []uint16) common.Hash {
	t.Helper()
	ctx := context.Background()
	salt := crypto.Keccak256Hash([]byte("salt"), k.Address().Bytes(), fmt.Append(nil, r.ID))
	n, err := svc.Store.Nonce(ctx, k.Address().Hex())
	if err != nil {
		t.Fatal(err)
	}
	c := forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, salt), Agent: k.Address(),
		Nonce: n, Deadline: uint64(clk.Now().Add(time.Hour).Unix())}
	sig, err := k.SignCommit(svc.Domain, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Commit(ctx, r.ID, forecast.CommitRequest{Agent: c.Agent.Hex(), CommitHash: c.CommitHash.Hex(), Nonce: n,
		Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}); err != nil {
		t.Fatal(err)
	}
	return salt
}

func reveal(t *testing.T, svc *rounds.Service, clk *clock.Manual, k *forecast.Key, r *arena.Round, preds []uint16, salt common.Hash) {
	t.Helper()
	if _, err := svc.Reveal(context.Background(), r.ID, signedReveal(t, svc, clk, k, r, preds, salt)); err != nil {
		t.Fatal(err)
	}
}

// playScoredRound runs a two-market round for k from creation to score:
// commit preds, benchmarks captured at bench, reveal, markets resolved to
// outcomes, trigger after the reveal deadline.
func playScoredRound(t *testing.T, db *store.DB, svc *rounds.Service, clk *clock.Manual, k *forecast.Key, prefix string, preds []uint16, bench []float64, outcomes []string) *arena.Round {
	t.Helper()
	ctx := context.Background()
	clk.Set(t0)
	r, ms := newRound(t, db, svc, prefix, len(preds))
	salt := commit(t, svc, clk, k, r, preds)
	for j, m := range ms {
		addPoints(t, db, m, arena.PricePoint{Time: r.CommitDeadline, Price: bench[j], Source: arena.PriceCLOBMid})
	}
	clk.Set(r.CommitDeadline.Add(forecast.BenchmarkTolerance))
	if _, err := svc.CaptureBenchmarks(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Set(r.RevealStart)
	reveal(t, svc, clk, k, r, preds, salt)
	for j, m := range ms {
		if _, err := db.ResolveMarket(ctx, m.ID, outcomes[j], clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	clk.Set(r.RevealDeadline.Add(time.Second))
	if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
		t.Fatalf("round %s: trigger %d, %v", prefix, n, err)
	}
	return r
}

// handBrier is F6 by hand over the markets with x ∈ {0,1}: Brier of p
// (nil: forfeit) and Alpha over those with a benchmark b ≥ 0.
func handBrier(p []float64, b []float64, x []int) (brier, alpha float64, nAlpha int) {
	var s, sa float64
	n := 0
	for i := range x {
		if x[i] != 0 && x[i] != 1 {
			continue
		}
		pi := float64(1 - x[i])
		if p != nil {
			pi = p[i]
		}
		xi := float64(x[i])
		n++
		s += (pi - xi) * (pi - xi)
		if b[i] >= 0 {
			nAlpha++
			sa += (b[i]-xi)*(b[i]-xi) - (pi-xi)*(pi-xi)
		}
	}
	if nAlpha > 0 {
		alpha = sa / float64(nAlpha)
	}
	return s / float64(n), alpha, nAlpha
}

// F6: trigger when every market resolved, or at reveal deadline + grace
// when at least one did; the resolved set is frozen then; void and
// unresolved markets are excluded; a commit without a reveal is a forfeit
// scored as Brier 1; the random and market baselines are in every round.
func TestTriggerAndScoring(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: 6 * time.Hour}
		r, ms := newRound(t, db, svc, "s", 4)
		cd, rd := r.CommitDeadline, r.RevealDeadline
		alice, bob := agentKey("alice"), agentKey("bob")
		ap := []uint16{8000, 3000, 5000, 1000}
		saltA := commit(t, svc, clk, alice, r, ap)
		commit(t, svc, clk, bob, r, []uint16{1, 2, 3, 4}) // bob never reveals
		addPoints(t, db, ms[0], arena.PricePoint{Time: cd, Price: 0.6, Source: arena.PriceCLOBMid})
		addPoints(t, db, ms[1], arena.PricePoint{Time: cd, Price: 0.25, Source: arena.PriceCLOBMid})
		addPoints(t, db, ms[2], arena.PricePoint{Time: cd, Price: 0.5, Source: arena.PriceCLOBMid})
		clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if _, err := svc.CaptureBenchmarks(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Set(r.RevealStart)
		reveal(t, svc, clk, alice, r, ap, saltA)
		// m0 YES, m1 NO, m3 VOID; m2 unresolved.
		for i, res := range map[int]string{0: arena.Yes, 1: arena.No, 3: arena.Void} {
			if _, err := db.ResolveMarket(ctx, ms[i].ID, res, clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		for _, at := range []time.Time{rd, rd.Add(time.Second), rd.Add(6*time.Hour - time.Second)} {
			clk.Set(at)
			if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
				t.Fatalf("TriggerDue at reveal deadline %+v: %d, %v (one market unresolved, grace not over)", at.Sub(rd), n, err)
			}
		}
		clk.Set(rd.Add(6 * time.Hour))
		if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
			t.Fatalf("TriggerDue at the end of grace: %d, %v", n, err)
		}
		x := []int{1, 0, -2, -1}
		b := []float64{0.6, 0.25, 0.5, -1}
		scores := scoreMap(t, db, r.ID)
		wantAgents := []string{alice.Address().Hex(), bob.Address().Hex(), forecast.MarketAgent, forecast.RandomAgent}
		if keys := mapKeys(scores); !slices.Equal(keys, sorted(wantAgents)) {
			t.Fatalf("scored agents %v, want %v", keys, sorted(wantAgents))
		}
		check := func(name string, p []float64, forfeit bool) {
			t.Helper()
			s := scores[name]
			brier, alpha, na := handBrier(p, b, x)
			if math.Abs(s.Brier-brier) > 1e-12 || s.Alpha == nil || math.Abs(*s.Alpha-alpha) > 1e-12 || s.Scored != 2 || s.Benchmarked != na || s.Forfeit != forfeit {
				t.Errorf("%s: %+v (alpha %v), want brier %v alpha %v", name, s, *s.Alpha, brier, alpha)
			}
		}
		check(alice.Address().Hex(), []float64{0.8, 0.3, 0.5, 0.1}, false)
		check(bob.Address().Hex(), nil, true)
		if s := scores[bob.Address().Hex()]; s.Brier != 1 || s.BrierBps2 != 100_000_000 {
			t.Errorf("forfeit: %+v, want Brier 1 exactly", s)
		}
		rnd := scoring.RandomPredictions(r.ID, r.CommitDeadline, 4)
		check(forecast.RandomAgent, []float64{float64(rnd[0]) / 1e4, float64(rnd[1]) / 1e4, float64(rnd[2]) / 1e4, float64(rnd[3]) / 1e4}, false)
		if m := scores[forecast.MarketAgent]; *m.Alpha != 0 || *m.AlphaBps2 != 0 || math.Abs(m.Brier-(0.16+0.0625)/2) > 1e-12 || m.BrierBps2 != (4000*4000+2500*2500)/2 {
			t.Errorf("market baseline %+v: want alpha exactly 0 and Brier of the benchmarks", m)
		}
		// Frozen: a market resolving later changes nothing.
		if _, err := db.ResolveMarket(ctx, ms[2].ID, arena.Yes, clk.Now()); err != nil {
			t.Fatal(err)
		}
		clk.Set(rd.Add(48 * time.Hour))
		if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("TriggerDue after scoring: %d, %v", n, err)
		}
		if err := svc.Trigger(ctx, r.ID); arena.ErrorCode(err) != "trigger_not_allowed" {
			t.Fatalf("second trigger: %v", err)
		}
		j1, _ := json.Marshal(scores)
		if j2, _ := json.Marshal(scoreMap(t, db, r.ID)); string(j1) != string(j2) {
			t.Fatalf("scores changed after the set was frozen:\n%s\n%s", j2, j1)
		}
		got, _ := db.Round(ctx, r.ID)
		var outs []int8
		for _, m := range got.Markets {
			outs = append(outs, *m.Outcome)
		}
		if !slices.Equal(outs, []int8{1, 0, scoring.OutcomeUnresolved, scoring.OutcomeExcluded}) {
			t.Fatalf("frozen outcomes %v", outs)
		}
		v, err := svc.View(ctx, got)
		if err != nil {
			t.Fatal(err)
		}
		if *v.Outcomes[0] != "YES" || *v.Outcomes[1] != "NO" || v.Outcomes[2] != nil || *v.Outcomes[3] != "VOID" {
			t.Fatalf("view outcomes %v", v.Outcomes)
		}
		// The frozen forecasts behind the leaderboard: two per agent
		// (M*), a forfeit's forecast the opposite of the outcome.
		rows, err := db.ScoredForecasts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		perAgent := map[string]int{}
		for _, f := range rows {
			perAgent[f.Agent]++
			if f.Agent == bob.Address().Hex() && (!f.Forfeit || f.Forecast != float64(1-f.Outcome)) {
				t.Errorf("forfeit row %+v", f)
			}
		}
		if len(perAgent) != 3 || perAgent[alice.Address().Hex()] != 2 || perAgent[bob.Address().Hex()] != 2 || perAgent[forecast.RandomAgent] != 2 {
			t.Fatalf("scored forecasts per agent %v", perAgent)
		}

		// A round whose markets all resolve is scored at once, grace or not.
		clk.Set(t0)
		r2, ms2 := newRound(t, db, svc, "all", 2)
		k := agentKey("carol")
		salt := commit(t, svc, clk, k, r2, []uint16{10000, 0})
		clk.Set(r2.RevealStart)
		reveal(t, svc, clk, k, r2, []uint16{10000, 0}, salt)
		db.ResolveMarket(ctx, ms2[0].ID, arena.Yes, clk.Now())
		db.ResolveMarket(ctx, ms2[1].ID, arena.No, clk.Now())
		clk.Set(r2.RevealDeadline)
		if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("TriggerDue at the reveal deadline itself: %d, %v (reveals still accepted)", n, err)
		}
		clk.Set(r2.RevealDeadline.Add(time.Second))
		if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
			t.Fatalf("TriggerDue with all resolved: %d, %v", n, err)
		}
		if s := scoreMap(t, db, r2.ID)[k.Address().Hex()]; s.Brier != 0 || s.BrierBps2 != 0 || s.Alpha != nil {
			t.Fatalf("perfect forecaster without benchmarks: %+v", s)
		}
		if _, ok := scoreMap(t, db, r2.ID)[forecast.MarketAgent]; ok {
			t.Fatal("market baseline scored without benchmarks")
		}

		// Every market void: the round closes with no scores.
		clk.Set(t0)
		r3, ms3 := newRound(t, db, svc, "void", 2)
		db.ResolveMarket(ctx, ms3[0].ID, arena.Void, clk.Now())
		db.ResolveMarket(ctx, ms3[1].ID, arena.Void, clk.Now())
		clk.Set(r3.RevealDeadline.Add(time.Second))
		if err := svc.Trigger(ctx, r3.ID); err != nil {
			t.Fatalf("trigger of an all-void round: %v", err)
		}
		if got, _ := db.Round(ctx, r3.ID); got.Status(clk.Now()) != arena.RoundScored || len(scoreMap(t, db, r3.ID)) != 0 {
			t.Fatalf("all-void round: status %s, scores %v", got.Status(clk.Now()), scoreMap(t, db, r3.ID))
		}
	})
}

func scoreMap(t *testing.T, db *store.DB, id uint64) map[string]arena.RoundScore {
	t.Helper()
	scs, err := db.RoundScores(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]arena.RoundScore{}
	for _, s := range scs {
		out[s.Agent] = s
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// The leaderboard (S1) over several rounds, checked by hand: mean Brier and
// Alpha per round, SE = s/√R, t, two-sided p, Beat%.
func TestLeaderboardAcrossRounds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := &clock.Manual{}
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		k := agentKey("dana")
		if err := db.SetAgent(ctx, arena.AgentInfo{Address: k.Address().Hex(), Name: "Dana", Kind: "external"}); err != nil {
			t.Fatal(err)
		}
		preds := [][]uint16{{7000, 2000}, {5000, 9000}, {9900, 100}}
		outcomes := [][]string{{arena.Yes, arena.No}, {arena.No, arena.Yes}, {arena.Yes, arena.No}}
		bench := []float64{0.5, 0.4}
		var briers, alphas []float64
		for i := range preds {
			playScoredRound(t, db, svc, clk, k, fmt.Sprintf("lb%d-", i), preds[i], bench, outcomes[i])
			x := make([]int, 2)
			p := make([]float64, 2)
			for j := range x {
				if outcomes[i][j] == arena.Yes {
					x[j] = 1
				}
				p[j] = float64(preds[i][j]) / 1e4
			}
			b, a, _ := handBrier(p, bench, x)
			briers, alphas = append(briers, b), append(alphas, a)
		}
		board, _, err := svc.Leaderboard(ctx, rounds.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		lb := board.Rows
		var row *scoring.Row
		for i := range lb {
			if lb[i].Agent == k.Address().Hex() {
				row = &lb[i]
			}
		}
		if row == nil || row.Name != "Dana" || row.Rounds != 3 || row.N != 6 || !row.Provisional {
			t.Fatalf("leaderboard row %+v in %+v", row, lb)
		}
		mean := func(v []float64) float64 { return (v[0] + v[1] + v[2]) / 3 }
		se := func(v []float64) float64 {
			m := mean(v)
			var ss float64
			for _, x := range v {
				ss += (x - m) * (x - m)
			}
			return math.Sqrt(ss/2) / math.Sqrt(3)
		}
		tStat := mean(alphas) / se(alphas)
		p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 2}.CDF(-math.Abs(tStat))
		beat := 0.0
		for _, a := range alphas {
			if a > 0 {
				beat += 100.0 / 3
			}
		}
		for name, c := range map[string][2]float64{
			"brier": {row.Brier, mean(briers)}, "brier_se": {*row.BrierSE, se(briers)}, "alpha": {*row.Alpha, mean(alphas)},
			"alpha_se": {*row.AlphaSE, se(alphas)}, "t": {*row.T, tStat}, "p": {*row.P, p}, "beat_pct": {*row.BeatPct, beat},
		} {
			if math.Abs(c[0]-c[1]) > 1e-9 {
				t.Errorf("%s = %v, by hand %v", name, c[0], c[1])
			}
		}
		for _, e := range lb {
			if e.Agent == forecast.MarketAgent && (e.Alpha == nil || *e.Alpha != 0) {
				t.Errorf("market row %+v: alpha must be exactly 0", e)
			}
		}
	})
}

// Live-data path, offline: markets synced from the fake Polymarket, a round
// created by rules from them, benchmarks from CLOB prices-history through
// Service.Lookup wired to Client.BenchmarkAt with each market's Yes token.
func TestPolymarketRoundOffline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fake := polymarkettest.New(t)
		client := polymarket.NewClient(fake.GammaURL, fake.CLOBURL)
		client.Logger = quiet
		if _, err := polymarket.Sync(ctx, db, client, 50); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 6, 20, 12, 0, 0, 0, time.UTC) // the fixtures close on 2026-06-30
		clk := clock.New(now)
		rules := rounds.DefaultRules()
		rules.MaxCloseAfter = arena.Duration(30 * 24 * time.Hour)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, K: 3, Rules: rules,
			Lookup: rounds.TokenLookup(client.BenchmarkAt)}
		cd := now.Add(time.Hour)
		r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: cd.Add(time.Hour), RevealDeadline: cd.Add(2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		var markets []*arena.Market
		events := map[string]bool{}
		for _, rm := range r.Markets {
			m, err := db.Market(ctx, rm.MarketID)
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := rules.Eligible(m, r.RevealDeadline); !ok || m.Source != arena.SourcePolymarket || len(m.TokenIDs) != 2 {
				t.Fatalf("selected %s: eligible %v (%s), tokens %v", m, ok, why, m.TokenIDs)
			}
			if m.EventID != "" && events[m.EventID] {
				t.Fatalf("two markets of event %s", m.EventID)
			}
			events[m.EventID] = true
			markets = append(markets, m)
		}
		t.Logf("round from Polymarket fixtures: %v", sourceIDs(t, db, r))
		if markets[0].SourceID != "501001" {
			t.Errorf("first pick %s, want the highest-volume eligible market 501001", markets[0].SourceID)
		}
		// CLOB history for the Yes tokens around the commit deadline; the
		// second market has only points outside ±300 s; the No token of the
		// third carries a decoy.
		hist := func(pts ...[2]float64) string {
			var b []byte
			b = append(b, `{"history":[`...)
			for i, p := range pts {
				if i > 0 {
					b = append(b, ',')
				}
				b = fmt.Appendf(b, `{"t":%d,"p":%v}`, cd.Unix()+int64(p[0]), p[1])
			}
			return string(append(b, "]}"...))
		}
		fake.Update(func(s *polymarkettest.Server) {
			s.History[markets[0].TokenIDs[0]] = hist([2]float64{-120, 0.58}, [2]float64{30, 0.61}, [2]float64{200, 0.66})
			s.History[markets[1].TokenIDs[0]] = hist([2]float64{-400, 0.2}, [2]float64{500, 0.3})
			s.History[markets[2].TokenIDs[0]] = hist([2]float64{-60, 0.47})
			s.History[markets[2].TokenIDs[1]] = hist([2]float64{0, 0.99})
		})
		clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if n, err := svc.CaptureBenchmarks(ctx); err != nil || n != 1 {
			t.Fatalf("capture: %d, %v", n, err)
		}
		got, _ := db.Round(ctx, r.ID)
		want := []*float64{ptr(0.61), nil, ptr(0.47)}
		for i, w := range want {
			m := got.Markets[i]
			switch {
			case w == nil && m.Benchmark != nil:
				t.Errorf("market %d: benchmark %v, want none", i, *m.Benchmark)
			case w != nil && (m.Benchmark == nil || *m.Benchmark != *w || m.BenchmarkSource != arena.PriceCLOBHistory):
				t.Errorf("market %d: %+v, want %v from clob_history", i, m, *w)
			}
		}
		if fake.Count("GET /prices-history?") != 3 {
			t.Errorf("%d prices-history requests, want one per market", fake.Count("GET /prices-history?"))
		}
		// An upstream outage fails the capture (retried by the next run);
		// nothing is recorded as "no benchmark".
		clk.Set(now)
		r2, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{CommitDeadline: cd, RevealStart: cd.Add(time.Hour), RevealDeadline: cd.Add(2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		fake.Update(func(s *polymarkettest.Server) { s.CLOBStatus = 503 })
		client.MaxRetries = 1
		clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if n, err := svc.CaptureBenchmarks(ctx); err == nil || n != 0 {
			t.Fatalf("capture during an outage: %d, %v", n, err)
		}
		if got, _ := db.Round(ctx, r2.ID); !got.BenchmarkAt.IsZero() {
			t.Fatal("benchmarks recorded during an outage")
		}
	})
}

func ptr(f float64) *float64 { return &f }

// A trigger that captures the round's benchmarks itself records its time
// after theirs, even on a clock that moves between the two (verify checks
// benchmark_at ≤ triggered_at).
func TestTriggerAfterItsOwnCapture(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		var ticks atomic.Int64 // every reading of the clock is a microsecond later
		now := func() time.Time { return clk.Now().Add(time.Duration(ticks.Add(1)) * time.Microsecond) }
		svc := &rounds.Service{Store: db, Now: now, Logger: quiet, Grace: time.Hour}
		r, ms := newRound(t, db, svc, "own-capture", 2)
		for _, m := range ms {
			addPoints(t, db, m, arena.PricePoint{Time: r.CommitDeadline, Price: 0.4, Source: arena.PriceCLOBMid})
			if _, err := db.ResolveMarket(ctx, m.ID, arena.Yes, r.RevealDeadline); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(r.RevealDeadline.Add(time.Minute))
		if err := svc.Trigger(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		got, err := db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.BenchmarkAt.IsZero() || got.TriggeredAt.Before(got.BenchmarkAt) {
			t.Fatalf("benchmarks at %s, triggered at %s: the trigger must not precede the capture it made",
				got.BenchmarkAt.Format(time.RFC3339Nano), got.TriggeredAt.Format(time.RFC3339Nano))
		}
	})
}
