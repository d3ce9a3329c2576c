package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/store"
)

// A fresh database has every migration applied and none unknown; job
// health reports, per job, the last success, the last failure and a run
// in progress, whichever replica ran them; a claim says when it took over
// an expired lease.
func testHealth(t *testing.T, db *store.DB) {
	ctx := context.Background()
	sh, err := db.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Applied < 7 || len(sh.Pending) != 0 || len(sh.Unknown) != 0 {
		t.Fatalf("schema of a fresh database: %+v", sh)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	db.Now = func() time.Time { return now }
	mustClaim := func(job string, p time.Time, owner string, wantTakeover bool) {
		t.Helper()
		ok, takeover, err := db.ClaimJobRun(ctx, job, p, owner)
		if err != nil || !ok || takeover != wantTakeover {
			t.Fatalf("claim %s %v by %s: ok=%v takeover=%v err=%v", job, p, owner, ok, takeover, err)
		}
	}
	mustClaim("sync", t0, "a", false)
	now = t0.Add(time.Minute)
	if err := db.FinishJob(ctx, "sync", t0, nil); err != nil {
		t.Fatal(err)
	}
	mustClaim("sync", t0.Add(5*time.Minute), "b", false)
	now = t0.Add(6 * time.Minute)
	if err := db.FinishJob(ctx, "sync", t0.Add(5*time.Minute), errors.New("upstream down")); err != nil {
		t.Fatal(err)
	}
	mustClaim("weekly", t0, "dead", false)
	hs, err := db.JobHealth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Job != "sync" || hs[1].Job != "weekly" {
		t.Fatalf("job health %+v", hs)
	}
	if s := hs[0]; !s.LastSuccess.Equal(t0.Add(time.Minute)) || !s.LastFailure.Equal(t0.Add(6*time.Minute)) || s.Running {
		t.Errorf("sync health %+v", s)
	}
	if w := hs[1]; !w.LastSuccess.IsZero() || !w.LastFailure.IsZero() || !w.Running {
		t.Errorf("weekly health %+v", w)
	}
	if ok, takeover, err := db.ClaimJobRun(ctx, "weekly", t0, "b"); ok || takeover || err != nil {
		t.Fatalf("claim of a live lease: ok=%v takeover=%v err=%v", ok, takeover, err)
	}
	now = now.Add(store.JobLease + time.Second)
	mustClaim("weekly", t0, "b", true)
}
