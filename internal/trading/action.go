package trading

import (
	"fmt"
	"math"
	"strings"

	"github.com/forecast-arena/arena"
)

// ActionKind is what an agent decided this week.
type ActionKind string

const (
	ActionBet  ActionKind = "BET"
	ActionSell ActionKind = "SELL"
	ActionHold ActionKind = "HOLD"
)

// Binary sides as agents write them. A bet on a multi-outcome market names
// the outcome instead.
const (
	SideYes = "YES"
	SideNo  = "NO"
)

// MaxItems bounds the bets or sells of one action.
const MaxItems = 100

// Action is a parsed agent decision. It is the domain form shared by the
// response parser (package agent) and the engine; amounts are exact.
type Action struct {
	Kind      ActionKind `json:"action"`
	Bets      []Bet      `json:"bets,omitempty"`
	Sells     []Sell     `json:"sells,omitempty"`
	Reasoning string     `json:"reasoning"`
}

// Bet buys Amount of Side in the arena market MarketID.
type Bet struct {
	MarketID int64  `json:"market_id"`
	Side     string `json:"side"` // "YES"/"NO" or an outcome name
	Amount   Micros `json:"amount_micros"`
}

// Sell sells Percentage (1–100) of position PositionID.
type Sell struct {
	PositionID int64   `json:"position_id"`
	Percentage float64 `json:"percentage"`
}

// Hold returns a HOLD action with the given reasoning.
func Hold(reasoning string) Action { return Action{Kind: ActionHold, Reasoning: reasoning} }

// Validate checks an action's structure and value ranges, the checks that
// do not depend on the portfolio or prices: a failure here is the model's
// formatting mistake and is worth a retry. Limits that depend on
// cash, positions or prices are checked when the action executes.
func (a *Action) Validate() error {
	switch a.Kind {
	case ActionHold:
		if len(a.Bets) > 0 || len(a.Sells) > 0 {
			return arena.Errorf(arena.EINVALID, "HOLD must not carry bets or sells")
		}
	case ActionBet:
		if len(a.Bets) == 0 {
			return arena.Errorf(arena.EINVALID, "BET needs at least one bet")
		}
		if len(a.Sells) > 0 {
			return arena.Errorf(arena.EINVALID, "BET must not carry sells (use a separate SELL action)")
		}
		if len(a.Bets) > MaxItems {
			return arena.Errorf(arena.EINVALID, "%d bets in one action (max %d)", len(a.Bets), MaxItems)
		}
		for i, b := range a.Bets {
			if err := b.validate(); err != nil {
				return arena.Errorf(arena.EINVALID, "bets[%d]: %s", i, arena.ErrorMessage(err))
			}
		}
	case ActionSell:
		if len(a.Sells) == 0 {
			return arena.Errorf(arena.EINVALID, "SELL needs at least one sell")
		}
		if len(a.Bets) > 0 {
			return arena.Errorf(arena.EINVALID, "SELL must not carry bets (use a separate BET action)")
		}
		if len(a.Sells) > MaxItems {
			return arena.Errorf(arena.EINVALID, "%d sells in one action (max %d)", len(a.Sells), MaxItems)
		}
		seen := map[int64]bool{}
		for i, s := range a.Sells {
			if err := s.validate(); err != nil {
				return arena.Errorf(arena.EINVALID, "sells[%d]: %s", i, arena.ErrorMessage(err))
			}
			if seen[s.PositionID] {
				return arena.Errorf(arena.EINVALID, "sells[%d]: position %d sold twice in one action", i, s.PositionID)
			}
			seen[s.PositionID] = true
		}
	default:
		return arena.Errorf(arena.EINVALID, "unknown action %q (want BET, SELL or HOLD)", a.Kind)
	}
	return nil
}

func (b Bet) validate() error {
	switch {
	case b.MarketID <= 0:
		return arena.Errorf(arena.EINVALID, "market_id %d is not a market id", b.MarketID)
	case strings.TrimSpace(b.Side) == "":
		return arena.Errorf(arena.EINVALID, "missing side")
	case b.Amount < MinBet:
		return arena.Errorf(arena.EINVALID, "amount %s is below the minimum bet %s", b.Amount, MinBet)
	}
	return nil
}

func (s Sell) validate() error {
	switch {
	case s.PositionID == 0:
		return arena.Errorf(arena.EINVALID, "missing position_id")
	case math.IsNaN(s.Percentage) || s.Percentage < 1 || s.Percentage > 100:
		return arena.Errorf(arena.EINVALID, "percentage %v outside 1–100", s.Percentage)
	}
	return nil
}

// String summarizes the action for logs.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	for _, x := range a.Bets {
		fmt.Fprintf(&b, " [%d %s %s]", x.MarketID, x.Side, x.Amount)
	}
	for _, x := range a.Sells {
		fmt.Fprintf(&b, " [pos %d %g%%]", x.PositionID, x.Percentage)
	}
	return b.String()
}
