package scoreio_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/forecast-arena/arena/stats"
	"github.com/forecast-arena/arena/stats/scoreio"
)

// Score a CSV of forecasts: each agent's Brier score and its Alpha against
// the market's benchmark price (positive beats the market), both means of
// per-round figures. Alice's first round: Brier (0.2² + 0.3²)/2 = 0.065
// against the market's (0.4² + 0.4²)/2 = 0.16, so Alpha 0.095.
func Example() {
	const forecasts = `agent,round,market,category,forecast,benchmark,outcome
alice,1,m1,politics,0.80,0.60,1
alice,1,m2,sports,0.30,0.40,0
alice,2,m3,politics,0.60,0.50,1
bob,1,m1,politics,0.50,0.60,1
bob,1,m2,sports,0.50,0.40,0
bob,2,m3,politics,0.40,0.50,1
`
	table, err := scoreio.Read(strings.NewReader(forecasts), "forecasts.csv")
	if err != nil {
		log.Fatal(err)
	}
	results, err := stats.Analyze(context.Background(), table, stats.Options{Bootstrap: -1}) // no bootstrap: a fixed, fast example
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%-6s n=%d rounds=%d brier=%.4f alpha=%+.4f\n", r.Agent, r.N, r.Rounds, r.Brier, r.Alpha.V)
	}
	// Output:
	// alice  n=3 rounds=2 brier=0.1125 alpha=+0.0925
	// bob    n=3 rounds=2 brier=0.3050 alpha=-0.1000
	// market n=3 rounds=2 brier=0.2050 alpha=+0.0000
}
