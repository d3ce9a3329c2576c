package web

import (
	"context"
	"net/http"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
)

// ReadyJSON is the /readyz answer. It names no host, user or error text:
// what is wrong, never how to reach it.
type ReadyJSON struct {
	Status     string              `json:"status"`   // ready | not_ready
	Database   string              `json:"database"` // ok | unreachable
	Migrations *arena.SchemaHealth `json:"migrations,omitempty"`
	Jobs       []arena.JobHealth   `json:"jobs,omitempty"`
}

// readyz says whether this replica should receive traffic: the database
// answers and its schema has every migration this binary knows. The last
// successful and failed run of each scheduled job (over all replicas) is
// reported for operators but does not make a replica unready: an
// upstream outage failing the sync must not take every replica out of a
// load balancer.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := ReadyJSON{Status: "ready", Database: "ok"}
	fail := func(what string, err error) {
		out.Status = "not_ready"
		s.logger.Warn("readyz: "+what, "request_id", RequestID(r.Context()), "err", redact.String(err.Error()))
	}
	if err := s.db.Ping(ctx); err != nil {
		out.Database = "unreachable"
		fail("database unreachable", err)
	} else if s.health != nil {
		if sh, err := s.health.Schema(ctx); err != nil {
			fail("schema unreadable", err)
		} else {
			if sh.Pending == nil { // none: an empty list, not null
				sh.Pending = []string{}
			}
			if sh.Unknown == nil {
				sh.Unknown = []string{}
			}
			out.Migrations = &sh
			if len(sh.Pending) > 0 {
				out.Status = "not_ready"
			}
		}
		if js, err := s.health.JobHealth(ctx); err != nil {
			fail("job runs unreadable", err)
		} else {
			out.Jobs = js
		}
	}
	status := http.StatusOK
	if out.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, status, out)
}
