package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// profileReq signs p as version of k's profile under the server's domain.
func (e *env) profileReq(k *forecast.Key, p forecast.ProfileFields, version uint64) forecast.ProfileRequest {
	e.t.Helper()
	return signProfile(e.t, e.domain, k, forecast.Profile{Agent: k.Address(), ProfileFields: p, Version: version, Deadline: e.deadline()})
}

func signProfile(t testing.TB, d forecast.Domain, k *forecast.Key, p forecast.Profile) forecast.ProfileRequest {
	t.Helper()
	sig, err := k.SignProfile(d, p)
	if err != nil {
		t.Fatal(err)
	}
	return forecast.ProfileRequest{ProfileFields: p.ProfileFields, Version: p.Version, Deadline: p.Deadline, Signature: forecast.EncodeSignature(sig)}
}

func profilePath(k *forecast.Key) string { return "/api/v1/agents/" + k.Address().Hex() + "/profile" }

// setProfile registers k's profile through the API.
func (e *env) setProfile(k *forecast.Key, p forecast.ProfileFields, version uint64) forecast.ProfileJSON {
	e.t.Helper()
	var out forecast.ProfileJSON
	e.ok(http.StatusOK, "POST", profilePath(k), e.profileReq(k, p, version), "", &out)
	return out
}

