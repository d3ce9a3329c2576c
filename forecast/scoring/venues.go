package scoring

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// VenueBoard sets the leaderboards of several venues side by side: each
// agent's headline score on each venue's questions, and a combined score
// that weighs every venue equally, whatever its number of questions (as
// ForecastBench averages its dataset and market questions): the mean of
// the venue scores.
type VenueBoard struct {
	Venues []string `json:"venues"`
	// Rows are the agents with a ranked score on every venue, best
	// combined score first (rank 1…), then the others (rank 0) by name.
	Rows []VenueRow `json:"rows"`
}

// VenueRow is one agent of a VenueBoard.
type VenueRow struct {
	Rank     int    `json:"rank"`
	Agent    string `json:"agent"`
	Name     string `json:"name"`
	Baseline bool   `json:"baseline"`
	// Scores holds the agent's headline score (Row.Score) on each venue's
	// board, null where it has none.
	Scores map[string]*float64 `json:"scores"`
	// Preliminary lists the venues where the agent is preliminary (its
	// score there is shown, not ranked), in name order.
	Preliminary []string `json:"preliminary"`
	// Combined is the mean of Scores over every venue; null unless the
	// agent is ranked on each.
	Combined *float64 `json:"combined"`
}

// CombineVenues sets the boards of each venue side by side (see
// VenueBoard). An agent preliminary or unscored on a venue has no
// combined score: a mean over the venues it happens to cover would weigh
// them unequally again.
func CombineVenues(boards map[string]Board) VenueBoard {
	vb := VenueBoard{Venues: slices.Sorted(maps.Keys(boards)), Rows: []VenueRow{}}
	at := map[string]int{}
	for _, v := range vb.Venues {
		for _, r := range boards[v].Rows {
			i, ok := at[r.Agent]
			if !ok {
				i, at[r.Agent] = len(vb.Rows), len(vb.Rows)
				vb.Rows = append(vb.Rows, VenueRow{Agent: r.Agent, Name: r.Name, Baseline: r.Baseline, Scores: map[string]*float64{},
					Preliminary: []string{}})
				for _, w := range vb.Venues {
					vb.Rows[i].Scores[w] = nil
				}
			}
			if r.Score != nil {
				s := *r.Score
				vb.Rows[i].Scores[v] = &s
			}
			if r.Preliminary {
				vb.Rows[i].Preliminary = append(vb.Rows[i].Preliminary, v)
			}
		}
	}
	for i := range vb.Rows {
		sum, each := 0.0, len(vb.Rows[i].Preliminary) == 0
		for _, v := range vb.Venues {
			if s := vb.Rows[i].Scores[v]; s != nil {
				sum += *s
			} else {
				each = false
			}
		}
		if each && len(vb.Venues) > 0 {
			c := sum / float64(len(vb.Venues))
			vb.Rows[i].Combined = &c
		}
	}
	slices.SortFunc(vb.Rows, func(a, b VenueRow) int {
		switch {
		case (a.Combined == nil) != (b.Combined == nil):
			if a.Combined == nil {
				return 1
			}
			return -1
		case a.Combined != nil && *a.Combined != *b.Combined:
			return cmp.Compare(*b.Combined, *a.Combined)
		}
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Agent, b.Agent))
	})
	for i := range vb.Rows {
		if vb.Rows[i].Combined != nil {
			vb.Rows[i].Rank = i + 1
		}
	}
	return vb
}
