// Package agent holds the trading-track LLM agent: the prompt built from a
// frozen snapshot, the tolerant parser of model output and the
// rule validator, and the decide loop that retries invalid output and
// falls back to HOLD, recording every attempt.
package agent

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// Prompt is the pair of prompts an agent is shown; both are stored.
type Prompt struct {
	System string
	User   string
}

// BuildPrompt renders the decision prompts for a snapshot. The output depends on
// the snapshot alone, so every agent of a week is shown the same market
// list in the same words.
func BuildPrompt(s *trading.Snapshot) Prompt {
	return Prompt{System: SystemPrompt(), User: UserPrompt(s)}
}

// SystemPrompt states the rules of the game and the answer format.
func SystemPrompt() string {
	return fmt.Sprintf(systemTemplate, trading.InitialCash, trading.MinBet, 100/trading.MaxBetDivisor)
}

const systemTemplate = `You are a trader in Forecast Arena, a benchmark in which AI models paper-trade real prediction markets.

You manage a portfolio that started with %[1]s of virtual money. There are no refills. Once a week you see your cash, your open positions and the most traded open markets, with prices frozen at the same moment for every trader, and you make one decision: BET, SELL or HOLD. You get no news, no price history and no information about other traders.

How the markets work
- A market's price is the probability the crowd assigns to an outcome. A share of an outcome pays $1 if that outcome happens and $0 otherwise.
- Binary markets have the sides YES and NO. A YES share costs the YES price p; a NO share costs 1 - p.
- Multi-outcome markets have named outcomes, each with its own price. To bet on one, use its exact name as the side.
- A bet of amount A at price q buys A / q shares. Open positions are valued at the current price of their side.

Rules
- Minimum bet: %[2]s. Maximum single bet: %[3]d%% of your cash at the moment the bet executes. Several bets in one decision execute in the order given, each one lowering your cash.
- One position per market and side: a bet on a side you already hold adds to that position. Do not bet the same market and side twice in one decision.
- A sale sells a percentage (1 to 100) of one open position at its current price; 100 closes it. A position marked "cannot be sold" (its market is closed, resolved or unpriced) stays until it settles at resolution.
- A decision either places bets (BET) or sells positions (SELL), never both. HOLD changes nothing.
- Use only market IDs and position IDs from the lists you are given. Amounts are in US dollars.
- The size of a bet states your confidence: a bet of %[3]d%% of your cash means you are certain. Bets are scored by their profit and by the Brier score of that implied confidence once markets resolve.

Answer format
Reply with exactly one JSON object, and nothing after it. One of:
{"action": "BET", "bets": [{"market_id": 123, "side": "YES", "amount": 500}], "reasoning": "why these bets"}
{"action": "SELL", "sells": [{"position_id": 45, "percentage": 100}], "reasoning": "why these sales"}
{"action": "HOLD", "reasoning": "why no change"}
"bets" and "sells" may list several items. For a multi-outcome market, "side" is the outcome's name.
An answer that cannot be used is sent back to you with the error to correct; if it still fails, your decision this week is HOLD.`

