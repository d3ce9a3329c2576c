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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/rounds"
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
				p.Forecast = &rounds.Service{Store: db, Logger: quiet}
			}
			if c.trading {
				p.Trading = &trading.Engine{Store: db, Logger: quiet}
			}
			if c.forecasters {
				p.Forecasters = db
				p.Oracle = &oracle.Service{Store: db}
			}
			srv := web.New(p)
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
			checkOperations(t, c.name, d)
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

// checkOperations checks what a client generator needs of every operation
// of d: a unique operationId that is a method name, a defined tag, a
// summary and a description, its security (the bearer scheme for admin
// routes, none for the others), and the error answers every route gives
// (400, 429, 500), an admin route gives (401, 403) and a route with a
// body gives (413), each with the Error body; and servers to call.
func checkOperations(t *testing.T, name string, d *openapi3.T) {
	t.Helper()
	if len(d.Servers) == 0 || d.Servers[0].URL == "" {
		t.Errorf("%s: no servers", name)
	}
	tags := map[string]bool{}
	for _, tg := range d.Tags {
		if tg.Description == "" {
			t.Errorf("%s: tag %s has no description", name, tg.Name)
		}
		tags[tg.Name] = true
	}
	ids := map[string]string{}
	methodName := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	for path, item := range d.Paths.Map() {
		for method, op := range item.Operations() {
			where := name + ": " + method + " " + path
			if !methodName.MatchString(op.OperationID) {
				t.Errorf("%s: operationId %q is not a method name", where, op.OperationID)
			}
			if other, ok := ids[op.OperationID]; ok {
				t.Errorf("%s: operationId %q is %s's too", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			if len(op.Tags) != 1 || !tags[op.Tags[0]] {
				t.Errorf("%s: tags %v: want one of the document's tags", where, op.Tags)
			}
			if op.Summary == "" || len(op.Description) < len(op.Summary) {
				t.Errorf("%s: summary %q, description %q", where, op.Summary, op.Description)
			}
			for _, p := range op.Parameters {
				if p.Value.Description == "" || p.Value.Example == nil {
					t.Errorf("%s: parameter %s has no description or example", where, p.Value.Name)
				}
			}
			admin := strings.HasPrefix(path, "/api/v1/admin/")
			switch {
			case op.Security == nil:
				t.Errorf("%s: no security", where)
			case admin && (len(*op.Security) != 1 || (*op.Security)[0]["admin"] == nil):
				t.Errorf("%s: security %v: want the admin bearer scheme", where, *op.Security)
			case !admin && len(*op.Security) != 0:
				t.Errorf("%s: security %v: want none", where, *op.Security)
			}
			want := []int{400, 429, 500}
			if admin {
				want = append(want, 401, 403)
			}
			if op.RequestBody != nil {
				want = append(want, 413)
			}
			if op.Responses.Default() != nil {
				t.Errorf("%s: a default response: list the errors instead", where)
			}
			for _, st := range want {
				if op.Responses.Status(st) == nil {
					t.Errorf("%s: no %d response", where, st)
				}
			}
			for code, ref := range op.Responses.Map() {
				st, _ := strconv.Atoi(code)
				if st < 400 {
					continue
				}
				mt := ref.Value.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
					t.Errorf("%s: the %d response has not the Error schema", where, st)
				}
			}
		}
	}
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
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, AdminToken: "t", Forecasters: db, Boards: newBoards(t, db, nil), Oracle: &oracle.Service{Store: db, Logger: quiet},
			Forecast: &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return now }}, Trading: eng, Log: lg})
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

