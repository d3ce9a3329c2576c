// Package rounds is the forecast track's server side: rounds and the
// rules that select their markets, submissions, benchmarks, triggers and
// scoring jobs, admission caps, re-scoring after a re-resolution, agents'
// profiles, the cached analyses and the read models the API and pages
// render. The protocol it enforces (hashes, signatures, validation, wire
// types) is package forecast; the scoring it runs is package
// forecast/scoring.
package rounds