// UserPrompt lists every field the decision prompt must show: cash, open positions (ID, market,
// side, shares, average entry price, side-correct current price, marked
// value, unrealized P/L) and the markets (ID, question, category, type,
// prices, volume, close date).
func UserPrompt(s *trading.Snapshot) string {
	var b strings.Builder
	date := s.TakenAt
	if date.IsZero() {
		date = s.Week
	}
	if !date.IsZero() {
		fmt.Fprintf(&b, "Decision date: %s UTC\n\n", date.UTC().Format("2006-01-02 15:04"))
	}

	b.WriteString("PORTFOLIO\n")
	fmt.Fprintf(&b, "Cash: %s\n", cents(s.Cash))
	fmt.Fprintf(&b, "Open positions value: %s\n", cents(s.PositionsValue))
	total := s.Total
	if total == 0 {
		total = s.Cash + s.PositionsValue
	}
	initial := s.InitialCash
	if initial == 0 {
		initial = trading.InitialCash
	}
	fmt.Fprintf(&b, "Total value: %s (P/L %s, %s since the start with %s)\n", cents(total), signed(total-initial),
		signedPct(trading.ReturnPct(total, initial)), cents(initial))
	maxBet := s.MaxBet
	if maxBet == 0 {
		maxBet = s.Cash / trading.MaxBetDivisor
	}
	if maxBet < trading.MinBet {
		fmt.Fprintf(&b, "Bets this week: none possible (25%% of cash is %s, below the minimum bet of %s)\n", floorCents(maxBet), trading.MinBet)
	} else {
		fmt.Fprintf(&b, "Bets this week: from %s to %s each (25%% of cash)\n", trading.MinBet, floorCents(maxBet))
	}

	fmt.Fprintf(&b, "\nOPEN POSITIONS (%d)\n", len(s.Positions))
	if len(s.Positions) == 0 {
		b.WriteString("None.\n")
	}
	for _, p := range s.Positions {
		q := p.Question
		if q == "" {
			q = "(market no longer listed)"
		}
		fmt.Fprintf(&b, "- Position %d: market %d %q\n", p.ID, p.MarketID, oneLine(q))
		price := dollarsPerShare(p.Price)
		if p.PriceStale {
			price += " (last known; no current price)"
		}
		sellable := ""
		if !p.Tradable {
			sellable = " (cannot be sold; settles at resolution)"
		}
		fmt.Fprintf(&b, "  side %s | %s shares | avg entry %s | current %s | value %s | unrealized P/L %s%s\n",
			p.Side, sharesText(p.Shares), dollarsPerShare(p.AvgEntry), price, cents(p.Value), signed(p.Unrealized), sellable)
	}

	fmt.Fprintf(&b, "\nMARKETS (%d, by volume)\n", len(s.Markets))
	if len(s.Markets) == 0 {
		b.WriteString("None this week.\n")
	}
	for i := range s.Markets {
		m := &s.Markets[i]
		fmt.Fprintf(&b, "- Market %d: %s\n", m.ID, oneLine(m.Question))
		cat := m.Category
		if cat == "" {
			cat = "uncategorized"
		}
		typ := "binary (YES/NO)"
		if m.Type != arena.Binary {
			typ = "multi-outcome (bet on an outcome by name)"
		}
		closes := "unknown"
		if !m.CloseTime.IsZero() {
			closes = m.CloseTime.UTC().Format("2006-01-02")
		}
		fmt.Fprintf(&b, "  %s | %s | prices: %s | volume %s | closes %s\n",
			oneLine(cat), typ, m.PriceLine(), volumeText(m.Volume), closes)
	}
	b.WriteString("\nDecide now: reply with one JSON object (BET, SELL or HOLD) as the instructions describe.\n")
	return b.String()
}

// oneLine collapses newlines so every listed item stays on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// signed shows a gain or loss to the cent with its sign.
func signed(m trading.Micros) string {
	if m > 0 {
		return "+" + cents(m)
	}
	return cents(m)
}

// cents shows an amount rounded to the nearest cent (half away from zero);
// the ledger stays exact, the prompt stays readable.
func cents(m trading.Micros) string {
	const c = trading.Micros(10_000)
	if m >= 0 {
		return ((m + c/2) / c * c).String()
	}
	return (-((-m + c/2) / c * c)).String()
}

// floorCents rounds down to the cent, so a limit shown is never exceeded
// by betting it exactly.
func floorCents(m trading.Micros) string {
	const c = trading.Micros(10_000)
	return (m / c * c).String()
}

func signedPct(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(p, 'f', 2, 64)
	if p >= 0 {
		s = "+" + s
	}
	return s + "%"
}

// dollarsPerShare shows a price as dollars per share with up to 4 decimals.
func dollarsPerShare(p trading.PPM) string {
	s := strconv.FormatFloat(p.Float(), 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 < 2 {
		s += "0"
	}
	return "$" + s
}

func sharesText(s trading.Shares) string {
	return strconv.FormatFloat(s.Float(), 'f', 2, 64)
}

// volumeText rounds a traded volume to whole dollars with separators.
func volumeText(v float64) string {
	if math.IsNaN(v) || v < 0 || v > 1e15 {
		return "unknown"
	}
	m := trading.Micros(math.Round(v)) * arena.Dollar
	s := m.String()
	return strings.TrimSuffix(s, ".00")
}
