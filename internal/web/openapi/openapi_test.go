package openapi_test

import (
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/web/openapi"
)

type errBody struct {
	Code string `json:"code"`
}

type thing struct {
	ID   int64         `json:"id"`
	Note string        `json:"note,omitempty"`
	At   time.Time     `json:"at"`
	Next *thing        `json:"next"`
	Tags []string      `json:"tags"`
	Cash arena.Dollars `json:"cash"`
}

func spec() *openapi.Spec {
	return &openapi.Spec{
		Tags:       []openapi.Tag{{Name: "things", Desc: "Things"}},
		PathParams: map[string]openapi.PathParam{"id": {Desc: "a thing's id", Example: "7", Int: true}},
		ErrorBody:  errBody{},
		Ops: []openapi.Op{
			{Method: "GET", Path: "/things", ID: "listThings", Tag: "things", Summary: "Things", Response: []thing{},
				Query: []openapi.Param{
					openapi.Int("limit", 1, 100, "10", "5", "page size"),
					openapi.Enum("sort", []string{"new", "old"}, "new", "order"),
					{Name: "since", Format: "date-time", Desc: "from"},
					openapi.String("q", "x", "search").Require()}},
			{Method: "GET", Path: "/things/{id}", ID: "getThing", Tag: "things", Response: thing{}, Fails: []int{404}},
			{Method: "POST", Path: "/admin/things", ID: "makeThing", Tag: "things", Admin: true, Body: thing{}, Response: thing{}, Status: 201},
		},
	}
}

// A query is checked against its route's declaration: unknown and
// repeated parameters, values outside the type or list, and a missing
// required one are refused with stable codes; an empty value stands for
// the default.
func TestCheckQuery(t *testing.T) {
	t.Parallel()
	op := spec().Op("GET /things")
	for query, code := range map[string]string{
		"q=a":                            "",
		"q=a&limit=":                     "",
		"q=a&limit=100&sort=old":         "",
		"q=a&since=2026-01-02T15:04:05Z": "",
		"":                               "missing_parameter",
		"q=a&limit=0":                    "invalid_parameter",
		"q=a&limit=x":                    "invalid_parameter",
		"q=a&sort=mid":                   "invalid_parameter",
		"q=a&since=yesterday":            "invalid_parameter",
		"q=a&q=b":                        "invalid_parameter",
		"q=a&page=2":                     "unknown_parameter",
	} {
		err := op.CheckQuery(httptest.NewRequest("GET", "/things?"+query, nil))
		if got := arena.ErrorCode(err); (code == "" && err != nil) || (code != "" && got != code) {
			t.Errorf("%q: %v, want %q", query, err, code)
		}
	}
	var none *openapi.Op // an undeclared route (a page, a probe) takes anything
	if err := none.CheckQuery(httptest.NewRequest("GET", "/x?utm=1", nil)); err != nil {
		t.Errorf("undeclared route: %v", err)
	}
}

// QueryInt and Values give the declared default for an absent integer.
func TestQueryDefaults(t *testing.T) {
	t.Parallel()
	s := spec()
	r := httptest.NewRequest("GET", "/things?q=a", nil)
	r.Pattern = "GET /things"
	if n, given := s.QueryInt(r, "limit"); n != 10 || given {
		t.Errorf("QueryInt = %d, %v; want the default 10, not given", n, given)
	}
	ints, err := s.Op("GET /things").Values(r)
	if err != nil || ints["limit"] != 10 {
		t.Errorf("Values = %v, %v", ints, err)
	}
	r = httptest.NewRequest("GET", "/things?q=a&limit=3", nil)
	r.Pattern = "GET /things"
	if n, given := s.QueryInt(r, "limit"); n != 3 || !given {
		t.Errorf("QueryInt = %d, %v; want 3, given", n, given)
	}
}

// The document lists the declared operations among the routes served,
// only those, with their parameters, bodies, schemas derived from the
// wire types and the error answers they can give.
func TestDocument(t *testing.T) {
	t.Parallel()
	doc := spec().Document([]string{"GET /things/{id}", "POST /admin/things", "GET /undeclared"}, "https://arena.example/")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 2 || paths["/things"] != nil {
		t.Fatalf("paths %v: want the two served, declared routes", reflect.ValueOf(paths).MapKeys())
	}
	get := paths["/things/{id}"].(map[string]any)["get"].(map[string]any)
	p := get["parameters"].([]any)[0].(map[string]any)
	if p["in"] != "path" || p["example"] != int64(7) || p["schema"].(map[string]any)["type"] != "integer" {
		t.Errorf("path parameter %v", p)
	}
	if _, ok := get["responses"].(map[string]any)["404"]; !ok {
		t.Errorf("getThing's 404 is not documented: %v", get["responses"])
	}
	post := paths["/admin/things"].(map[string]any)["post"].(map[string]any)
	resp := post["responses"].(map[string]any)
	for _, st := range []string{"201", "400", "401", "403", "413", "429", "500"} {
		if resp[st] == nil {
			t.Errorf("makeThing: status %s not documented", st)
		}
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	th := schemas["thing"].(map[string]any)
	if got := th["required"].([]string); !reflect.DeepEqual(got, []string{"at", "cash", "id", "next", "tags"}) {
		t.Errorf("thing's required fields %v: every field without omitempty", got)
	}
	if at := th["properties"].(map[string]any)["at"].(map[string]any); at["format"] != "date-time" {
		t.Errorf("a time is %v", at)
	}
	if schemas["Error"] == nil {
		t.Error("no Error schema")
	}
	if srv := doc["servers"].([]any)[0].(map[string]any); srv["url"] != "https://arena.example" {
		t.Errorf("servers %v", srv)
	}
	if srv := spec().Document(nil, "")["servers"].([]any)[0].(map[string]any); srv["url"] != "http://{host}" {
		t.Errorf("servers without a public URL %v", srv)
	}
}
