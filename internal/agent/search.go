package agent

import (
	"context"
	"time"

	arena "github.com/forecast-arena/arena"
)

// RetrieverSearch answers searchWeb with an arena.Retriever (wrap it in a
// retrieve.Cache for the durable cache: the query and the as-of time make
// the cache key). Only sources published at or before AsOf are shown;
// undated sources are shown only when Live (then AsOf is the present, so
// nothing undated can be from later). A backtest leaves Live unset.
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
	asOf := s.AsOf.UTC()
	pk, err := s.Retriever.Retrieve(ctx, arena.EvidenceQuery{QuestionID: "search@" + asOf.Format(time.RFC3339) + ":" + query,
		Question: query, Cutoff: asOf})
	if err != nil {
		return nil, err
	}
	out := []SearchSource{}
	for _, src := range pk.Sources {
		if src.Published == nil && !s.Live || src.Published != nil && src.Published.After(asOf) {
			continue
		}
		out = append(out, SearchSource{Title: src.Title, URL: src.URL, Published: src.Published, Highlights: src.Highlights})
	}
	return map[string]any{"query": query, "sources": out}, nil
}
