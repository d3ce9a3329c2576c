package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

// The OpenAPI document names exactly the registered /api/v1 routes, in
// both directions, for every combination of tracks, and validates as
// OpenAPI 3.1 with kin-openapi.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
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

// A client that follows the OpenAPI document is answered, and one that
// does not is told why: for every documented route, called with the
// documented examples, the required query parameters alone pass (not
// 400), each optional one added (with the parameters it needs, x-with)
// passes, each required one left out answers 400 missing_parameter, a
// parameter the document does not list answers 400 unknown_parameter,
// and a value outside a parameter's type or values 400
// invalid_parameter. The document is derived from the same declarations
// the server checks requests with, so it cannot drift from the handlers.
func TestQueryParametersFollowDocument(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		generate(t, db, 3, 2, 4) // scored rounds 1 and 2; agent 0x…01; category sports
		eng, _ := generateCohorts(t, db, 2, 2)
		key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
		if err != nil {
			t.Fatal(err)
		}
		lg := &tlog.Log{Store: db, Key: key}
		for i := range 3 {
			if err := lg.Append(ctx, tlog.KindScore, i); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC)
		srv := web.Build(web.Parts{Markets: db, DB: db, Logger: quiet, AdminToken: "t", Forecasters: db, Oracle: &oracle.Service{Store: db, Logger: quiet},
			Forecast: &forecast.Service{Store: db, Logger: quiet, Now: func() time.Time { return now }}, Trading: eng})
		srv.RegisterLog(lg)
		h := srv.Handler()
		call := func(method, path string, q url.Values) (int, string) {
			req := httptest.NewRequest(method, path+"?"+q.Encode(), nil)
			req.Header.Set("Authorization", "Bearer t")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			json.Unmarshal(rec.Body.Bytes(), &e)
			return rec.Code, e.Error.Code
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
		doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(ctx); err != nil {
			t.Fatalf("kin-openapi validate: %v", err)
		}
		example := func(p *openapi3.Parameter) string {
			if p.Example == nil {
				t.Fatalf("parameter %s has no example", p.Name)
			}
			return fmt.Sprint(p.Example)
		}
		checked := 0
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				target := path
				base := url.Values{}
				var required, optional []*openapi3.Parameter
				for _, ref := range op.Parameters {
					p := ref.Value
					switch {
					case p.In == "path":
						target = strings.Replace(target, "{"+p.Name+"}", example(p), 1)
					case p.Required:
						required = append(required, p)
						base.Set(p.Name, example(p))
					default:
						optional = append(optional, p)
					}
				}
				name := method + " " + path
				if method == "GET" {
					if st, code := call(method, target, base); st == 400 || st >= 500 {
						t.Errorf("%s?%s (its required parameters): %d %s", name, base.Encode(), st, code)
					}
				}
				for _, p := range required {
					q := maps.Clone(base)
					q.Del(p.Name)
					if st, code := call(method, target, q); st != 400 || code != "missing_parameter" {
						t.Errorf("%s without the required %s: %d %s", name, p.Name, st, code)
					}
				}
				for _, p := range optional {
					q := maps.Clone(base)
					if with, ok := p.Extensions["x-with"].(string); ok {
						w, _ := url.ParseQuery(with)
						maps.Copy(q, w)
					}
					q.Set(p.Name, example(p))
					if st, code := call(method, target, q); st == 400 || st >= 500 {
						t.Errorf("%s?%s (the optional %s): %d %s", name, q.Encode(), p.Name, st, code)
					}
				}
				for _, p := range append(required, optional...) {
					bad := ""
					switch {
					case p.Schema.Value.Type.Is("integer"):
						bad = "ten"
					case p.Schema.Value.Enum != nil:
						bad = "nonsense"
					default:
						continue
					}
					q := maps.Clone(base)
					q.Set(p.Name, bad)
					if st, code := call(method, target, q); st != 400 || code != "invalid_parameter" {
						t.Errorf("%s with %s=%s: %d %s", name, p.Name, bad, st, code)
					}
				}
				q := maps.Clone(base)
				q.Set("nonsense", "1")
				if st, code := call(method, target, q); st != 400 || code != "unknown_parameter" {
					t.Errorf("%s with an undocumented parameter: %d %s", name, st, code)
				}
				checked++
			}
		}
		if checked < 40 {
			t.Errorf("checked %d operations, want every documented one", checked)
		}
	})
}
