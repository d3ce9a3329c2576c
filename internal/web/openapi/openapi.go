// Package openapi is the arena API's OpenAPI 3.1 document, generated
// from the declarations of its routes (Op) and checked against the routes
// a server registered: the document lists exactly the declared routes
// served, and every query a route answers is checked against its
// declaration (Spec.CheckQuery), so the document cannot promise a
// parameter the server refuses or leave out one it takes. Response and
// body schemas are derived from the wire types by reflection.
package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// Op documents one API route. The document lists exactly the declared
// routes a server registered (a disabled track's routes are absent from
// both).
type Op struct {
	Method, Path string
	ID           string   // operationId: the method name a generated client gives it
	Tag          string   // one of Spec.Tags
	Summary      string   // a few words
	Desc         string   // what it does, and when it fails
	Query        []Param  // the query parameters: no other is accepted
	Body         any      // request body type, nil for none
	Response     any      // 200/201 response body type
	Media        []string // media types of a non-JSON 200 response (a text body) instead of Response
	Status       int      // success status; 0 means 200
	Admin        bool     // needs the admin bearer token
	// Fails are the error statuses the route answers besides those every
	// route, admin route or route with a body answers (errorStatuses).
	Fails []int
}

// Param declares a query parameter of a route, once: the document
// describes it from the declaration (required, type, values, default,
// example), and Spec.CheckQuery refuses a request that names a parameter
// its route does not declare, lacks a required one, or gives a value
// outside the declared type or values. Handlers read integers through
// Spec.QueryInt, which knows the declared default.
type Param struct {
	Name     string
	Desc     string
	Required bool
	Int      bool // an integer from Min to Max; otherwise a string
	Min, Max int64
	Enum     []string // the values allowed, when a fixed list
	Format   string   // of a string (date-time)
	Default  string   // the value when absent or empty
	Example  string   // a value the route accepts (with its required parameters and With)
	// With is the query (name=value&…) of other parameters this one
	// applies only with, e.g. "track=trading"; alone it answers 400.
	With string
}

// Int declares an integer parameter from lo to hi.
func Int(name string, lo, hi int64, def, example, desc string) Param {
	return Param{Name: name, Int: true, Min: lo, Max: hi, Default: def, Example: example, Desc: desc}
}

// Enum declares a parameter of fixed values; its example is the first
// value that is not the default.
func Enum(name string, values []string, def, desc string) Param {
	ex := values[0]
	if ex == def {
		ex = values[1]
	}
	return Param{Name: name, Enum: values, Default: def, Example: ex, Desc: desc}
}

// String declares a text parameter.
func String(name, example, desc string) Param {
	return Param{Name: name, Example: example, Desc: desc}
}

// Require makes p required.
func (p Param) Require() Param { p.Required = true; return p }

// Only makes p apply only with the parameters of query (name=value&…).
func (p Param) Only(query string) Param {
	p.With = query
	p.Desc += " (only with " + query + ")"
	return p
}

// Not says that p does not apply with query.
func (p Param) Not(query string) Param {
	p.Desc += " (not with " + query + ")"
	return p
}

// Tag groups operations in the document.
type Tag struct{ Name, Desc string }

// PathParam describes the path parameters of one name. An integer one is
// documented as such, so that a generated client takes a number; the
// server still answers a value that is not one (400 or 404).
type PathParam struct {
	Desc, Example string
	Int           bool
}

// Spec is the declaration of an API: its operations, their tags and path
// parameters, and the body of every error answer.
type Spec struct {
	Tags       []Tag
	Ops        []Op
	PathParams map[string]PathParam
	// ErrorBody is a value of the type every error answer encodes.
	ErrorBody any

	index struct {
		once sync.Once
		ops  map[string]*Op
	}
}

// Op returns the declaration of a route pattern ("METHOD /path"), nil
// for an undeclared route (a page or a probe).
func (s *Spec) Op(pattern string) *Op {
	s.index.once.Do(func() {
		s.index.ops = map[string]*Op{}
		for i := range s.Ops {
			s.index.ops[s.Ops[i].Method+" "+s.Ops[i].Path] = &s.Ops[i]
		}
	})
	return s.index.ops[pattern]
}