// The profile API: read, register, update; every refusal answers its
// code and status and changes nothing stored.
func TestProfileAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ada, bob := newKey("ada"), newKey("bob")
		var p forecast.ProfileJSON
		e.ok(200, "GET", profilePath(ada), nil, "", &p)
		if p != (forecast.ProfileJSON{Agent: ada.Address().Hex()}) {
			t.Fatalf("an unknown agent's profile: %+v", p)
		}
		want := forecast.ProfileFields{Name: "Ada", Organisation: "Engines", Model: "m-1", Homepage: "https://ada.example", Description: "Forecasts."}
		if got := e.setProfile(ada, want, 1); got.ProfileFields != want || got.Version != 1 || got.Kind != "external" {
			t.Fatalf("registered %+v", got)
		}
		e.ok(200, "GET", "/api/v1/agents/"+strings.ToLower(ada.Address().Hex())+"/profile", nil, "", &p)
		if p.ProfileFields != want || p.Version != 1 || p.Agent != ada.Address().Hex() {
			t.Fatalf("read back %+v", p)
		}
		before := e.stored(ada.Address()) + e.stored(bob.Address())

		type edit func(r *forecast.ProfileRequest)
		resign := func(k *forecast.Key, d forecast.Domain, change func(p *forecast.Profile)) edit {
			return func(r *forecast.ProfileRequest) {
				m := forecast.Profile{Agent: bob.Address(), ProfileFields: r.ProfileFields, Version: r.Version, Deadline: r.Deadline}
				change(&m)
				*r = signProfile(t, d, k, m)
			}
		}
		sig := func(f func(s []byte)) edit {
			return func(r *forecast.ProfileRequest) {
				s, _ := forecast.DecodeSignature(r.Signature)
				f(s)
				r.Signature = forecast.EncodeSignature(s)
			}
		}
		fields := func(f func(p *forecast.ProfileFields)) edit {
			return resign(bob, forecast.Domain{}, func(p *forecast.Profile) { f(&p.ProfileFields) })
		}
		cases := []struct {
			name   string
			path   string
			body   any
			edit   edit
			code   string
			status int
		}{
			{name: "not an address", path: "/api/v1/agents/0x1234/profile", code: "address_invalid", status: 400},
			{name: "no name", edit: fields(func(p *forecast.ProfileFields) { p.Name = "" }), code: "profile_name_invalid", status: 400},
			{name: "name of 41 characters", edit: fields(func(p *forecast.ProfileFields) { p.Name = strings.Repeat("n", 41) }), code: "profile_name_invalid", status: 400},
			{name: "name with a control character", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Bob\x07" }), code: "profile_name_invalid", status: 400},
			{name: "name not in normal form", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Ｂｏｂ" }), code: "profile_name_invalid", status: 400},
			{name: "description too long", edit: fields(func(p *forecast.ProfileFields) { p.Description = strings.Repeat("d", 281) }), code: "profile_text_invalid", status: 400},
			{name: "javascript: homepage", edit: fields(func(p *forecast.ProfileFields) { p.Homepage = "javascript:alert(1)" }), code: "profile_homepage_invalid", status: 400},
			{name: "declared another chain", edit: func(r *forecast.ProfileRequest) { id := uint64(5); r.ChainID = &id }, code: "domain_mismatch", status: 400},
			{name: "signature cut short", edit: func(r *forecast.ProfileRequest) { r.Signature = r.Signature[:100] }, code: "signature_malformed", status: 400},
			{name: "v = recovery id", edit: sig(func(s []byte) { s[64] -= 27 }), code: "signature_v_invalid", status: 400},
			{name: "r = 0", edit: sig(func(s []byte) { clear(s[:32]) }), code: "signature_invalid", status: 401},
			{name: "high-s twin", edit: sig(highS), code: "signature_high_s", status: 400},
			{name: "signed by another key", edit: resign(ada, forecast.Domain{}, func(*forecast.Profile) {}), code: "signer_mismatch", status: 401},
			{name: "signed for another arena", edit: resign(bob, forecast.Domain{ChainID: 1}, func(*forecast.Profile) {}), code: "signer_mismatch", status: 401},
			{name: "field changed after signing", edit: func(r *forecast.ProfileRequest) { r.Name = "Bobby" }, code: "signer_mismatch", status: 401},
			{name: "deadline past", edit: resign(bob, forecast.Domain{}, func(p *forecast.Profile) { p.Deadline = uint64(t0.Unix()) - 1 }), code: "deadline_expired", status: 400},
			{name: "deadline over 24 h ahead", edit: resign(bob, forecast.Domain{}, func(p *forecast.Profile) { p.Deadline = uint64(t0.Add(25 * time.Hour).Unix()) }),
				code: "deadline_too_far", status: 400},
			{name: "another agent's name, in capitals", edit: fields(func(p *forecast.ProfileFields) { p.Name = "ADA" }), code: "profile_name_taken", status: 409},
			{name: "a baseline's name", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Random (uniform)" }), code: "profile_name_taken", status: 409},
			{name: "another agent's name with a Greek capital alpha", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Αda" }), code: "profile_name_invalid", status: 400},
			{name: "another agent's name with a Cyrillic capital a", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Аda" }), code: "profile_name_invalid", status: 400},
			{name: "a baseline's name with a Cyrillic capital em", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Маrket (benchmark)" }), code: "profile_name_invalid", status: 400},
			{name: "a baseline's name with a Cyrillic a", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Rаndom (uniform)" }), code: "profile_name_invalid", status: 400},
			{name: "a baseline's name with rn for m", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Market (benchrnark)" }), code: "profile_name_taken", status: 409},
			{name: "another agent's name and a character that shows nothing", edit: fields(func(p *forecast.ProfileFields) { p.Name = "Ada\U0001D159" }),
				code: "profile_name_invalid", status: 400},
			{name: "another agent's address cut to 38 hex digits", edit: fields(func(p *forecast.ProfileFields) { p.Name = ada.Address().Hex()[:40] }),
				code: "profile_name_invalid", status: 400},
			{name: "a homepage shown reversed by a right-to-left override", edit: fields(func(p *forecast.ProfileFields) { p.Homepage = "https://bob.example/\u202egnp.exe" }),
				code: "profile_homepage_invalid", status: 400},
			{name: "an organisation with a right-to-left override", edit: fields(func(p *forecast.ProfileFields) { p.Organisation = "\u202ebaL" }),
				code: "profile_text_invalid", status: 400},
			{name: "version 2 first", edit: resign(bob, forecast.Domain{}, func(p *forecast.Profile) { p.Version = 2 }), code: "profile_version_invalid", status: 409},
			{name: "version 0", edit: resign(bob, forecast.Domain{}, func(p *forecast.Profile) { p.Version = 0 }), code: "profile_version_invalid", status: 409},
			{name: "ada's registration replayed", path: profilePath(ada), body: e.profileReq(ada, want, 1), code: "profile_version_invalid", status: 409},
			{name: "unknown field", body: map[string]any{"name": "Bob", "nickname": "b"}, code: "malformed_json", status: 400},
		}
		for _, c := range cases {
			path, body := c.path, c.body
			if path == "" {
				path = profilePath(bob)
			}
			if body == nil {
				r := e.profileReq(bob, forecast.ProfileFields{Name: "Bob"}, 1)
				if c.edit != nil {
					c.edit(&r)
				}
				body = r
			}
			st, out := e.call("POST", path, body, "")
			if got := errorOf(t, out).Error.Code; st != c.status || got != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, st, out, c.status, c.code)
			}
			if after := e.stored(ada.Address()) + e.stored(bob.Address()); after != before {
				t.Errorf("%s: the store changed:\n%s\n%s", c.name, before, after)
			}
		}
		if got := e.setProfile(bob, forecast.ProfileFields{Name: "Bob"}, 1); got.Version != 1 {
			t.Fatalf("bob's first profile after the refusals: %+v", got)
		}
	})
}

// A signed profile update spends its agent's bucket like a commit does;
// a replayed one (its version used) does not.
func TestRateLimitProfile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, e, ids := agentLimited(t, db)
		k := newKey("agent")
		path := profilePath(k)
		first := jsonBody(t, e.profileReq(k, forecast.ProfileFields{Name: "Limited"}, 1))
		if rec := send(h, "POST", path, "192.0.2.1", first); rec.Code != 200 {
			t.Fatalf("profile: %d %s", rec.Code, rec.Body)
		}
		for i := range 5 { // replays: refused, and free for the agent
			if rec := send(h, "POST", path, fmt.Sprint("192.0.2.", 10+i), first); rec.Code != 409 || rec.Header().Get("RateLimit-Limit") != "" {
				t.Fatalf("replay %d: %d %v %s", i, rec.Code, rec.Header(), rec.Body)
			}
		}
		body := jsonBody(t, e.commitReq(k, ids[0], threePreds, saltOf("a"), common.Hash{}, 0))
		if rec := send(h, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", ids[0]), "192.0.2.2", body); rec.Code != 201 {
			t.Fatalf("commit: %d %s", rec.Code, rec.Body)
		}
		second := jsonBody(t, e.profileReq(k, forecast.ProfileFields{Name: "Limited 2"}, 2))
		if rec := send(h, "POST", path, "192.0.2.3", second); rec.Code != 200 || rec.Header().Get("RateLimit-Remaining") != "0" {
			t.Fatalf("third signed request: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		third := jsonBody(t, e.profileReq(k, forecast.ProfileFields{Name: "Limited 3"}, 3))
		if rec := send(h, "POST", path, "192.0.2.4", third); rec.Code != 429 || !strings.Contains(rec.Body.String(), "this agent") {
			t.Fatalf("fourth signed request: %d %s", rec.Code, rec.Body)
		}
	})
}

// The cap on profile updates over HTTP: past an agent's allowance an
// update answers 429 too_many_profile_updates with Retry-After, and
// stores and logs nothing; the allowance comes back with time.
func TestProfileUpdateCapAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.New(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		svc := &rounds.Service{Store: db, Logger: quiet, Now: clk.Now, Admission: rounds.Admission{ProfileUpdatesPerDay: 2}}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc}).Handler()
		e := &env{t: t, db: db, svc: svc, now: svc.Now}
		k := newKey("renamer")
		post := func(version uint64) *httptest.ResponseRecorder {
			return send(h, "POST", profilePath(k), "192.0.2.1", jsonBody(t, e.profileReq(k, forecast.ProfileFields{Name: fmt.Sprint("Renamer ", version)}, version)))
		}
		for v := range uint64(2) {
			if rec := post(v + 1); rec.Code != 200 {
				t.Fatalf("update %d: %d %s", v+1, rec.Code, rec.Body)
			}
		}
		before := e.stored(k.Address())
		rec := post(3)
		if rec.Code != 429 || errorOf(t, rec.Body.Bytes()).Error.Code != "too_many_profile_updates" || rec.Header().Get("Retry-After") != "43200" {
			t.Fatalf("a third update at once: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		if after := e.stored(k.Address()); after != before {
			t.Fatalf("a refused update changed the store:\n%s\n%s", before, after)
		}
		clk.Set(clk.Now().Add(12 * time.Hour))
		if rec := post(3); rec.Code != 200 {
			t.Fatalf("the third update 12 h later: %d %s", rec.Code, rec.Body)
		}
	})
}

