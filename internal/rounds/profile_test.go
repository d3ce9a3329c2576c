package rounds_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

type profileEnv struct {
	db  *store.DB
	svc *rounds.Service
	clk *clock.Manual
}

func newProfileEnv(t *testing.T, db *store.DB) *profileEnv {
	clk := clock.New(t0)
	svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
	return &profileEnv{db: db, svc: svc, clk: clk}
}

func (e *profileEnv) request(t *testing.T, k *forecast.Key, f forecast.ProfileFields, version uint64) forecast.ProfileRequest {
	t.Helper()
	p := forecast.Profile{Agent: k.Address(), ProfileFields: f, Version: version, Deadline: uint64(e.clk.Now().Add(time.Minute).Unix())}
	sig, err := k.SignProfile(e.svc.Domain, p)
	if err != nil {
		t.Fatal(err)
	}
	return forecast.ProfileRequest{ProfileFields: f, Version: version, Deadline: p.Deadline, Signature: forecast.EncodeSignature(sig)}
}

func (e *profileEnv) set(t *testing.T, k *forecast.Key, f forecast.ProfileFields, version uint64) (forecast.ProfileJSON, error) {
	t.Helper()
	return e.svc.SetProfile(context.Background(), k.Address().Hex(), e.request(t, k, f, version))
}

// logged is every log entry, as kind and data.
func (e *profileEnv) logged(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	n, err := e.db.LogSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	es, err := e.db.LogEntries(ctx, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range es {
		var l tlog.Leaf
		if err := json.Unmarshal(x.Data, &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Kind+" "+string(l.Data))
	}
	return out
}

// A signed profile is stored and logged together; updates take the next
// version; names are one per arena whatever their case or compatibility
// form; and a refused update changes neither the record nor the log.
func TestSetProfile(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newProfileEnv(t, db)
		ada, bob := agentKey("ada"), agentKey("bob")
		got, err := e.set(t, ada, forecast.ProfileFields{Name: "Ada", Model: "m-1"}, 1)
		if err != nil || got.Version != 1 || got.Name != "Ada" || got.Kind != "external" || got.Agent != ada.Address().Hex() {
			t.Fatalf("first profile: %+v %v", got, err)
		}
		upd := forecast.ProfileFields{Name: "Ada Lovelace", Organisation: "Analytical Engines", Model: "m-2", Homepage: "https://ada.example",
			Description: `Says "<b>hi</b>".`}
		if got, err = e.set(t, ada, upd, 2); err != nil || got.Version != 2 || got.ProfileFields != upd {
			t.Fatalf("update: %+v %v", got, err)
		}
		if p, err := e.svc.Profile(ctx, strings.ToLower(ada.Address().Hex())); err != nil || p != got {
			t.Fatalf("read back %+v %v, want %+v", p, err, got)
		}
		logged := e.logged(t)
		if len(logged) != 2 || !strings.HasPrefix(logged[1], "profile ") || !strings.Contains(logged[1], `"version":2,`) ||
			!strings.Contains(logged[1], `"name":"Ada Lovelace"`) {
			t.Fatalf("log %q", logged)
		}
		nothing := func(name string, err error, code string) {
			t.Helper()
			if arena.ErrorCode(err) != code {
				t.Errorf("%s: %v, want %s", name, err, code)
			}
			if p, _ := e.svc.Profile(ctx, ada.Address().Hex()); p != got {
				t.Errorf("%s: stored %+v, want it unchanged %+v", name, p, got)
			}
			if p, _ := e.svc.Profile(ctx, bob.Address().Hex()); p.Version != 0 || p.Name != "" {
				t.Errorf("%s: bob stored %+v", name, p)
			}
			if l := e.logged(t); len(l) != len(logged) {
				t.Errorf("%s: logged %q", name, l[len(logged):])
			}
		}
		_, err = e.svc.SetProfile(ctx, ada.Address().Hex(), e.request(t, ada, forecast.ProfileFields{Name: "Ada"}, 2))
		nothing("the same version again", err, forecast.CodeProfileVersionInvalid)
		_, err = e.set(t, ada, forecast.ProfileFields{Name: "Ada"}, 4)
		nothing("a version skipped", err, forecast.CodeProfileVersionInvalid)
		_, err = e.set(t, bob, forecast.ProfileFields{Name: "Bob"}, 2)
		nothing("a first profile at version 2", err, forecast.CodeProfileVersionInvalid)
		for _, name := range []string{"ada lovelace", "ADA LOVELACE", "Ａｄａ Lovelace"} {
			_, err = e.svc.SetProfile(ctx, bob.Address().Hex(), e.request(t, bob, forecast.NormalizeProfile(forecast.ProfileFields{Name: name}), 1))
			nothing("another agent's name as "+name, err, forecast.CodeProfileNameTaken)
		}
		for _, name := range []string{"Random (uniform)", "MARKET", "random"} {
			_, err = e.set(t, bob, forecast.ProfileFields{Name: name}, 1)
			nothing("a baseline's name "+name, err, forecast.CodeProfileNameTaken)
		}
		_, err = e.set(t, bob, forecast.ProfileFields{Name: "Ａｄａ"}, 1)
		nothing("a name not in normal form", err, forecast.CodeProfileNameInvalid)
		req := e.request(t, bob, forecast.ProfileFields{Name: "Bob"}, 1)
		req.Name = "Bobby"
		_, err = e.svc.SetProfile(ctx, bob.Address().Hex(), req)
		nothing("a field changed after signing", err, forecast.CodeSignerMismatch)
		_, err = e.svc.SetProfile(ctx, ada.Address().Hex(), e.request(t, bob, forecast.ProfileFields{Name: "Bob"}, 3))
		nothing("signed by another agent", err, forecast.CodeSignerMismatch)
		other := e.request(t, bob, forecast.ProfileFields{Name: "Bob"}, 1)
		e.svc.Domain.ChainID = 5 // as if signed for another arena
		_, err = e.svc.SetProfile(ctx, bob.Address().Hex(), other)
		e.svc.Domain.ChainID = 0
		nothing("signed under another domain", err, forecast.CodeSignerMismatch)
		stale := e.request(t, bob, forecast.ProfileFields{Name: "Bob"}, 1)
		e.clk.Set(t0.Add(2 * time.Minute))
		_, err = e.svc.SetProfile(ctx, bob.Address().Hex(), stale)
		nothing("past its deadline", err, forecast.CodeDeadlineExpired)
		// The name Ada gave up is free again.
		if _, err := e.set(t, bob, forecast.ProfileFields{Name: "ADA"}, 1); err != nil {
			t.Fatalf("a released name: %v", err)
		}
	})
}