// Param returns op's declaration of the query parameter name, nil when
// op does not take it.
func (op *Op) Param(name string) *Param {
	for i := range op.Query {
		if op.Query[i].Name == name {
			return &op.Query[i]
		}
	}
	return nil
}

// CheckQuery refuses a query that does not follow op's declaration: a
// parameter op does not declare (unknown_parameter, so that nothing a
// client sends is silently ignored), one given twice, a value outside its
// type or values (invalid_parameter), a required one missing or empty
// (missing_parameter). An empty value stands for the default.
func (op *Op) CheckQuery(r *http.Request) error {
	if op == nil {
		return nil // a page or probe: browsers' extra parameters are no error
	}
	q := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) {
		p, vs := op.Param(name), q[name]
		if p == nil {
			names := "it takes none"
			if len(op.Query) > 0 {
				var ns []string
				for _, x := range op.Query {
					ns = append(ns, x.Name)
				}
				names = "its parameters: " + strings.Join(ns, ", ")
			}
			return arena.Rejectf(arena.EINVALID, "unknown_parameter", "query parameter %q does not apply to %s %s (%s)", arena.Clip(name), op.Method, op.Path, names)
		}
		if len(vs) > 1 {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "query parameter %s is given %d times: give it once", name, len(vs))
		}
		if err := p.check(vs[0]); err != nil {
			return err
		}
	}
	for _, p := range op.Query {
		if p.Required && q.Get(p.Name) == "" {
			return arena.Rejectf(arena.EINVALID, "missing_parameter", "query parameter %s is required: %s", p.Name, p.Desc)
		}
	}
	return nil
}

// Values checks the parameters op declares on the request of an HTML
// page (the extra ones a browser may add are no error), so that the page
// and its JSON twin refuse the same values, and returns its integer
// parameters, the declared defaults filled in.
func (op *Op) Values(r *http.Request) (map[string]int64, error) {
	q := r.URL.Query()
	ints := map[string]int64{}
	for _, p := range op.Query {
		v := q.Get(p.Name)
		if err := p.check(v); err != nil {
			return nil, err
		}
		if p.Int {
			if v == "" {
				v = p.Default
			}
			ints[p.Name], _ = strconv.ParseInt(v, 10, 64) // checked above
		}
	}
	return ints, nil
}

func (p *Param) check(v string) error {
	switch {
	case v == "":
	case p.Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < p.Min || n > p.Max {
			want := fmt.Sprintf("an integer from %d", p.Min)
			if p.Max < math.MaxInt64 {
				want += fmt.Sprintf(" to %d", p.Max)
			}
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want %s", p.Name, arena.Clip(v), want)
		}
	case p.Enum != nil && !slices.Contains(p.Enum, v):
		return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want %s", p.Name, arena.Clip(v), OneOf(p.Enum))
	case p.Format == "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s=%q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", p.Name, arena.Clip(v))
		}
	}
	return nil
}

// OneOf lists values as "a, b or c".
func OneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// QueryInt is the integer parameter name of a request CheckQuery passed
// (r.Pattern its route), or its declared default; given says whether the
// request set it.
func (s *Spec) QueryInt(r *http.Request, name string) (n int64, given bool) {
	v := r.URL.Query().Get(name)
	given = v != ""
	if !given {
		if op := s.Op(r.Pattern); op != nil && op.Param(name) != nil {
			v = op.Param(name).Default
		}
	}
	n, _ = strconv.ParseInt(v, 10, 64) // checked by checkQuery
	return n, given
}

