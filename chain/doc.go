// Package chain connects the forecast track to an EVM chain: the Go
// bindings of the contracts in contracts/ (package chain/bindings), their
// deployment, and the mapping of contract reverts to the API's rejection
// codes, so that a request refused on chain and off chain says the same.
package chain
