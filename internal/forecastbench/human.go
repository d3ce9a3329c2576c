package forecastbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
)

// HumanSet is one published file of individual human forecasts, e.g.
// 2024-07-21.ForecastBench.human_super_individual.json: the round's due
// date, the human question set it answers, and the forecasts.
type HumanSet struct {
	ForecastDueDate time.Time
	QuestionSet     string // e.g. "2024-07-21-human.json"
	Model           string // e.g. "Superforecaster forecasts"
	Group           string // arena.HumanSuper or arena.HumanPublic, from Model
	Forecasts       []arena.HumanForecast
	// Combination counts skipped forecasts of combination questions
	// (list-valued ids): their median is not a forecast of a question
	// the arena imports.
	Combination int
}

// humanGroup tells a file's forecaster group from its "model" field, the
// only place the published files name it ("Superforecaster forecasts",
// "Public forecasts").
func humanGroup(model string) (string, error) {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "superforecaster"):
		return arena.HumanSuper, nil
	case strings.Contains(m, "public"):
		return arena.HumanPublic, nil
	}
	return "", fmt.Errorf("model %q names neither superforecasters nor the public", model)
}

type rawHumanForecast struct {
	ID             json.RawMessage `json:"id"`
	Source         *string         `json:"source"`
	Forecast       *float64        `json:"forecast"`
	ResolutionDate *string         `json:"resolution_date"`
	UserID         json.RawMessage `json:"user_id"`
	Reasoning      *string         `json:"reasoning"`
	Searches       *string         `json:"searches"`
	ConsultedURLs  *string         `json:"consulted_urls"`
}