// Document builds the OpenAPI 3.1 document of the declared operations
// among routes (the "METHOD /path" patterns a server registered), served
// at publicURL (empty: a host the reader fills in).
func (s *Spec) Document(routes []string, publicURL string) map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	g.defs["Error"] = g.schema(reflect.TypeOf(s.ErrorBody))
	paths := map[string]any{}
	used := map[int]bool{}
	for _, op := range s.Ops {
		if !slices.Contains(routes, op.Method+" "+op.Path) {
			continue
		}
		o := map[string]any{"summary": op.Summary, "description": op.Desc, "operationId": op.ID, "tags": []any{op.Tag},
			"security": []any{}}
		if op.Admin {
			o["security"] = []any{map[string]any{"admin": []any{}}}
		}
		var params []any
		for _, seg := range strings.Split(op.Path, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				pp := s.PathParams[name]
				var sc map[string]any
				var example any = pp.Example
				if pp.Int {
					sc = map[string]any{"type": "integer", "format": "int64"}
					example, _ = strconv.ParseInt(pp.Example, 10, 64)
				} else {
					sc = map[string]any{"type": "string"}
				}
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": sc, "description": pp.Desc, "example": example})
			}
		}
		for _, q := range op.Query {
			params = append(params, q.document())
		}
		if params != nil {
			o["parameters"] = params
		}
		if op.Body != nil {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(op.Body))}}}
		}
		status := "200"
		if op.Status != 0 {
			status = strconv.Itoa(op.Status)
		}
		content := map[string]any{}
		if op.Media != nil {
			for _, m := range op.Media {
				content[m] = map[string]any{"schema": map[string]any{"type": "string"}}
			}
		} else {
			content["application/json"] = map[string]any{"schema": g.schema(reflect.TypeOf(op.Response))}
		}
		responses := map[string]any{status: map[string]any{"description": "success", "content": content}}
		for _, st := range op.errorStatuses() {
			responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/" + errorResponses[st].Name}
			used[st] = true
		}
		o["responses"] = responses
		item, _ := paths[op.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = o
	}
	responses := map[string]any{}
	for st := range used {
		e := errorResponses[st]
		r := map[string]any{"description": e.Desc, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
		if st == http.StatusTooManyRequests {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before retrying", "schema": map[string]any{"type": "integer"}}}
		}
		responses[e.Name] = r
	}
	var tags []any
	for _, t := range s.Tags {
		tags = append(tags, map[string]any{"name": t.Name, "description": t.Desc})
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Forecast Arena API", "version": "1",
			"description": "Read endpoints answer JSON with an ETag (send If-None-Match for 304); errors are {\"error\":{\"code\",\"message\"}} " +
				"with the status of their kind and a stable code. Every operation answers 400 for a query parameter it does not take or a value outside " +
				"its declaration, 429 with Retry-After when a rate limit refuses the request, and 500 for a failure of the arena's own."},
		"servers": servers(publicURL),
		"tags":    tags,
		"paths":   paths,
		"components": map[string]any{
			"schemas":   g.defs,
			"responses": responses,
			"securitySchemes": map[string]any{"admin": map[string]any{"type": "http", "scheme": "bearer",
				"description": "The admin token (ARENA_ADMIN_TOKEN, or the next one while it is rotated) as a bearer token"}},
		},
	}
}

// servers is where the API is: the arena's public URL when it is
// configured, else a host the reader fills in (arena serve's default
// address by default). The request's own Host header is not used: the
// document would then say whatever a client sent.
func servers(publicURL string) []any {
	if publicURL != "" {
		return []any{map[string]any{"url": strings.TrimSuffix(publicURL, "/"), "description": "this arena"}}
	}
	return []any{map[string]any{"url": "http://{host}", "description": "an arena serving HTTP",
		"variables": map[string]any{"host": map[string]any{"default": "127.0.0.1:8080", "description": "its host and port"}}}}
}

