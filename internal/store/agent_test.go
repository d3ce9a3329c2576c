package store_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// A database whose agents' names were keyed before names were compared
// by their look-alikes: the migration rekeys them, oldest agent first, so
// the first of two look-alike names keeps it and the later one keeps its
// name unreserved (no key) until it changes its profile, when the
// earlier holder's name is refused to it; no new agent can take either.
func TestMigrationRekeysNames(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			// Back to the schema before the migration, with the keys of
			// then: NFKC and case folded, one per name.
			db := reopenAfter(t, storetest.URL(t, engine),
				`DROP INDEX agents_name_skeleton`,
				`ALTER TABLE agents DROP COLUMN name_skeleton`,
				`ALTER TABLE agents DROP COLUMN profile_spent_until`,
				`DELETE FROM schema_migrations WHERE name = '0785_agent_name_skeletons.sql'`,
				`INSERT INTO agents (address, name, name_key, created_at) VALUES ('0xB0', 'Bob', 'bob', 5), ('0xA1', 'Ada', 'ada', 10),
					('0xA2', 'Аda', 'аda', 20), ('0xC1', 'Cope', 'cope', 30), ('0xC2', 'Соре', 'соре', 40), ('0xD0', '', NULL, 50)`)
			as, err := db.Agents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]string{}
			for _, a := range as {
				names[a.Address] = a.Name
			}
			if names["0xA2"] != "Аda" || names["0xC2"] != "Соре" || len(as) != 6 {
				t.Fatalf("the migration changed names: %v", names)
			}
			for _, c := range []struct {
				name, address, holder string
			}{
				{"ADA", "0xE1", "0xA1"},
				{"Аda", "0xE1", "0xA1"},
				{"соре", "0xE1", "0xC1"},
				{"BOB", "0xE1", "0xB0"},
				{"Аda", "0xA2", "0xA1"}, // the later look-alike, when it next changes its profile
			} {
				err := db.SetAgent(ctx, arena.AgentInfo{Address: c.address, Name: c.name})
				if arena.ErrorCode(err) != arena.CodeProfileNameTaken || !strings.Contains(err.Error(), c.holder) {
					t.Errorf("%s for %s: %v, want it taken by %s", c.name, c.address, err, c.holder)
				}
			}
			if err := db.SetAgent(ctx, arena.AgentInfo{Address: "0xA2", Name: "Beth"}); err != nil {
				t.Fatalf("the later look-alike renamed: %v", err)
			}
			if err := db.SetAgent(ctx, arena.AgentInfo{Address: "0xD0", Name: "Dora"}); err != nil {
				t.Fatalf("the unnamed agent named: %v", err)
			}
		})
	}
}

// A database whose names were keyed by the keys of before, which folded
// case once before mapping look-alikes: "B0b" (the digit) held keys of its
// own beside "Bob", and "marĸet" beside "market". The migration rekeys
// them, oldest agent first: the later look-alike keeps its name,
// unreserved, and is refused it when it next changes its profile; no new
// agent can take either.
func TestMigrationRefoldsNames(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := reopenAfter(t, storetest.URL(t, engine),
				`DELETE FROM schema_migrations WHERE name = '0799_agent_name_keys_refolded.sql'`,
				`INSERT INTO agents (address, name, name_key, name_skeleton, created_at) VALUES ('0xB0', 'Bob', 'bob', 'Bob', 5),
					('0xB1', 'B0b', 'bob-0', 'BOb', 10), ('0xA0', 'market', 'market', 'market', 20), ('0xA1', 'marĸet', 'marĸet', 'marĸet', 30)`)
			for _, c := range []struct {
				name, address, holder string
			}{
				{"b0b", "0xE1", "0xB0"},
				{"B০b", "0xE1", "0xB0"},
				{"MARKET", "0xE1", "0xA0"},
				{"B0B", "0xB1", "0xB0"}, // the later look-alike, when it next changes its profile
				{"marĸet", "0xA1", "0xA0"},
			} {
				err := db.SetAgent(ctx, arena.AgentInfo{Address: c.address, Name: c.name})
				if arena.ErrorCode(err) != arena.CodeProfileNameTaken || !strings.Contains(err.Error(), c.holder) {
					t.Errorf("%s for %s: %v, want it taken by %s", c.name, c.address, err, c.holder)
				}
			}
			if err := db.SetAgent(ctx, arena.AgentInfo{Address: "0xB1", Name: "Beth"}); err != nil {
				t.Fatalf("the later look-alike renamed: %v", err)
			}
		})
	}
}

// reopenAfter opens the database at u (migrating it), runs queries on it
// directly, and opens it again, so that the migrations the queries
// unrecorded run once more; the store is closed when the test ends.
func reopenAfter(t *testing.T, u string, queries ...string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	driver, dsn := "pgx", u
	if p, ok := strings.CutPrefix(u, "sqlite:"); ok {
		driver, dsn = "sqlite", "file:"+p
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			raw.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	if db, err = store.Open(ctx, u); err != nil {
		t.Fatalf("migrating: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
