package web

import "slices"

// What the package's external tests read of a server, which nothing
// outside the tests needs.

// Routes lists the method and path of every route registered through the
// server's error-returning handlers, in registration order.
func (s *Server) Routes() []string { return slices.Clone(s.routes) }

// InternalErrors is how many requests failed with an internal error.
func (s *Server) InternalErrors() int64 { return s.internalErrors.Load() }