// The operator registers the agents it runs through the same checks and
// names; an agent's own signed profile wins over a registration, and the
// names of Profiles are what every table shows.
func TestRegisterAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newProfileEnv(t, db)
		hosted, ext := agentKey("hosted"), agentKey("external")
		if err := rounds.RegisterAgent(ctx, db, arena.AgentInfo{Address: hosted.Address().Hex(), Kind: "llm", Name: "GPT Model", Model: "openai/gpt"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			a    arena.AgentInfo
			code string
		}{
			{"a name held by the hosted agent", arena.AgentInfo{Address: ext.Address().Hex(), Kind: "sim", Name: "gpt model"}, forecast.CodeProfileNameTaken},
			{"a baseline's name", arena.AgentInfo{Address: ext.Address().Hex(), Kind: "sim", Name: "Market (benchmark)"}, forecast.CodeProfileNameTaken},
			{"a name too long", arena.AgentInfo{Address: ext.Address().Hex(), Kind: "sim", Name: strings.Repeat("n", 41)}, forecast.CodeProfileNameInvalid},
		} {
			if err := rounds.RegisterAgent(ctx, db, c.a); arena.ErrorCode(err) != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
		}
		if _, err := db.Agent(ctx, ext.Address().Hex()); arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Fatalf("a refused registration stored the agent: %v", err)
		}
		if _, err := e.set(t, ext, forecast.ProfileFields{Name: "gpt model"}, 1); arena.ErrorCode(err) != forecast.CodeProfileNameTaken {
			t.Fatalf("a signed profile with the hosted agent's name: %v", err)
		}
		if _, err := e.set(t, ext, forecast.ProfileFields{Name: "Mine"}, 1); err != nil {
			t.Fatal(err)
		}
		if err := rounds.RegisterAgent(ctx, db, arena.AgentInfo{Address: ext.Address().Hex(), Kind: "sim", Name: "Operator's"}); err != nil {
			t.Fatal(err)
		}
		ps, err := e.svc.Profiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(ps[hosted.Address().Hex()].Name, "|", ps[hosted.Address().Hex()].Kind, "|", ps[hosted.Address().Hex()].Model, "|",
			ps[ext.Address().Hex()].Name, "|", ps[ext.Address().Hex()].ProfileVersion, "|", ps[forecast.RandomAgent].Name, "|", ps[forecast.RandomAgent].Kind)
		if want := "GPT Model|llm|openai/gpt|Mine|1|Random (uniform)|builtin"; got != want {
			t.Fatalf("profiles %s, want %s", got, want)
		}
		names, err := e.svc.Names(ctx)
		if err != nil || names[ext.Address().Hex()] != "Mine" || names[forecast.MarketAgent] != "Market (benchmark)" {
			t.Fatalf("names %v %v", names, err)
		}
	})
}

// An agent's first profile makes it known to the arena, like a first
// commit: the cap on new agents an hour applies to it.
func TestProfileAdmission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newProfileEnv(t, db)
		e.svc.Admission = rounds.Admission{Store: db, MaxNewAgentsHour: 1}
		if _, err := e.set(t, agentKey("first"), forecast.ProfileFields{Name: "First"}, 1); err != nil {
			t.Fatal(err)
		}
		_, err := e.set(t, agentKey("second"), forecast.ProfileFields{Name: "Second"}, 1)
		if arena.ErrorCode(err) != forecast.CodeTooManyNewAgents {
			t.Fatalf("a second new agent within the hour: %v", err)
		}
		if _, err := e.set(t, agentKey("first"), forecast.ProfileFields{Name: "First again"}, 2); err != nil {
			t.Fatalf("a known agent's update: %v", err)
		}
	})
}

