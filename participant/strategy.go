package participant

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena/forecast"
)

// NewStrategy returns a built-in strategy by name: random (uniform) or
// market (echo the listed price).
func NewStrategy(name string, agent common.Address) (Strategy, error) {
	switch name {
	case "random":
		return randomStrategy{agent}, nil
	case "market":
		return marketStrategy{}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (want random or market)", name)
}

// randomStrategy forecasts uniformly at random (expected Brier 1/3), seeded
// by agent and round so a rerun forecasts the same.
type randomStrategy struct{ agent common.Address }

func (randomStrategy) Name() string { return "random" }

func (s randomStrategy) Forecast(_ context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], r.ID)
	h := crypto.Keccak256(s.agent[:], id[:])
	rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])))
	out := make([]uint16, len(r.Markets))
	for i := range out {
		out[i] = uint16(rng.IntN(forecast.MaxBps + 1))
	}
	return out, nil, nil
}

// marketStrategy echoes the listed price; a market without one gets 0.5.
type marketStrategy struct{}

func (marketStrategy) Name() string { return "market" }

func (marketStrategy) Forecast(_ context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	out := make([]uint16, len(r.Markets))
	reasons := make([]string, len(r.Markets))
	for i, m := range r.Markets {
		out[i] = forecast.MaxBps / 2
		reasons[i] = "no listed price; forecasting 50%"
		if m.Price != nil {
			out[i] = uint16(math.Round(*m.Price * forecast.MaxBps))
			reasons[i] = fmt.Sprintf("echo of the listed price %.4f", *m.Price)
		}
	}
	return out, reasons, nil
}
