package view

import "github.com/forecast-arena/arena/stats"

// HumanBoardPageJSON is the human board page: the board (human rows have
// "human": true) and the questions it scores.
type HumanBoardPageJSON struct {
	Rows      []stats.BoardRow    `json:"rows"`
	Questions []HumanQuestionJSON `json:"questions"`
}

// HumanQuestionJSON is one question of the board with its scored items: a
// market question is one item, a dataset question one per resolution
// date, in date order.
type HumanQuestionJSON struct {
	// Question is the question's first sentence (its items' pages have
	// the whole text); for a dataset question of several dates it says
	// "the resolution date" where each item names its own.
	Question string          `json:"question"`
	Kind     string          `json:"kind"`
	Items    []HumanItemJSON `json:"items"`
}

// HumanItemJSON is one scored item of the board.
type HumanItemJSON struct {
	Item           string  `json:"item"`            // the imported item's source id
	ResolutionDate string  `json:"resolution_date"` // YYYY-MM-DD of a dataset item, "" for a market question
	Question       string  `json:"question"`        // the whole text, as imported
	Outcome        string  `json:"outcome"`
	Median         float64 `json:"median"` // the superforecasters' (or else the public's) median
	Humans         int     `json:"humans"`
}

// HumanItemPageJSON is one item of the board: the question and outcome,
// each human group's median and spread with a few reasoning excerpts, and
// each backtested model's forecast.
type HumanItemPageJSON struct {
	Item string `json:"item"`
	// Brief is the page's heading: the question's first sentence, cut
	// to 120 characters; Question is the whole text.
	Brief          string `json:"brief"`
	Question       string `json:"question"`
	Kind           string `json:"kind"`
	ResolutionDate string `json:"resolution_date"` // YYYY-MM-DD of a dataset item, "" for a market question
	Outcome        string `json:"outcome"`         // Yes, No, or "" while unresolved
	// OtherDates are the question's items on its other resolution dates,
	// in date order.
	OtherDates []HumanDateJSON  `json:"other_dates"`
	Groups     []HumanGroupJSON `json:"groups"`
	Models     []ModelItemJSON  `json:"models"`
}

// HumanDateJSON is one resolution date of a dataset question and its item.
type HumanDateJSON struct {
	Item           string `json:"item"`
	ResolutionDate string `json:"resolution_date"`
}

// HumanGroupJSON is one human group's forecasts of the item.
type HumanGroupJSON struct {
	Name     string             `json:"name"`
	Median   float64            `json:"median"`
	Min      float64            `json:"min"`
	Max      float64            `json:"max"`
	N        int                `json:"n"`
	Excerpts []HumanExcerptJSON `json:"excerpts"`
}

// HumanExcerptJSON is the start of one human's reasoning.
type HumanExcerptJSON struct {
	UserID    string  `json:"user_id"`
	Forecast  float64 `json:"forecast"`
	Reasoning string  `json:"reasoning"`
}

// ModelItemJSON is one model's backtest forecast of the item.
type ModelItemJSON struct {
	Agent    string  `json:"agent"`
	Round    string  `json:"round"`
	Forecast float64 `json:"forecast"`
}
