package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// nextVersion is the check of a signed profile update: the version after
// the stored one.
func nextVersion(a arena.AgentInfo) func(cur, next *arena.AgentInfo) error {
	return func(cur, _ *arena.AgentInfo) error {
		var stored uint64
		if cur != nil {
			stored = cur.ProfileVersion
		}
		if a.ProfileVersion != stored+1 {
			return arena.Rejectf(arena.ECONFLICT, arena.CodeProfileVersionInvalid, "version %d after %d", a.ProfileVersion, stored)
		}
		return nil
	}
}

func leaf(kind string) *arena.LogLeaf {
	return &arena.LogLeaf{Kind: kind, Data: []byte(`{"kind":"` + kind + `"}`), Hash: make([]byte, 32)}
}

// testAgentProfiles: a profile and its log entry are stored together or
// not at all; racing updates from one version store one; agents racing
// for one name (in any case, compatibility form or look-alike letters)
// get it once; the operator's SetAgent keeps the signed version.
func testAgentProfiles(t *testing.T, db *store.DB) {
	ctx := context.Background()
	addr := func(i int) string { return fmt.Sprintf("0x%040X", i+1) }
	logSize := func() uint64 {
		n, err := db.LogSize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	ada := arena.AgentInfo{Address: addr(0), Name: "Ada", Organisation: "Org", Model: "m", Homepage: "https://a.example", Description: "d", ProfileVersion: 1}
	spent := time.Date(2026, 3, 2, 18, 0, 0, 123000, time.UTC) // the check sets the allowance spent
	if err := db.SetProfile(ctx, ada, leaf("profile"), func(cur, next *arena.AgentInfo) error {
		next.ProfileSpentUntil = spent
		return nextVersion(ada)(cur, next)
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Agent(ctx, ada.Address)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "external" || got.Name != ada.Name || got.Organisation != ada.Organisation || got.Model != ada.Model ||
		got.Homepage != ada.Homepage || got.Description != ada.Description || got.ProfileVersion != 1 || !got.ProfileSpentUntil.Equal(spent) || logSize() != 1 {
		t.Fatalf("stored %+v, log %d", got, logSize())
	}
	// Refused: by the check, or for a name another agent holds. Neither
	// the record nor the log changes.
	refused := errors.New("refused")
	if err := db.SetProfile(ctx, arena.AgentInfo{Address: ada.Address, Name: "Other", ProfileVersion: 2}, leaf("profile"),
		func(_, _ *arena.AgentInfo) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused check: %v", err)
	}
	for _, name := range []string{"ＡＤＡ", "Аda", "Αda"} { // full-width; Cyrillic and Greek capital A
		bob := arena.AgentInfo{Address: addr(1), Name: name, ProfileVersion: 1}
		if err := db.SetProfile(ctx, bob, leaf("profile"), nextVersion(bob)); arena.ErrorCode(err) != arena.CodeProfileNameTaken ||
			!strings.Contains(err.Error(), ada.Address) {
			t.Fatalf("another agent's name as %q: %v", name, err)
		}
	}
	if err := db.SetAgent(ctx, arena.AgentInfo{Address: addr(1), Kind: "sim", Name: "ada"}); arena.ErrorCode(err) != arena.CodeProfileNameTaken {
		t.Fatalf("another agent's name, registered by the operator: %v", err)
	}
	if got, err := db.Agent(ctx, ada.Address); err != nil || got.Name != "Ada" || got.ProfileVersion != 1 || logSize() != 1 {
		t.Fatalf("after refusals: %+v %v, log %d", got, err, logSize())
	}
	if _, err := db.Agent(ctx, addr(1)); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("a refused agent was stored: %v", err)
	}
	// The operator's write keeps the version and the allowance spent; an
	// empty kind keeps the kind.
	if err := db.SetAgent(ctx, arena.AgentInfo{Address: ada.Address, Kind: "llm", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Agent(ctx, ada.Address); got.ProfileVersion != 1 || !got.ProfileSpentUntil.Equal(spent) {
		t.Fatalf("after the operator's write: %+v", got)
	}
	if err := db.SetProfile(ctx, arena.AgentInfo{Address: ada.Address, Name: "Ada", ProfileVersion: 2}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Agent(ctx, ada.Address); got.Kind != "llm" || got.ProfileVersion != 2 || got.Organisation != "" {
		t.Fatalf("after the operator's write and an update: %+v", got)
	}

	// Racing updates of one agent from one version: one is stored.
	const n = 8
	wins := race(t, n, func(i int) (bool, error) {
		a := arena.AgentInfo{Address: ada.Address, Name: fmt.Sprintf("Ada %d", i), ProfileVersion: 3}
		err := db.SetProfile(ctx, a, leaf("profile"), nextVersion(a))
		if arena.ErrorCode(err) == arena.CodeProfileVersionInvalid {
			return false, nil
		}
		return err == nil, err
	})
	if got, _ := db.Agent(ctx, ada.Address); wins != 1 || got.ProfileVersion != 3 || logSize() != 2 {
		t.Fatalf("%d of %d racing updates stored; version %d, log %d", wins, n, got.ProfileVersion, logSize())
	}
	// Agents racing for one name: one gets it, whatever the case, the
	// compatibility form or the look-alike letters.
	wins = race(t, n, func(i int) (bool, error) {
		a := arena.AgentInfo{Address: addr(10 + i), Name: []string{"Grace", "GRACE", "grace", "Ｇｒａｃｅ", "Grасе", "𝐆𝐫𝐚𝐜𝐞", "ＧＲＡＣＥ", "Grac℮"}[i], ProfileVersion: 1}
		err := db.SetProfile(ctx, a, leaf("profile"), nextVersion(a))
		if arena.ErrorCode(err) == arena.CodeProfileNameTaken {
			return false, nil
		}
		return err == nil, err
	})
	if wins != 1 || logSize() != 3 {
		t.Fatalf("%d agents got one name; log %d", wins, logSize())
	}
	as, err := db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	graces := 0
	for _, a := range as {
		if arena.SameName(a.Name, "grace") {
			graces++
		}
	}
	if graces != 1 {
		t.Fatalf("%d agents named grace: %+v", graces, as)
	}
}
