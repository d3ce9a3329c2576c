// Package score implements the scoring and statistics of Forecast Arena as
// pure functions: no I/O, no clocks, no global randomness (every
// resampling takes a seed). docs/methodology.md states each formula.
//
// Conventions:
//   - Forecasts p, benchmarks b ∈ [0,1]; outcomes x ∈ {0,1} (float64 0 or 1).
//   - A figure that is undefined (t and p when SE = 0, Alpha without any
//     benchmark, an SE from one round) is a Float with OK = false; it
//     marshals to JSON null, never NaN.
//   - Means over rounds use only rounds with ≥ 1 scored market.
package stats
