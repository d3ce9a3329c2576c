package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
)

// The OpenAPI document names exactly the registered /api/v1 routes, in
// both directions, for every combination of tracks, and validates as
// OpenAPI 3.1 with kin-openapi.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, c := range []struct {
			name              string
			forecast, trading bool
			forecasters       bool
		}{{"all", true, true, true}, {"forecast", true, false, false}, {"trading", false, true, false}, {"none", false, false, false}} {
			p := web.Parts{Markets: db, DB: db, Logger: quiet, AdminToken: "t"}
			if c.forecast {
				p.Forecast = &forecast.Service{Store: db, Logger: quiet}
			}
			if c.trading {
				p.Trading = &trading.Engine{Store: db, Logger: quiet}
			}
			if c.forecasters {
				p.Forecasters = db
				p.Oracle = &oracle.Service{Store: db}
			}
			srv := web.Build(p)
			hs := httptest.NewServer(srv.Handler())
			resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			hs.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d %s", c.name, resp.StatusCode, body)
			}
			var doc struct {
				OpenAPI string                                `json:"openapi"`
				Paths   map[string]map[string]json.RawMessage `json:"paths"`
			}
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			var documented, registered []string
			for path, ops := range doc.Paths {
				for m := range ops {
					documented = append(documented, strings.ToUpper(m)+" "+path)
				}
			}
			for _, r := range srv.Routes() {
				if strings.Contains(r, " /api/v1/") {
					registered = append(registered, r)
				}
			}
			slices.Sort(documented)
			slices.Sort(registered)
			for _, r := range registered {
				if !slices.Contains(documented, r) {
					t.Errorf("%s: route %s is not documented", c.name, r)
				}
			}
			for _, d := range documented {
				if !slices.Contains(registered, d) {
					t.Errorf("%s: documented %s is not a route", c.name, d)
				}
			}
			if len(registered) < 6 || doc.OpenAPI != "3.1.0" {
				t.Errorf("%s: %d routes, openapi %q", c.name, len(registered), doc.OpenAPI)
			}
			loader := openapi3.NewLoader()
			d, err := loader.LoadFromData(body)
			if err != nil {
				t.Fatalf("%s: kin-openapi load: %v", c.name, err)
			}
			if !d.IsOpenAPI31OrLater() {
				t.Errorf("%s: kin-openapi does not read it as 3.1", c.name)
			}
			if err := d.Validate(context.Background()); err != nil {
				t.Errorf("%s: kin-openapi validate: %v", c.name, err)
			}
			if c.name != "all" {
				continue
			}
			// A field is required unless it is omitempty: a round needs its
			// three deadlines, not its markets; a decision needs no reason
			// unless it re-resolves.
			for name, want := range map[string][]string{
				"CreateRoundRequest":  {"commit_deadline", "reveal_deadline", "reveal_start"},
				"OracleDecideRequest": {"arbiter", "decision"},
				"OracleFlagRequest":   {"reason"},
			} {
				sc, ok := d.Components.Schemas[name]
				if !ok || sc.Value == nil {
					t.Errorf("no schema %s", name)
				} else if !slices.Equal(sc.Value.Required, want) {
					t.Errorf("schema %s: required %v, want %v", name, sc.Value.Required, want)
				}
			}
		}
	})
}