// Look-alike names: of another agent's name, in another script or the
// same one, and of the baselines' names; refused as taken or, when they
// mix scripts, as invalid; and every refusal stores and logs nothing.
func TestProfileLookAlikes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newProfileEnv(t, db)
		ada, bob := agentKey("ada"), agentKey("bob")
		for i, name := range []string{"Cope", "lda"} {
			if _, err := e.set(t, agentKey(fmt.Sprint("holder", i)), forecast.ProfileFields{Name: name}, 1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.set(t, ada, forecast.ProfileFields{Name: "Ada"}, 1); err != nil {
			t.Fatal(err)
		}
		logged := len(e.logged(t))
		for _, c := range []struct{ name, s, code string }{
			{"Greek capital alpha", "Αda", forecast.CodeProfileNameInvalid},
			{"Cyrillic capital a", "Аda", forecast.CodeProfileNameInvalid},
			{"a Cyrillic word that reads as a Latin one", "Соре", forecast.CodeProfileNameTaken},
			{"capital I for l", "Ida", forecast.CodeProfileNameTaken},
			{"a baseline's name with a Cyrillic em", "Маrket (benchmark)", forecast.CodeProfileNameInvalid},
			{"a baseline's name with a Cyrillic a", "Rаndom (uniform)", forecast.CodeProfileNameInvalid},
			{"a baseline's name with rn for m", "Market (benchrnark)", forecast.CodeProfileNameTaken},
			{"a baseline's id with rn for m", "rnarket", forecast.CodeProfileNameTaken},
		} {
			_, err := e.set(t, bob, forecast.ProfileFields{Name: c.s}, 1)
			if arena.ErrorCode(err) != c.code {
				t.Errorf("%s: %q: %v, want %s", c.name, c.s, err, c.code)
			}
			if p, _ := e.svc.Profile(ctx, bob.Address().Hex()); p.Version != 0 {
				t.Errorf("%s: stored %+v", c.name, p)
			}
		}
		if l := e.logged(t); len(l) != logged {
			t.Fatalf("refused look-alikes logged %q", l[logged:])
		}
		// An agent may keep its own name in another case or form; a name
		// that looks otherwise is free ("IDA" is not "lda").
		if _, err := e.set(t, ada, forecast.ProfileFields{Name: "ADA"}, 2); err != nil {
			t.Fatalf("an agent's own name in capitals: %v", err)
		}
		if _, err := e.set(t, bob, forecast.ProfileFields{Name: "IDA"}, 1); err != nil {
			t.Fatalf("a name that looks otherwise: %v", err)
		}
	})
}

// The cap on profile updates: so many at once, then one every share of
// a day; a refused update says when to retry, and stores and logs
// nothing; each agent has its own allowance.
func TestProfileUpdateCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newProfileEnv(t, db)
		e.svc.Admission = rounds.Admission{ProfileUpdatesPerDay: 4}
		ada := agentKey("ada")
		version := uint64(0)
		update := func() error {
			_, err := e.set(t, ada, forecast.ProfileFields{Name: fmt.Sprint("Ada ", version+1)}, version+1)
			if err == nil {
				version++
			}
			return err
		}
		refused := func(what string, after time.Duration) {
			t.Helper()
			logged := len(e.logged(t))
			err := update()
			var rl *forecast.RetryLater
			if arena.ErrorCode(err) != forecast.CodeTooManyProfileUpdates || !errors.As(err, &rl) || rl.After != after {
				t.Fatalf("%s: %v, want %s with Retry-After %s", what, err, forecast.CodeTooManyProfileUpdates, after)
			}
			if p, _ := e.svc.Profile(ctx, ada.Address().Hex()); p.Version != version || len(e.logged(t)) != logged {
				t.Fatalf("%s: stored version %d (want %d), or logged", what, p.Version, version)
			}
		}
		for range 4 {
			if err := update(); err != nil {
				t.Fatalf("update %d of 4 at once: %v", version+1, err)
			}
		}
		refused("a fifth at once", 6*time.Hour)
		e.clk.Set(t0.Add(6*time.Hour - 90*time.Second))
		refused("a fifth 90 s early", 90*time.Second)
		e.clk.Set(t0.Add(6 * time.Hour))
		if err := update(); err != nil {
			t.Fatalf("a fifth after 6 h: %v", err)
		}
		refused("a sixth at once", 6*time.Hour)
		// A day later the whole allowance is back.
		e.clk.Set(t0.Add(30 * time.Hour))
		for range 4 {
			if err := update(); err != nil {
				t.Fatalf("update %d a day later: %v", version+1, err)
			}
		}
		if _, err := e.set(t, agentKey("bob"), forecast.ProfileFields{Name: "Bob"}, 1); err != nil {
			t.Fatalf("another agent: %v", err)
		}
	})
}