// errorResponses are the error answers, by status: every one has the
// Error body with a stable code.
var errorResponses = map[int]struct{ Name, Desc string }{
	http.StatusBadRequest: {"BadRequest", "The request is invalid: a query parameter the operation does not take, a value outside its declaration, " +
		"text that is not UTF-8, a malformed path id, malformed JSON or a value the operation refuses; error.code says which"},
	http.StatusUnauthorized:          {"Unauthorized", "A missing or wrong admin bearer token, or a signature that does not recover to the agent; error.code says which"},
	http.StatusForbidden:             {"Forbidden", "Admin operations are disabled: the arena has no admin token configured (admin_disabled)"},
	http.StatusNotFound:              {"NotFound", "What the path names does not exist, is not published yet, or belongs to a track the arena does not run"},
	http.StatusConflict:              {"Conflict", "The request conflicts with the current state (a closed window, a nonce already used, a name taken…); error.code says which"},
	http.StatusRequestEntityTooLarge: {"PayloadTooLarge", "The request body exceeds 262144 bytes (body_too_large), or a field its bound (error.code says which)"},
	http.StatusTooManyRequests:       {"TooManyRequests", "A rate limit (rate_limited) or an admission cap refused the request; Retry-After says when it may pass"},
	http.StatusInternalServerError:   {"InternalError", "A failure of the arena's own, logged with the request id (X-Request-Id); the message says no more"},
}

// errorStatuses are the error statuses op answers: those of every route
// (400 for its query, 429 from the rate limits, 500), of an admin route
// (401, 403), of a route with a body (400 malformed JSON, 413 too large),
// and its own.
func (op *Op) errorStatuses() []int {
	sts := []int{http.StatusBadRequest, http.StatusTooManyRequests, http.StatusInternalServerError}
	if op.Admin {
		sts = append(sts, http.StatusUnauthorized, http.StatusForbidden)
	}
	if op.Body != nil {
		sts = append(sts, http.StatusRequestEntityTooLarge)
	}
	sts = append(sts, op.Fails...)
	slices.Sort(sts)
	return slices.Compact(sts)
}

// document is p as an OpenAPI parameter object.
func (p Param) document() map[string]any {
	sc := map[string]any{"type": "string"}
	switch {
	case p.Int:
		sc = map[string]any{"type": "integer", "minimum": p.Min}
		if p.Max < math.MaxInt64 {
			sc["maximum"] = p.Max
		}
	case p.Enum != nil:
		sc["enum"] = p.Enum
	case p.Format != "":
		sc["format"] = p.Format
	}
	if p.Default != "" {
		if p.Int {
			n, _ := strconv.ParseInt(p.Default, 10, 64)
			sc["default"] = n
		} else {
			sc["default"] = p.Default
		}
	}
	out := map[string]any{"name": p.Name, "in": "query", "required": p.Required, "description": p.Desc, "schema": sc}
	if p.Example != "" {
		out["example"] = p.Example
		if p.Int {
			n, _ := strconv.ParseInt(p.Example, 10, 64)
			out["example"] = n
		}
	}
	if p.With != "" {
		out["x-with"] = p.With
	}
	return out
}

// schemaGen derives JSON Schemas (2020-12, as OpenAPI 3.1 uses) from the
// wire types, so the document cannot drift from what the handlers encode.
type schemaGen struct{ defs map[string]any }

var (
	timeType    = reflect.TypeOf(time.Time{})
	rawType     = reflect.TypeOf(json.RawMessage{})
	dollarsType = reflect.TypeOf(arena.Dollars(0))
	durType     = reflect.TypeOf(arena.Duration(0))
	marshaler   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case rawType:
		return map[string]any{}
	case dollarsType:
		return map[string]any{"type": "number", "description": "US dollars, exact to the micro-dollar"}
	case durType:
		return map[string]any{"type": "string", "description": "Go duration, e.g. 1h30m"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.schema(t.Elem())
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": []any{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Struct:
		if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
			return map[string]any{}
		}
		name := t.Name()
		if name != "" {
			if _, ok := g.defs[name]; ok {
				return map[string]any{"$ref": "#/components/schemas/" + name}
			}
			g.defs[name] = map[string]any{} // placeholder: recursive types end here
		}
		props := map[string]any{}
		var required []string
		g.fields(t, props, &required)
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			slices.Sort(required)
			s["required"] = required
		}
		if name == "" {
			return s
		}
		g.defs[name] = s
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// fields adds t's JSON fields to props. A field without omitempty (or
// omitzero) is required: encoding/json always writes it, and a request
// body the handlers accept needs it.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required) // embedded: its fields are promoted
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			*required = append(*required, name)
		}
	}
}