// main is the page's own content, between the site's header and footer.
func main(t *testing.T, html string) string {
	t.Helper()
	_, after, ok := strings.Cut(html, "<main>")
	body, _, ok2 := strings.Cut(after, "</main>")
	if !ok || !ok2 {
		t.Fatalf("no <main> in %s", html)
	}
	return body
}

// An agent without scored forecasts has a page with what it has: its
// profile and its commits (which rounds stays private until their
// outcomes); an agent without a name shows its address once; an address
// the arena never saw has a page saying so; anything else is no agent.
func TestAgentPageBeforeScores(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(30*24*time.Hour))
		r := e.createRound(ms, t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour))
		named, unnamed := newKey("named"), newKey("unnamed")
		e.setProfile(named, forecast.ProfileFields{Name: "Early Bird", Organisation: "Dawn Labs", Model: "bird-1", Homepage: "https://bird.example",
			Description: "Commits first."}, 1)
		e.commit(named, r.ID, threePreds, saltOf("named"), common.Hash{}, 0)
		e.commit(unnamed, r.ID, threePreds, saltOf("unnamed"), common.Hash{}, 0)
		clk.Set(t0.Add(2*time.Hour + time.Minute))
		e.reveal(named, r.ID, threePreds, saltOf("named"), 1)

		var v view.AgentPageJSON
		e.ok(200, "GET", "/api/v1/pages/agents/"+strings.ToLower(named.Address().Hex()), nil, "", &v)
		if v.Agent != named.Address().Hex() || v.Name != "Early Bird" || !v.Known || v.Kind != "external" || v.ProfileVersion != 1 ||
			v.Profile.Organisation != "Dawn Labs" || v.Commits != 1 || v.Waiting != 1 || v.WaitingRevealed != 1 || v.Row != nil {
			t.Fatalf("named agent's page data %+v", v)
		}
		html := main(t, e.page("/agents/"+named.Address().Hex()))
		for _, want := range []string{"<h1>Early Bird</h1>", named.Address().Hex(), "external agent · Dawn Labs · model bird-1",
			`<a href="https://bird.example" rel="nofollow noopener ugc">https://bird.example</a>`, "Commits first.",
			"1 commit; 1 waiting for its round's outcomes (1 revealed).", "No scored forecasts yet."} {
			if !strings.Contains(html, want) {
				t.Errorf("named agent's page lacks %q:\n%s", want, html)
			}
		}
		if strings.Contains(html, fmt.Sprintf("/rounds/%d", r.ID)) {
			t.Errorf("the page names the round the agent committed to before its outcomes")
		}

		html = main(t, e.page("/agents/"+unnamed.Address().Hex()))
		if n := strings.Count(html, unnamed.Address().Hex()); n != 1 || !strings.Contains(html, "<h1>"+unnamed.Address().Hex()+"</h1>") ||
			!strings.Contains(html, "arena agent profile") || !strings.Contains(html, "1 commit; 1 waiting") {
			t.Errorf("unnamed agent's page (address shown %d times):\n%s", n, html)
		}

		stranger := newKey("stranger").Address().Hex()
		e.ok(200, "GET", "/api/v1/pages/agents/"+stranger, nil, "", &v)
		if v.Known || v.Commits != 0 || v.Name != stranger {
			t.Fatalf("unknown address's page data %+v", v)
		}
		if html := main(t, e.page("/agents/"+stranger)); !strings.Contains(html, "no profile and no commits") {
			t.Errorf("unknown address's page:\n%s", html)
		}
		for _, bad := range []string{"/agents/nobody", "/api/v1/pages/agents/0x1234"} {
			if st, out := e.call("GET", bad, nil, ""); st != 404 || errorOf(t, out).Error.Code != arena.ENOTFOUND {
				t.Errorf("%s: %d %s", bad, st, out)
			}
		}
	})
}

