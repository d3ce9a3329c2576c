package export_test

import (
	"encoding/json"
	"strings"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/tlog"
)

// nameCases are agents' names that pass for another agent's or a
// baseline's: look-alike letters of the same script, which no other rule
// on names refuses, so that only the names' uniqueness (arena.SameName)
// can catch them.
func nameCases() []tamper {
	// renamed gives an agent's row, and its leaderboard row, a name.
	renamed := func(e *edited, row int, name string) {
		e.set("agents", row, "name", name)
		e.set("leaderboard", e.find("leaderboard", func(get func(string) string) bool { return get("agent") == e.get("agents", row, "address") }), "name", name)
	}
	return []tamper{
		{name: "`agents`: an unsigned agent given a look-alike of another's name (rn for m), here and in the leaderboard", formats: both, edit: func(e *edited) want {
			sims := simAgents(e)
			renamed(e, sims[1], strings.Replace(e.get("agents", sims[0], "name"), "m", "rn", 1))
			return e.at("agents", sims[1], "name")
		}},
		{name: "`agents`: an unsigned agent given a look-alike of a baseline's name (rn for m), here and in the leaderboard", edit: func(e *edited) want {
			i := simAgents(e)[0]
			renamed(e, i, "Market (benchrnark)")
			return e.at("agents", i, "name")
		}},
		{name: "log re-signed: a signed profile renamed to a look-alike of an earlier agent's name, signed by the agent", edit: func(e *edited) want {
			first, signed := simAgents(e)[0], e.find("agents", func(get func(string) string) bool { return get("profile_version") == "2" })
			if first > signed {
				e.t.Fatal("the fixture's signed agent comes before the simulated ones")
			}
			name := strings.Replace(e.get("agents", first, "name"), "m", "rn", 1)
			i := logRow(e, tlog.KindProfile, `"version":2,`)
			var l struct{ Data forecast.ProfileEntry }
			if err := json.Unmarshal([]byte(e.get("log_entries", i, "leaf")), &l); err != nil {
				e.t.Fatal(err)
			}
			p := l.Data
			sig, err := named.SignProfile(e.f.res.App.Rounds.Domain, forecast.Profile{Agent: named.Address(), ProfileFields: forecast.ProfileFields{Name: name,
				Organisation: p.Organisation, Model: p.Model, Homepage: p.Homepage, Description: p.Description}, Version: p.Version, Deadline: p.Deadline})
			if err != nil {
				e.t.Fatal(err)
			}
			e.leaf(i, `"name":"((?:[^"\\]|\\.)*)"`, name)
			e.leaf(i, `"signature":"(0x[0-9a-f]+)"`, forecast.EncodeSignature(sig))
			renamed(e, signed, name)
			e.resign()
			return e.at("agents", signed, "name")
		}},
	}
}
