// Package arena holds Forecast Arena's domain types and the interfaces that
// connect its parts. Implementations live in packages named after what they
// wrap (store, polymarket, sim, forecastbench, …); this package does no I/O.
//
// Data flows one way: sources → store → tracks → agents →
// validated submissions → resolution → scoring → API/exports.
package arena