// Every answer the server gives is one the document lists for the
// operation, and every error has the Error body: each documented
// operation is called with its examples, with malformed, unknown and
// out-of-range path values, an undocumented parameter, bodies that are
// empty, malformed, of unknown fields or too large, without the admin
// token or with a wrong one, at an arena with no admin token, past a rate
// limit, and over a closed database.
func TestErrorResponsesDocumented(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, "sqlite")
	generate(t, db, 3, 2, 4)
	eng, _ := generateCohorts(t, db, 2, 2)
	key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	lg := &tlog.Log{Store: db, Key: key}
	if err := lg.Append(ctx, tlog.KindScore, 1); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC)
	build := func(db *store.DB, token string, limits ratelimit.Limits) http.Handler {
		p := web.Parts{Markets: db, DB: db, Logger: quiet, AdminToken: token, Forecasters: db, Boards: newBoards(t, db, nil), Oracle: &oracle.Service{Store: db, Logger: quiet},
			Forecast: &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return now }}, Trading: eng, Rates: db, Limits: limits,
			Log: &tlog.Log{Store: db, Key: key}}
		if db != p.Markets {
			p.Trading = &trading.Engine{Store: db, Logger: quiet}
		}
		return web.New(p).Handler()
	}
	full := build(db, "t", ratelimit.Limits{})
	closedDB := storetest.Open(t, "sqlite")
	closed := build(closedDB, "t", ratelimit.Limits{})
	closedDB.Close()
	rec := httptest.NewRecorder()
	full.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// An arena that runs no track serves fewer routes, and its pages of a
	// track answer 404.
	bare := web.New(web.Parts{Markets: db, DB: db, Logger: quiet}).Handler()
	rec = httptest.NewRecorder()
	bare.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	bareDoc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			target := path
			var params []string
			for _, ref := range op.Parameters {
				if p := ref.Value; p.In == "path" {
					target = strings.Replace(target, "{"+p.Name+"}", fmt.Sprint(p.Example), 1)
					params = append(params, p.Name)
				}
			}
			call := func(h http.Handler, target, token, body string) {
				t.Helper()
				var req *http.Request
				if op.RequestBody != nil {
					req = httptest.NewRequest(method, target, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
				} else {
					req = httptest.NewRequest(method, target, nil)
				}
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				statuses[rec.Code]++
				if op.Responses.Status(rec.Code) == nil {
					t.Errorf("%s: %s %s answers %d, which the document does not list: %s", name, method, target, rec.Code, clipped(rec.Body.String()))
				}
				if rec.Code < 400 {
					return
				}
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
					t.Errorf("%s: %s %s: %d without the Error body: %s", name, method, target, rec.Code, clipped(rec.Body.String()))
				}
			}
			bodies := []string{"{}"}
			if op.RequestBody != nil {
				bodies = append(bodies, "", "{", "[]", `{"nonsense":1}`, `{"reason":"`+strings.Repeat("x", web.MaxBodyBytes)+`"}`)
			}
			for _, b := range bodies {
				call(full, target, "t", b)
			}
			for _, p := range params {
				for _, v := range []string{"0", "-1", "x", "99999999", "0x12", strings.Repeat("9", 30)} {
					call(full, strings.Replace(path, "{"+p+"}", v, 1), "t", "{}")
				}
			}
			call(full, target+"?nonsense=1", "t", "{}")
			call(full, target, "", "{}")
			call(full, target, "wrong", "{}")
			call(build(db, "", ratelimit.Limits{}), target, "t", "{}")
			limited := build(db, "t", ratelimit.Limits{PerIP: arena.RateLimit{Burst: 1, PerSecond: 1e-6}})
			call(limited, target, "t", "{}")
			call(limited, target, "t", "{}")
			call(closed, target, "t", "{}")
			if bareDoc.Paths.Find(path) != nil && bareDoc.Paths.Find(path).GetOperation(method) != nil {
				call(bare, target, "t", "{}")
			}
		}
	}
	// The calls reached every error status the document lists.
	for _, st := range []int{400, 401, 403, 404, 409, 413, 429, 500} {
		if statuses[st] == 0 {
			t.Errorf("no call answered %d: %v", st, statuses)
		}
	}
	t.Logf("answers by status: %v", statuses)
}

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
