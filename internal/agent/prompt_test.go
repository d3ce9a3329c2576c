package agent

import (
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/golden"
	"github.com/forecast-arena/arena/internal/trading"
)

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name+".golden", []byte(got))
}

func TestPromptGolden(t *testing.T) {
	p := BuildPrompt(testSnapshot())
	checkGolden(t, "system_prompt", p.System)
	checkGolden(t, "user_prompt", p.User)

	empty := &trading.Snapshot{Cash: 120 * usd, InitialCash: trading.InitialCash}
	checkGolden(t, "user_prompt_empty", UserPrompt(empty))
}

func TestMoneyDisplay(t *testing.T) {
	cases := []struct {
		m            trading.Micros
		cents, floor string
	}{
		{1_234_567_891, "$1,234.57", "$1,234.56"},
		{5_000, "$0.01", "$0.00"},
		{4_999, "$0.00", "$0.00"},
		{-1_005_000, "-$1.01", "-$1.00"},
		{2_000 * usd, "$2,000.00", "$2,000.00"},
	}
	for _, tc := range cases {
		if got := cents(tc.m); got != tc.cents {
			t.Errorf("cents(%d) = %s, want %s", tc.m, got, tc.cents)
		}
		if got := floorCents(tc.m); got != tc.floor {
			t.Errorf("floorCents(%d) = %s, want %s", tc.m, got, tc.floor)
		}
	}
}

// TestPromptHasEveryT2Field checks every field the decision prompt must show, independently
// of the golden file's exact wording.
func TestPromptHasEveryT2Field(t *testing.T) {
	s := testSnapshot()
	u := UserPrompt(s)
	for _, want := range []string{
		"Cash: $8,000.00",
		// Position: ID, market, side, shares, avg entry, side-correct price, value, unrealized P/L.
		"Position 41: market 101 \"Will the Fed cut rates in March 2026?\"",
		"side NO | 1724.14 shares | avg entry $0.58 | current $0.65 | value $1,120.69 | unrealized P/L +$120.69",
		"current $0.3442 (last known; no current price)",
		"\"Will it snow in London on Christmas 2025?\"", // newlines collapsed
		// Market: ID, question, category, type, prices, volume, close date.
		"Market 101: Will the Fed cut rates in March 2026?",
		"Economics | binary (YES/NO) | prices: 35% YES / 65% NO | volume $12,345,679 | closes 2026-03-18",
		"Politics | multi-outcome (bet on an outcome by name) | prices: Vance 28%, Newsom 19%, Other 53% | volume $9,876,543 | closes 2026-11-03",
		"uncategorized | binary (YES/NO) | prices: 12.55% YES / 87.45% NO",
		"prices: no price",
		"Bets this week: from $50.00 to $2,000.00 each",
		"Decision date: 2026-03-01 00:05 UTC",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("user prompt lacks %q", want)
		}
	}
	sys := SystemPrompt()
	for _, want := range []string{"$10,000.00", "Minimum bet: $50.00", "25% of your cash", `"action": "BET"`, `"action": "SELL"`, `"action": "HOLD"`, "1 to 100"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	// The prompt's own examples parse.
	for _, line := range strings.Split(sys, "\n") {
		if strings.HasPrefix(line, `{"action"`) {
			if _, err := ParseAction(line); err != nil {
				t.Errorf("example %s does not parse: %v", line, err)
			}
		}
	}
}
