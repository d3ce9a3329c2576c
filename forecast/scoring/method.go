package scoring

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// MethodVersion names the scoring method: the rules that turn scored
// forecasts into the leaderboard. Any change to a figure the leaderboard
// shows, its ranking or its defaults bumps it, with a changelog entry in
// docs/methodology.md (a test pins the default method's digest and the
// figures of a fixed data set to this version).
const MethodVersion = "2.1"

// Method is every parameter of the scoring method. Its digest, with
// MethodVersion, names the configuration a leaderboard was computed with.
type Method struct {
	// Bootstrap replicates and seed of every interval and rank share.
	Bootstrap int    `json:"bootstrap_replicates"`
	Seed      uint64 `json:"bootstrap_seed"`
	// BootstrapWork caps the difficulty-adjusted fit's bootstrap: its
	// replicates stop once their fits have visited this many
	// observations (stats.FEOptions.MaxWork), so that its cost stays
	// bounded however many agents a round draws; 0: no cap.
	BootstrapWork int64 `json:"adjusted_bootstrap_work"`
	// Level of the confidence intervals.
	Level float64 `json:"ci_level"`
	// Bins of the Murphy decomposition.
	Bins int `json:"murphy_bins"`
	// ShrinkN is the prior weight of the shrunken alpha n/(n+ShrinkN)·ᾱ and
	// the predictions below which alpha is provisional.
	ShrinkN int `json:"alpha_shrinkage_n"`
	// TopShare is the share of the ranked agents P(top) counts.
	TopShare float64 `json:"top_share"`
	// Power sets the rounds-to-significance estimate.
	Power stats.PowerParams `json:"rounds_to_significance"`
	// Entry rules: an agent with fewer resolved forecasts than
	// MinForecasts is listed as preliminary, without a rank; at most
	// MaxPerOrganisation agents of one organisation are shown (0: no limit).
	MinForecasts       int `json:"min_forecasts"`
	MaxPerOrganisation int `json:"max_per_organisation"`
}

// DefaultMinForecasts is the default entry rule: below 50 resolved
// forecasts a Brier score's standard error (about 0.2/√n) exceeds 0.03,
// wider than the gaps between most agents.
const DefaultMinForecasts = 50

// DefaultMethod is the method the dashboard, the exports and the reports
// use unless configured otherwise.
func DefaultMethod() Method {
	return Method{Bootstrap: AnalysisBootstrap, Seed: AnalysisSeed, BootstrapWork: AnalysisBootstrapWork, Level: 0.95, Bins: stats.DefaultBins,
		ShrinkN: stats.ShrinkN, TopShare: stats.TopShare, Power: stats.DefaultPowerParams(), MinForecasts: DefaultMinForecasts}
}

// Validate checks the configurable parameters.
func (m Method) Validate() error {
	switch {
	case m.Bootstrap < 0:
		return arena.Errorf(arena.EINVALID, "scoring method: %d bootstrap replicates: want ≥ 0", m.Bootstrap)
	case m.BootstrapWork < 0:
		return arena.Errorf(arena.EINVALID, "scoring method: bootstrap work %d: want ≥ 0 (0: no cap)", m.BootstrapWork)
	case !(m.Level > 0 && m.Level < 1):
		return arena.Errorf(arena.EINVALID, "scoring method: CI level %v: want 0 < level < 1", m.Level)
	case m.ShrinkN < 1:
		return arena.Errorf(arena.EINVALID, "scoring method: alpha shrinkage weight %d: want ≥ 1", m.ShrinkN)
	case !(m.TopShare > 0 && m.TopShare <= 1):
		return arena.Errorf(arena.EINVALID, "scoring method: top share %v: want 0 < share ≤ 1", m.TopShare)
	case m.Bins < 1:
		return arena.Errorf(arena.EINVALID, "scoring method: %d Murphy bins: want ≥ 1", m.Bins)
	case m.MinForecasts < 0:
		return arena.Errorf(arena.EINVALID, "scoring method: minimum of %d resolved forecasts: want ≥ 0", m.MinForecasts)
	case m.MaxPerOrganisation < 0:
		return arena.Errorf(arena.EINVALID, "scoring method: %d agents per organisation: want ≥ 0 (0: no limit)", m.MaxPerOrganisation)
	}
	return nil
}

// MethodStamp names the method a leaderboard or export was computed with.
type MethodStamp struct {
	Version string `json:"version"`
	// Digest is the SHA-256 of the canonical encoding of the Method.
	Digest string `json:"config_digest"`
}

// Stamp is m's version and digest.
func (m Method) Stamp() MethodStamp { return MethodStamp{Version: MethodVersion, Digest: m.Digest()} }

// Digest is the hex SHA-256 of m's canonical encoding: its JSON, whose
// fields come in declaration order and whose numbers Go writes in one
// shortest form, so equal methods always give one digest.
func (m Method) Digest() string {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a struct of numbers always marshals
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (m Method) options() stats.Options {
	return stats.Options{Bins: m.Bins, Bootstrap: m.Bootstrap, Seed: m.Seed, Level: m.Level, Power: m.Power, ShrinkN: m.ShrinkN}
}
