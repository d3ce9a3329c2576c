// Package forecastbench imports ForecastBench question sets and resolution
// sets as arena markets with Source "forecastbench".
//
// Identity. ForecastBench asks a question afresh in every question set
// (each with its own freeze value), and its leaderboards count a market
// question once per question set, so the forecast due date is part of
// every SourceID: "<due>:<origin>:<id>" for a market-source question and
// "<due>:<origin>:<id>:<resolution date>" for each (dataset question,
// resolution date) pair, the scoreable items. EventID "<origin>:<id>"
// groups the copies of one upstream question.
//
// Mapping. Origin is the ForecastBench source; Kind is "market" for
// polymarket, manifold, metaculus and infer and "dataset" for acled,
// dbnomics, fred, wikipedia and yfinance; every item is binary Yes/No.
// Market questions keep their freeze value as FreezeValue, as a
// PriceFreeze point at the freeze time, and as the current price. Dataset
// questions get their {forecast_due_date}/{resolution_date} placeholders
// filled in, ResolutionDate and CloseTime set to the resolution date, and
// no FreezeValue (their freeze value is a series value such as "5.13" or
// "No", not a probability).
//
// Resolutions. resolved=true with resolved_to 0 or 1 resolves No or Yes
// on resolution_date; resolved=true with a fraction resolves VOID (not
// scored, never rounded); resolved=false on a market question is no
// outcome: resolved_to is the market's latest value, stored as the
// current price and a PriceValue point. Combination rows (list-valued id)
// are skipped and counted. Unresolved items are "closed" once their close
// time (or resolution date) is past the import time, else "open".
//
// Input policy. The parsers stream and are strict about the types of the
// fields they use; "N/A" and "" mean missing where ForecastBench writes
// them; a market freeze value must be a probability string ("nan" counts
// as missing); times are RFC 3339 with an offset or bare dates; bare NaN
// is not JSON and is rejected with its position. Unknown fields are
// ignored; unknown sources are rejected.
//
// Imports are idempotent, all-or-nothing (one SaveMarkets call after
// everything is parsed and validated), and merge with what the store holds
// so that importing resolution sets alone never erases question text that
// an earlier question set import stored, and vice versa.
package forecastbench
