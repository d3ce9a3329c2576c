// Package scoring is the forecast track's scoring: exact integer round
// scores (ScoreRound, ScoreFrozen) with the random baseline, the scoring
// method (Method) and the leaderboard analysis (AnalyzeForecasts, Board)
// that the arena shows and an export's verifier recomputes from the
// exported scores. It is pure: it reads nothing and keeps nothing.
//
// It is apart from package forecast, the protocol, because it needs
// package stats and its statistics dependencies, which a client that only
// commits and reveals (package participant) should not have to build.
package scoring
