package rounds

import "github.com/forecast-arena/arena"

// DefaultRules are the default rules over Polymarket alone: the tests'
// markets are Polymarket's.
func DefaultRules() Rules { return DefaultRulesFor([]string{arena.SourcePolymarket}) }