// A name, homepage and description written to break out of their place
// are text on every page that shows them, in the JSON, and in the CSV and
// JSON Lines exports; a homepage that is not http(s) is never a link.
func TestHostileProfileEscaped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(10*24*time.Hour))
		cd, rs, rd := t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), t0.Add(3*time.Hour)
		r := e.createRound(ms, cd, rs, rd)
		evil, formula, linked := newKey("evil"), newKey("formula"), newKey("linked")
		const name = `<script>alert("x")</script>`
		const escaped = `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`
		e.setProfile(evil, forecast.ProfileFields{Name: name, Homepage: `https://e.example/"><script>x</script>`,
			Description: `</p><img src=x onerror=alert(1)>`}, 1)
		e.setProfile(formula, forecast.ProfileFields{Name: `=cmd|' /C calc'!A0`}, 1)
		// Stored by the operator, unchecked: the template still refuses it as a link.
		if err := db.SetAgent(ctx, arena.AgentInfo{Address: linked.Address().Hex(), Kind: "external", Name: "Linked", Homepage: "javascript:alert(1)"}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []*forecast.Key{evil, formula, linked} {
			e.commit(k, r.ID, threePreds, saltOf(k.Address().Hex()), common.Hash{}, 0)
		}
		clk.Set(rs.Add(time.Second))
		for _, k := range []*forecast.Key{evil, formula, linked} {
			e.reveal(k, r.ID, threePreds, saltOf(k.Address().Hex()), 1)
		}
		clk.Set(rd.Add(time.Second))
		for _, m := range ms {
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), map[string]string{"outcome": "YES"}, adminToken, nil)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken, nil)

		for _, path := range []string{"/", "/leaderboard", fmt.Sprintf("/rounds/%d", r.ID), "/agents/" + evil.Address().Hex()} {
			html := e.page(path)
			if strings.Contains(html, "<script") || strings.Contains(html, "<img") || strings.Contains(html, `"><script`) {
				t.Errorf("%s carries the profile's markup unescaped", path)
			}
			if !strings.Contains(html, escaped) {
				t.Errorf("%s does not show the name %s as text", path, name)
			}
		}
		if html := e.page("/agents/" + linked.Address().Hex()); strings.Contains(html, `href="javascript:`) || !strings.Contains(html, "#ZgotmplZ") {
			t.Errorf("a javascript: homepage is a link:\n%s", main(t, html))
		}
		var lb scoring.Board
		e.ok(200, "GET", "/api/v1/leaderboard", nil, "", &lb)
		names := map[string]string{}
		for _, row := range lb.Rows {
			names[row.Agent] = row.Name
		}
		if names[evil.Address().Hex()] != name || names[formula.Address().Hex()] != `=cmd|' /C calc'!A0` {
			t.Errorf("leaderboard JSON names %v", names)
		}
		for _, format := range []string{export.CSV, export.JSONL} {
			st, raw := e.call("GET", "/api/v1/export/agents."+format, nil, "")
			if st != 200 {
				t.Fatalf("export %s: %d %s", format, st, raw)
			}
			if format == export.CSV && !bytes.Contains(raw, []byte(`'=cmd|`)) {
				t.Errorf("CSV export does not defuse the formula name:\n%s", raw)
			}
			tb, err := export.ReadTable(bytes.NewReader(raw), "agents", format)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, row := range tb.Rows {
				got[row[0]] = row[1]
			}
			if got[evil.Address().Hex()] != name || got[formula.Address().Hex()] != `=cmd|' /C calc'!A0` {
				t.Errorf("%s export names read back as %v", format, got)
			}
		}
		// The JSON of a page carries the name as it is.
		var v view.AgentPageJSON
		_, raw := e.call("GET", "/api/v1/pages/agents/"+evil.Address().Hex(), nil, "")
		if err := json.Unmarshal(raw, &v); err != nil || v.Name != name || v.Profile.Description != `</p><img src=x onerror=alert(1)>` {
			t.Fatalf("page JSON %+v %v", v, err)
		}
	})
}
