// Package strategy holds the reference client's strategies that need the
// arena's own parts: an LLM agent of a model registry (and its traces),
// the simulator's informed agents, and the server-hosted LLM agents, each
// an ordinary participant of the server's HTTP API.
package strategy
