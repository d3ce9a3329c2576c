package agent

import (
	"context"
	"time"

	arena "github.com/forecast-arena/arena"
)

// RetrieverSearch answers searchWeb with an arena.Retriever (wrap it in a
// retrieve.Cache for the durable cache: the query and the as-of time make
// the cache key). The AsOf guard decides which sources are shown: those
// published at or before AsOf, and undated ones only when Live (then AsOf
// is the present, so nothing undated can be from later). A backtest leaves
// Live unset.
type RetrieverSearch struct {
	Retriever arena.Retriever
	AsOf      time.Time
	Live      bool
}

// SearchSource is one result of searchWeb.
type SearchSource struct {
	Title      string     `json:"title"`
	URL        string     `json:"url"`
	Published  *time.Time `json:"published"`
	Highlights []string   `json:"highlights"`
}

// Search implements Searcher.
func (s RetrieverSearch) Search(ctx context.Context, query string) (any, error) {
	g := AsOf{Time: s.AsOf.UTC(), Live: s.Live}
	pk, err := s.Retriever.Retrieve(ctx, arena.EvidenceQuery{QuestionID: "search@" + g.Time.Format(time.RFC3339) + ":" + query,
		Question: query, Cutoff: g.Time})
	if err != nil {
		return nil, err
	}
	out := []SearchSource{}
	for _, src := range pk.Sources {
		if !g.Source(src.Published) {
			continue
		}
		out = append(out, SearchSource{Title: src.Title, URL: src.URL, Published: src.Published, Highlights: src.Highlights})
	}
	return map[string]any{"query": query, "sources": out}, nil
}
