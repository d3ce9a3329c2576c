package trading

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// MarketView is a market as the trading track shows and executes it: the
// fields a decision prompt shows and prices frozen as exact PPM.
type MarketView struct {
	ID        int64              `json:"id"`
	Source    string             `json:"source"`
	SourceID  string             `json:"source_id"`
	Question  string             `json:"question"`
	Category  string             `json:"category,omitempty"`
	Type      arena.MarketType   `json:"type"`
	Outcomes  []string           `json:"outcomes"`
	Prices    map[string]PPM     `json:"prices,omitempty"` // outcome name -> price; binary markets use "Yes"/"No"
	Volume    float64            `json:"volume"`
	CloseTime time.Time          `json:"close_time"`
	Status    arena.MarketStatus `json:"status"`
	// Resolution is the winner or arena.Void once resolved, "" otherwise.
	Resolution string `json:"resolution,omitempty"`
}

// ViewOf freezes a market: each usable price is rounded to the nearest PPM;
// unusable ones (NaN, outside [0,1]) are dropped.
func ViewOf(m *arena.Market) MarketView {
	v := MarketView{ID: m.ID, Source: m.Source, SourceID: m.SourceID, Question: m.Question, Category: m.Category,
		Type: m.Type, Outcomes: append([]string(nil), m.Outcomes...), Volume: m.Volume, CloseTime: m.CloseTime,
		Status: m.Status, Resolution: m.Resolution}
	for o, p := range m.Prices {
		if q, ok := PriceFromFloat(p); ok {
			if v.Prices == nil {
				v.Prices = map[string]PPM{}
			}
			v.Prices[o] = q
		}
	}
	return v
}

// Side canonicalizes an agent's side for this market: "YES"/"NO" (any case)
// for binary markets, the outcome's exact name (matched exactly, else
// case-insensitively) for multi-outcome markets.
func (m *MarketView) Side(side string) (string, error) {
	s := strings.TrimSpace(side)
	if m.Type == arena.Binary {
		switch strings.ToUpper(s) {
		case SideYes:
			return SideYes, nil
		case SideNo:
			return SideNo, nil
		}
		return "", reject(CodeBadSide, "market %d is binary: side %q must be YES or NO", m.ID, side)
	}
	for _, o := range m.Outcomes {
		if o == s {
			return o, nil
		}
	}
	found := ""
	for _, o := range m.Outcomes {
		if strings.EqualFold(o, s) {
			if found != "" {
				return "", reject(CodeBadSide, "market %d: side %q matches several outcomes", m.ID, side)
			}
			found = o
		}
	}
	if found == "" {
		return "", reject(CodeBadSide, "market %d has no outcome %q (outcomes: %s)", m.ID, side, strings.Join(m.Outcomes, ", "))
	}
	return found, nil
}

// yes returns the Yes price of a binary market, derived from No when only
// that is known.
func (m *MarketView) yes() (PPM, bool) {
	if p, ok := m.Prices[arena.Yes]; ok {
		return p, true
	}
	if p, ok := m.Prices[arena.No]; ok {
		return arena.OnePPM - p, true
	}
	return 0, false
}

// SidePrice is the side-correct price of a canonical side: p for YES,
// 1 − p for NO, the outcome's own price for a named outcome.
func (m *MarketView) SidePrice(side string) (PPM, bool) {
	if m.Type == arena.Binary {
		y, ok := m.yes()
		if !ok {
			return 0, false
		}
		switch side {
		case SideYes:
			return y, true
		case SideNo:
			return arena.OnePPM - y, true
		}
		return 0, false
	}
	p, ok := m.Prices[side]
	return p, ok
}

// Won reports whether a canonical side won the market's resolution, and
// whether the resolution has a winner at all (not void, not unresolved).
func Won(resolution string, typ arena.MarketType, side string) (won, decided bool) {
	if resolution == "" || resolution == arena.Void {
		return false, false
	}
	if typ == arena.Binary {
		switch side {
		case SideYes:
			return resolution == arena.Yes, true
		case SideNo:
			return resolution == arena.No, true
		}
	}
	return resolution == side, true
}

// PriceLine formats the market's prices as the prompt shows them:
// "53% YES / 47% NO" or "A 40%, B 35%, C 25%".
func (m *MarketView) PriceLine() string {
	if m.Type == arena.Binary {
		y, ok := m.yes()
		if !ok {
			return "no price"
		}
		return fmt.Sprintf("%s YES / %s NO", pct(y), pct(arena.OnePPM-y))
	}
	parts := make([]string, 0, len(m.Outcomes))
	for _, o := range m.Outcomes {
		if p, ok := m.Prices[o]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", o, pct(p)))
		} else {
			parts = append(parts, o+" (no price)")
		}
	}
	return strings.Join(parts, ", ")
}

func pct(p PPM) string {
	s := fmt.Sprintf("%.2f", p.Float()*100)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// Frame is the frozen market snapshot of one cohort's decision week:
// every agent, and every rerun, executes at these prices.
type Frame struct {
	CohortID int64     `json:"cohort_id"`
	Week     time.Time `json:"week"`
	TakenAt  time.Time `json:"taken_at"`
	// Markets are the open markets offered, by volume descending.
	Markets []MarketView `json:"markets"`
	// Held are markets of positions open when the frame was taken that are
	// not offered; they price the agents' positions.
	Held []MarketView `json:"held,omitempty"`

	once  sync.Once // the index is built on first use; frames are shared by concurrent agents
	index map[int64]*MarketView
}

// Market returns the frame's view of a market, offered or held.
func (f *Frame) Market(id int64) *MarketView {
	f.once.Do(func() {
		f.index = map[int64]*MarketView{}
		for i := range f.Held {
			f.index[f.Held[i].ID] = &f.Held[i]
		}
		for i := range f.Markets {
			f.index[f.Markets[i].ID] = &f.Markets[i]
		}
	})
	return f.index[id]
}

// Offered reports whether agents may bet on market id this week.
func (f *Frame) Offered(id int64) bool {
	for i := range f.Markets {
		if f.Markets[i].ID == id {
			return f.Markets[i].Status == arena.StatusOpen
		}
	}
	return false
}

// BuildFrame freezes the top markets (already ordered by volume) and the
// markets of held positions.
func BuildFrame(cohortID int64, week, at time.Time, top []*arena.Market, held []*arena.Market) *Frame {
	f := &Frame{CohortID: cohortID, Week: week.UTC(), TakenAt: at.UTC()}
	in := map[int64]bool{}
	for _, m := range top {
		f.Markets = append(f.Markets, ViewOf(m))
		in[m.ID] = true
	}
	for _, m := range held {
		if !in[m.ID] {
			f.Held = append(f.Held, ViewOf(m))
			in[m.ID] = true
		}
	}
	sort.Slice(f.Held, func(i, j int) bool { return f.Held[i].ID < f.Held[j].ID })
	return f
}

// EncodeFrame and DecodeFrame are the frame's stored form.
func EncodeFrame(f *Frame) ([]byte, error) { return json.Marshal(f) }

func DecodeFrame(b []byte) (*Frame, error) {
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trading: decode frame: %w", err)
	}
	return &f, nil
}
