package agent

import (
	"fmt"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// Validate checks a parsed action against the betting rules (minimum $50, at most 25% of cash, one position per
// market and side, sells of 1–100%) and the
// agent's snapshot, and returns it with sides canonicalized ("yes" → "YES",
// an outcome's exact name). Every problem is reported, in one
// *arena.Error (EINVALID, code invalid_action) whose message is written to
// be sent back to the model:
//
//   - HOLD carries no bets or sells;
//   - a bet names a market of the list, open, with a side that exists
//     (YES/NO for binary markets, an outcome name for multi-outcome ones)
//     and an executable price (strictly between 0 and 1);
//   - each bet is at least $50 and at most 25% of the cash left when it
//     executes (bets run in order, so earlier bets of the action lower the
//     cap of later ones), and the bets together fit in the cash;
//   - no two bets of one action share a market and side (a bet on a side
//     already held adds to that position, which the rules allow);
//   - a sell names an open position of the snapshot that can be sold this
//     week (PositionView.Tradable: its market open, unresolved and priced,
//     as execution requires), at most once, with a percentage from 1 to 100.
//
// Validate does not execute anything: the ledger re-checks at execution.
func Validate(a trading.Action, s *trading.Snapshot) (trading.Action, error) {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	out := trading.Action{Kind: a.Kind, Reasoning: a.Reasoning}

	switch a.Kind {
	case trading.ActionHold:
		if len(a.Bets) > 0 || len(a.Sells) > 0 {
			add("a HOLD must not carry bets or sells")
		}
	case trading.ActionBet:
		if !items(add, "BET", "bet", len(a.Bets), "sells", len(a.Sells)) {
			break
		}
		markets := make(map[int64]*trading.MarketView, len(s.Markets))
		for i := range s.Markets {
			markets[s.Markets[i].ID] = &s.Markets[i]
		}
		cash := s.Cash
		seen := map[string]int{}
		for i, b := range a.Bets {
			m := markets[b.MarketID]
			if m == nil {
				add("bets[%d]: market_id %d is not in the list of markets", i, b.MarketID)
				out.Bets = append(out.Bets, b)
				continue
			}
			if m.Status != "" && m.Status != arena.StatusOpen {
				add("bets[%d]: market %d is %s and takes no bets", i, b.MarketID, m.Status)
			}
			side, err := m.Side(b.Side)
			if err != nil {
				add("bets[%d]: %s", i, arena.ErrorMessage(err))
				side = b.Side
			} else if p, ok := m.SidePrice(side); !ok {
				add("bets[%d]: market %d has no price for %s; choose another market", i, b.MarketID, side)
			} else if p <= 0 || p >= arena.OnePPM {
				add("bets[%d]: market %d's %s price %s cannot be traded (needs to be strictly between 0%% and 100%%)", i, b.MarketID, side, pctText(p))
			}
			key := fmt.Sprintf("%d\x00%s", b.MarketID, side)
			if j, dup := seen[key]; dup {
				add("bets[%d]: market %d side %s is already bet in bets[%d]; combine them into one bet", i, b.MarketID, side, j)
			}
			seen[key] = i
			switch {
			case b.Amount < trading.MinBet:
				add("bets[%d]: amount %s is below the minimum bet of %s", i, b.Amount, trading.MinBet)
			case b.Amount > cash:
				add("bets[%d]: amount %s exceeds the cash left (%s)", i, b.Amount, cash)
			case b.Amount*trading.MaxBetDivisor > cash:
				if cash == s.Cash {
					add("bets[%d]: amount %s exceeds 25%% of your cash (max %s)", i, b.Amount, cash/trading.MaxBetDivisor)
				} else {
					add("bets[%d]: amount %s exceeds 25%% of the cash left after the earlier bets of this action (%s, so max %s)",
						i, b.Amount, cash, cash/trading.MaxBetDivisor)
				}
			}
			if b.Amount > 0 && b.Amount <= cash {
				cash -= b.Amount
			}
			out.Bets = append(out.Bets, trading.Bet{MarketID: b.MarketID, Side: side, Amount: b.Amount})
		}
	case trading.ActionSell:
		if !items(add, "SELL", "sell", len(a.Sells), "bets", len(a.Bets)) {
			break
		}
		held := make(map[int64]*trading.PositionView, len(s.Positions))
		for i := range s.Positions {
			held[s.Positions[i].ID] = &s.Positions[i]
		}
		seen := map[int64]int{}
		for i, x := range a.Sells {
			switch p := held[x.PositionID]; {
			case p == nil:
				add("sells[%d]: position_id %d is not one of your open positions", i, x.PositionID)
			case !p.Tradable:
				add("sells[%d]: position %d cannot be sold this week (its market %d is closed, resolved or has no current price); it settles at resolution", i, x.PositionID, p.MarketID)
			}
			if j, dup := seen[x.PositionID]; dup {
				add("sells[%d]: position %d is already sold in sells[%d]", i, x.PositionID, j)
			}
			seen[x.PositionID] = i
			if x.Percentage != x.Percentage || x.Percentage < 1 || x.Percentage > 100 {
				add("sells[%d]: percentage %v must be from 1 to 100 (100 sells the whole position)", i, x.Percentage)
			}
			out.Sells = append(out.Sells, x)
		}
	default:
		add(`unknown action %q: use "BET", "SELL" or "HOLD"`, a.Kind)
	}
	if len(probs) > 0 {
		return a, arena.Rejectf(arena.EINVALID, CodeInvalidAction, "invalid action: %s", strings.Join(probs, "; "))
	}
	return out, nil
}

func pctText(p trading.PPM) string {
	s := fmt.Sprintf("%.2f", p.Float()*100)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// items checks the shape of a BET or SELL: n items of its own kind (at
// least one, at most trading.MaxItems) and none of the other kind (a
// decision either bets or sells). It reports false when there are too many
// items to check one by one.
func items(add func(string, ...any), action, item string, n int, others string, m int) bool {
	if m > 0 {
		add("a %s must not carry %s; a decision either bets (BET) or sells (SELL)", action, others)
	}
	if n == 0 {
		add("a %s needs at least one %s", action, item)
	}
	if n > trading.MaxItems {
		add("%d %ss in one action (max %d)", n, item, trading.MaxItems)
		return false
	}
	return true
}
