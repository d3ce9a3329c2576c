package app

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
)

// Without a chain each deployment signs under its own verifying contract,
// drawn once and kept: a commit signed for one arena is void at another
// (the signature check refuses a wrong contract), and a restart keeps it.
func TestDeploymentDomain(t *testing.T) {
	ctx := context.Background()
	o := config.Defaults()
	open := func(url string) *store.DB {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dir := t.TempDir()
	a, b := "sqlite:"+filepath.Join(dir, "a.db"), "sqlite:"+filepath.Join(dir, "b.db")
	da, err := Domain(ctx, o, open(a))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Domain(ctx, o, open(a))
	db, _ := Domain(ctx, o, open(b))
	if da.ChainID != 0 || da.Contract == (common.Address{}) || again != da || db.Contract == da.Contract {
		t.Fatalf("arena a %v (again %v), arena b %v: want one stable identifier per database", da, again, db)
	}
	// A configured chain and contract are used as they are.
	o.ChainID, o.Contract = 8453, "0x1000000000000000000000000000000000000001"
	if d, err := Domain(ctx, o, open(a)); err != nil || d.ChainID != 8453 || d.Contract != common.HexToAddress(o.Contract) {
		t.Fatalf("configured domain: %v %v", d, err)
	}
}
