// Package storetest runs store-backed tests on every engine: SQLite always,
// PostgreSQL when ARENA_TEST_POSTGRES_URL is set (each test in its own
// schema, dropped afterwards, so runs never collide).
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/forecast-arena/arena/internal/store"
)

// Each runs fn once per available engine as a subtest named after it.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, engine := range Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, Open(t, engine)) })
	}
}

// race runs n claimants at once and counts those that won; a claimant's
// error fails the test (and does not count as a win).
func race(t *testing.T, n int, claim func(i int) (won bool, err error)) int {
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := claim(i)
			if err != nil {
				t.Error(err)
				return
			}
			if won {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(wins.Load())
}

// Open returns a fresh, migrated, empty database of engine, closed when
// the test ends.
func Open(t *testing.T, engine string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), URL(t, engine))
	if err != nil {
		t.Fatalf("open %s: %v", engine, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Engines lists the engines available to this test run.
func Engines() []string {
	if os.Getenv("ARENA_TEST_POSTGRES_URL") != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// URL returns a fresh, empty database URL for engine: a temp SQLite file,
// or a new PostgreSQL schema selected through search_path.
func URL(t testing.TB, engine string) string {
	t.Helper()
	if engine == "sqlite" {
		return "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	}
	base := os.Getenv("ARENA_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("ARENA_TEST_POSTGRES_URL not set")
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("ARENA_TEST_POSTGRES_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
