package arena_test

import (
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

func TestWeekStart(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"}, // Sunday midnight is its own week
		{"2026-03-01T00:05:00Z", "2026-03-01T00:00:00Z"},
		{"2026-02-28T23:59:59Z", "2026-02-22T00:00:00Z"}, // Saturday night belongs to the week before
		{"2026-03-04T12:00:00+09:00", "2026-03-01T00:00:00Z"},
		{"2026-03-01T08:00:00+09:00", "2026-02-22T00:00:00Z"}, // Sunday in Tokyo, Saturday in UTC
		{"2027-01-01T00:00:00Z", "2026-12-27T00:00:00Z"},
	} {
		in, _ := time.Parse(time.RFC3339, c.in)
		if got := arena.WeekStart(in).Format(time.RFC3339); got != c.want {
			t.Errorf("WeekStart(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCohortValidate(t *testing.T) {
	sun := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	lineup := []arena.LineupEntry{{AgentID: "a"}, {AgentID: "b"}}
	for _, c := range []struct {
		name string
		c    arena.Cohort
		ok   bool
	}{
		{"valid", arena.Cohort{WeekStart: sun, InitialCash: arena.Dollar, Lineup: lineup}, true},
		{"valid in another zone", arena.Cohort{WeekStart: sun.In(time.FixedZone("JST", 9*3600)), InitialCash: arena.Dollar, Lineup: lineup}, true},
		{"Monday", arena.Cohort{WeekStart: sun.AddDate(0, 0, 1), InitialCash: arena.Dollar, Lineup: lineup}, false},
		{"a second past", arena.Cohort{WeekStart: sun.Add(time.Second), InitialCash: arena.Dollar, Lineup: lineup}, false},
		{"a nanosecond past", arena.Cohort{WeekStart: sun.Add(1), InitialCash: arena.Dollar, Lineup: lineup}, false},
		{"no cash", arena.Cohort{WeekStart: sun, Lineup: lineup}, false},
		{"negative cash", arena.Cohort{WeekStart: sun, InitialCash: -1, Lineup: lineup}, false},
		{"empty lineup", arena.Cohort{WeekStart: sun, InitialCash: arena.Dollar}, false},
		{"duplicate agent", arena.Cohort{WeekStart: sun, InitialCash: arena.Dollar, Lineup: []arena.LineupEntry{{AgentID: "a"}, {AgentID: "a"}}}, false},
		{"unnamed agent", arena.Cohort{WeekStart: sun, InitialCash: arena.Dollar, Lineup: []arena.LineupEntry{{AgentID: ""}}}, false},
	} {
		err := c.c.Validate()
		if (err == nil) != c.ok || (err != nil && arena.ErrorKind(err) != arena.EINVALID) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