// ReadHumanSet parses a file of individual human forecasts. It is strict
// about the fields it uses: a known source; a forecast in [0,1]; a
// resolution date for a dataset question and none for a market question
// (which resolves with its market); a user id (string or number); one
// forecast per user, question and resolution date. Texts may be null.
func ReadHumanSet(r io.Reader) (*HumanSet, error) {
	set := &HumanSet{}
	p := newParser(r)
	var haveDue bool
	var looksLike kindHint
	seen := map[[4]string]bool{}
	err := p.object("forecasts", func(key string, raw json.RawMessage, at int64) error {
		var err error
		switch key {
		case "forecast_due_date":
			set.ForecastDueDate, err = p.date(raw, at, key)
			haveDue = true
		case "question_set", "question-set": // the first published files spell it with a hyphen
			set.QuestionSet, err = p.str(raw, at, key)
		case "model":
			set.Model, err = p.str(raw, at, key)
		case "questions":
			looksLike = "question set"
		case "resolutions":
			looksLike = "resolution set"
		}
		return err
	}, func(i int, raw json.RawMessage, at int64) error {
		f, combo, err := p.humanForecast(i, raw, at)
		if err != nil || combo {
			set.Combination += btoi(combo)
			return err
		}
		k := [4]string{f.UserID, f.Source, f.QuestionID, dateKey(f.ResolutionDate)}
		if seen[k] {
			return p.errAt(at, fmt.Sprintf("forecasts[%d] (id %s)", i, f.QuestionID), "user %s forecast this question and resolution date twice", f.UserID)
		}
		seen[k] = true
		set.Forecasts = append(set.Forecasts, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !haveDue {
		return nil, &ParseError{Msg: "missing forecast_due_date"}
	}
	if !p.sawArray {
		return nil, &ParseError{Msg: "missing forecasts" + looksLike.hint()}
	}
	if set.Group, err = humanGroup(set.Model); err != nil {
		return nil, &ParseError{Where: "model", Msg: err.Error()}
	}
	for i := range set.Forecasts {
		set.Forecasts[i].Due, set.Forecasts[i].Group = set.ForecastDueDate, set.Group
	}
	return set, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func dateKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

// humanForecast maps one element; combo reports a combination question's
// forecast, which is skipped.
func (p *parser) humanForecast(i int, raw json.RawMessage, at int64) (f arena.HumanForecast, combo bool, err error) {
	where := fmt.Sprintf("forecasts[%d]", i)
	if len(raw) == 0 || raw[0] != '{' {
		return f, false, p.errAt(at, where, "want an object")
	}
	// encoding/json keeps the last of a key given twice, and turns bytes
	// that are not UTF-8 into U+FFFD: both refused, so that what is stored
	// is what every reader of the file sees.
	if !utf8.Valid(raw) {
		return f, false, p.errAt(at, where+idOf(raw), "not valid UTF-8")
	}
	if err := arena.CheckUniqueKeys(raw); err != nil {
		return f, false, p.errAt(at, where+idOf(raw), "%v", err)
	}
	var r rawHumanForecast
	if err := json.Unmarshal(raw, &r); err != nil {
		return f, false, p.jsonErr(err, at, where+idOf(raw))
	}
	bad := func(field, format string, args ...any) (arena.HumanForecast, bool, error) {
		return arena.HumanForecast{}, false, p.errAt(at, where+"."+field, format, args...)
	}
	id := bytes.TrimSpace(r.ID)
	switch {
	case len(id) > 0 && id[0] == '[':
		var ids []string
		if json.Unmarshal(id, &ids) != nil || len(ids) < 2 {
			return bad("id", "a combination id must be a list of at least two strings")
		}
		return f, true, nil
	case len(id) > 0 && id[0] == '"':
		if json.Unmarshal(id, &f.QuestionID) != nil || f.QuestionID == "" {
			return bad("id", "missing")
		}
		if err := checkID(f.QuestionID); err != nil {
			return bad("id", "%v", err)
		}
	default:
		return bad("id", "want a string or a list of strings")
	}
	where = fmt.Sprintf("forecasts[%d] (id %s)", i, f.QuestionID)
	f.Source = deref(r.Source)
	kind, ok := KindOf(f.Source)
	if !ok {
		return bad("source", "unknown source %q", f.Source)
	}
	if r.Forecast == nil || math.IsNaN(*r.Forecast) || *r.Forecast < 0 || *r.Forecast > 1 {
		if r.Forecast == nil {
			return bad("forecast", "missing")
		}
		return bad("forecast", "%v outside [0,1]", *r.Forecast)
	}
	f.Forecast = *r.Forecast
	rd := na(deref(r.ResolutionDate))
	switch {
	case kind == arena.KindMarket && rd != "":
		return bad("resolution_date", "a market question resolves with its market; got %q", rd)
	case kind == arena.KindDataset && rd == "":
		return bad("resolution_date", "missing for a dataset question")
	case rd != "":
		if f.ResolutionDate, err = parseDate(rd); err != nil {
			return bad("resolution_date", "%v", err)
		}
	}
	uid := bytes.TrimSpace(r.UserID)
	switch {
	case len(uid) > 0 && uid[0] == '"':
		_ = json.Unmarshal(uid, &f.UserID)
	case len(uid) > 0 && (uid[0] == '-' || uid[0] >= '0' && uid[0] <= '9'):
		f.UserID = string(uid) // some files number their forecasters
	}
	if f.UserID == "" {
		return bad("user_id", "missing")
	}
	if err := checkID(f.UserID); err != nil {
		return bad("user_id", "%v", err)
	}
	f.Reasoning, f.Searches, f.ConsultedURLs = deref(r.Reasoning), deref(r.Searches), deref(r.ConsultedURLs)
	for _, x := range []struct{ field, s string }{{"reasoning", f.Reasoning}, {"searches", f.Searches}, {"consulted_urls", f.ConsultedURLs}} {
		if len(x.s) > MaxHumanTextBytes {
			return bad(x.field, "%s long, more than the %s a forecast's text may hold", arena.SizeText(int64(len(x.s))), arena.SizeText(MaxHumanTextBytes))
		}
	}
	return f, false, nil
}

// Bounds of a human forecast's fields: far above the published files'
// (ids of 10 to 66 characters, texts of at most 2.4 kB in the files of
// 2024), so that a hostile file cannot fill the store or the pages.
const (
	MaxHumanIDBytes   = 128
	MaxHumanTextBytes = 64 << 10
)

// checkID refuses an id (a forecaster's or a question's) that the pages
// could not show as it is: longer than MaxHumanIDBytes, or holding a space, a control character (NUL included) or a formatting
// one, such as the bidirectional controls (U+202E would show the rest of
// a row reversed) and the zero-width characters (two ids that look one).
func checkID(s string) error {
	if len(s) > MaxHumanIDBytes {
		return fmt.Errorf("%d bytes long, more than the %d an id may hold", len(s), MaxHumanIDBytes)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsGraphic(r) {
			return fmt.Errorf("%q holds %U, a space, control or formatting character", s, r)
		}
	}
	return nil
}

// HumanCount is what a human forecast file brought.
type HumanCount struct {
	Due         time.Time
	Group       string
	Forecasts   int
	Forecasters int
	Questions   int // distinct (source, id)
	Combination int // combination forecasts skipped
}

func (b *Batch) humanCounts() []HumanCount {
	var out []HumanCount
	for _, h := range b.Humans {
		users, qs := map[string]bool{}, map[string]bool{}
		for _, f := range h.Forecasts {
			users[f.UserID] = true
			qs[f.Source+":"+f.QuestionID] = true
		}
		out = append(out, HumanCount{Due: h.ForecastDueDate, Group: h.Group, Forecasts: len(h.Forecasts),
			Forecasters: len(users), Questions: len(qs), Combination: h.Combination})
	}
	return out
}
