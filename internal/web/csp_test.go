package web_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// What the Content-Security-Policy forbids, as it would appear in a page:
// scripts, inline styles, event handlers, javascript: links, resources
// from another host.
var cspForbidden = regexp.MustCompile(`(?i)<script|<style|\sstyle\s*=|\son[a-z]+\s*=|javascript:|<(?:img|iframe|object|embed|link|source)\b[^>]*\b(?:src|href)\s*=\s*"(?:https?:)?//`)

// Every answer, pages, errors and JSON alike, carries the policy, and no
// page or template uses anything it forbids (the dashboard test in
// internal/demo renders every page in headless Chromium under it and
// fails on any console message, a policy violation included).
func TestContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	if !strings.Contains(web.ContentSecurityPolicy, "default-src 'none'") || strings.Contains(web.ContentSecurityPolicy, "unsafe") {
		t.Fatalf("policy %q", web.ContentSecurityPolicy)
	}
	for _, bad := range []string{`<script>x()</script>`, `<p style="color:red">`, `<a onclick="x()">`, `<a href="javascript:x()">`, `<img src="https://cdn.example/x.png">`, `<link rel="stylesheet" href="//cdn.example/x.css">`} {
		if !cspForbidden.MatchString(bad) {
			t.Errorf("the check misses %s", bad)
		}
	}
	templates, err := filepath.Glob("pages/templates/*.html")
	if err != nil || len(templates) == 0 {
		t.Fatalf("templates: %v", err)
	}
	for _, f := range templates {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := cspForbidden.FindString(string(b)); m != "" {
			t.Errorf("%s uses %q, which the policy forbids", f, m)
		}
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := trSetup(t, db)
		for _, c := range []struct {
			path, accept string
			status       int
		}{
			{"/", "text/html", 200},
			{"/leaderboard", "text/html", 200},
			{"/markets", "text/html", 200},
			{"/methodology", "text/html", 200},
			{fmt.Sprintf("/cohorts/%d", e.c.ID), "text/html", 200},
			{"/no/such/page", "text/html", 404},
			{"/api/v1/leaderboard?track=trading", "application/json", 200},
		} {
			req, _ := http.NewRequest("GET", e.url+c.path, nil)
			req.Header.Set("Accept", c.accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != c.status {
				t.Fatalf("GET %s: %d %v", c.path, resp.StatusCode, err)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
				t.Errorf("GET %s: Content-Security-Policy %q", c.path, got)
			}
			if m := cspForbidden.FindString(string(body)); m != "" {
				t.Errorf("GET %s uses %q, which the policy forbids", c.path, m)
			}
		}
	})
}
