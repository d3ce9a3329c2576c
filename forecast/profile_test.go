package forecast_test

import (
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/stats"
)

// Profile fields: every rule with the code it fails with, and what the
// reference client's normalisation turns into an accepted profile.
func TestCheckProfile(t *testing.T) {
	ok := forecast.ProfileFields{Name: "Ada", Organisation: "Lab", Model: "gpt-x", Homepage: "https://ada.example/a?b=c", Description: "Forecasts."}
	with := func(edit func(f *forecast.ProfileFields)) forecast.ProfileFields {
		f := ok
		edit(&f)
		return f
	}
	cases := []struct {
		name string
		f    forecast.ProfileFields
		code string
	}{
		{"complete", ok, ""},
		{"name only", forecast.ProfileFields{Name: "A"}, ""},
		{"markup and quotes are text", with(func(f *forecast.ProfileFields) { f.Name = `<script>"x"</script>` }), ""},
		{"40 characters", with(func(f *forecast.ProfileFields) { f.Name = strings.Repeat("é", 40) }), ""},
		{"http homepage", with(func(f *forecast.ProfileFields) { f.Homepage = "http://a.example" }), ""},
		{"no name", with(func(f *forecast.ProfileFields) { f.Name = "" }), forecast.CodeProfileNameInvalid},
		{"41 characters", with(func(f *forecast.ProfileFields) { f.Name = strings.Repeat("é", 41) }), forecast.CodeProfileNameInvalid},
		{"an address-long name", with(func(f *forecast.ProfileFields) { f.Name = "0x" + strings.Repeat("ab", 20) }), forecast.CodeProfileNameInvalid},
		{"an address cut to 38 hex digits", with(func(f *forecast.ProfileFields) { f.Name = "0x71C7656EC7ab88b098defB751B7401B5f6d897" }), forecast.CodeProfileNameInvalid},
		{"an address's hex digits without 0x", with(func(f *forecast.ProfileFields) { f.Name = "71C7656EC7ab88b098defB751B7401B5f6d8976F" }), forecast.CodeProfileNameInvalid},
		{"Greek alpha among Latin letters", with(func(f *forecast.ProfileFields) { f.Name = "Αda" }), forecast.CodeProfileNameInvalid},
		{"Cyrillic a among Latin letters", with(func(f *forecast.ProfileFields) { f.Name = "Аda" }), forecast.CodeProfileNameInvalid},
		{"a character newer than the confusables data", with(func(f *forecast.ProfileFields) { f.Name = "\ua7c0la" }), forecast.CodeProfileNameInvalid},
		{"Latin with Devanagari", with(func(f *forecast.ProfileFields) { f.Name = "GPT ठाकुर" }), ""},
		{"organisation with a right-to-left override", with(func(f *forecast.ProfileFields) { f.Organisation = "Lab\u202e" }), forecast.CodeProfileTextInvalid},
		{"description with a left-to-right mark", with(func(f *forecast.ProfileFields) { f.Description = "a\u200eb" }), forecast.CodeProfileTextInvalid},
		{"model with a right-to-left isolate", with(func(f *forecast.ProfileFields) { f.Model = "m\u2067x\u2069" }), forecast.CodeProfileTextInvalid},
		{"control character", with(func(f *forecast.ProfileFields) { f.Name = "a\x1b[31mb" }), forecast.CodeProfileNameInvalid},
		{"newline", with(func(f *forecast.ProfileFields) { f.Name = "a\nb" }), forecast.CodeProfileNameInvalid},
		{"right-to-left override", with(func(f *forecast.ProfileFields) { f.Name = "abc\u202edcba" }), forecast.CodeProfileNameInvalid},
		{"zero-width joiner", with(func(f *forecast.ProfileFields) { f.Name = "a\u200db" }), forecast.CodeProfileNameInvalid},
		{"invalid UTF-8", with(func(f *forecast.ProfileFields) { f.Name = "a\xffb" }), forecast.CodeProfileNameInvalid},
		{"leading space", with(func(f *forecast.ProfileFields) { f.Name = " Ada" }), forecast.CodeProfileNameInvalid},
		{"double space", with(func(f *forecast.ProfileFields) { f.Name = "Ada  Lovelace" }), forecast.CodeProfileNameInvalid},
		{"full-width letters (not NFKC)", with(func(f *forecast.ProfileFields) { f.Name = "Ａｄａ" }), forecast.CodeProfileNameInvalid},
		{"organisation too long", with(func(f *forecast.ProfileFields) { f.Organisation = strings.Repeat("o", 81) }), forecast.CodeProfileTextInvalid},
		{"model with a tab", with(func(f *forecast.ProfileFields) { f.Model = "gpt\tx" }), forecast.CodeProfileTextInvalid},
		{"description too long", with(func(f *forecast.ProfileFields) { f.Description = strings.Repeat("d", 281) }), forecast.CodeProfileTextInvalid},
		{"description not NFKC", with(func(f *forecast.ProfileFields) { f.Description = "ﬁne" }), forecast.CodeProfileTextInvalid},
		{"javascript: homepage", with(func(f *forecast.ProfileFields) { f.Homepage = "javascript:alert(1)" }), forecast.CodeProfileHomepageInvalid},
		{"data: homepage", with(func(f *forecast.ProfileFields) { f.Homepage = "data:text/html,<script>alert(1)</script>" }), forecast.CodeProfileHomepageInvalid},
		{"ftp homepage", with(func(f *forecast.ProfileFields) { f.Homepage = "ftp://a.example" }), forecast.CodeProfileHomepageInvalid},
		{"relative homepage", with(func(f *forecast.ProfileFields) { f.Homepage = "/agents" }), forecast.CodeProfileHomepageInvalid},
		{"homepage without host", with(func(f *forecast.ProfileFields) { f.Homepage = "https:///x" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with credentials", with(func(f *forecast.ProfileFields) { f.Homepage = "https://u:p@a.example" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with a space", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/a b" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with a quote-breaking control", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/\x00" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with a right-to-left override", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/\u202egnp.exe" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with a right-to-left mark", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/\u200f" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with an Arabic letter mark", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/\u061c" }), forecast.CodeProfileHomepageInvalid},
		{"homepage with a zero-width space", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a\u200b.example" }), forecast.CodeProfileHomepageInvalid},
		{"homepage too long", with(func(f *forecast.ProfileFields) { f.Homepage = "https://a.example/" + strings.Repeat("a", 200) }), forecast.CodeProfileHomepageInvalid},
	}
	for _, c := range cases {
		err := forecast.CheckProfile(c.f)
		if got := arena.ErrorCode(err); (c.code == "" && err != nil) || (c.code != "" && got != c.code) {
			t.Errorf("%s: %v (code %q), want code %q", c.name, err, got, c.code)
		}
	}
	// What NormalizeProfile fixes passes; what it cannot fix still fails.
	n := forecast.NormalizeProfile(forecast.ProfileFields{Name: "  Ａｄａ\u00a0 Lovelace ", Description: "ﬁne\u3000print", Homepage: " https://a.example "})
	if want := (forecast.ProfileFields{Name: "Ada Lovelace", Description: "fine print", Homepage: "https://a.example"}); n != want {
		t.Fatalf("normalised %+v, want %+v", n, want)
	}
	if err := forecast.CheckProfile(n); err != nil || forecast.NormalizeProfile(n) != n {
		t.Fatalf("a normalised profile: %v, or normalising again changes it", err)
	}
	if err := forecast.CheckProfile(forecast.NormalizeProfile(forecast.ProfileFields{Name: "a\u202eb"})); arena.ErrorCode(err) != forecast.CodeProfileNameInvalid {
		t.Fatalf("normalising a refused character: %v", err)
	}
}

// profileEnv is a forecast service whose log lives in its own store.

// The market baseline's id is the one package stats gives the market
// baseline it adds to every analysis: the protocol spells it out rather
// than import the statistics a client does not need.
func TestMarketAgentIsScores(t *testing.T) {
	if forecast.MarketAgent != stats.MarketAgent {
		t.Fatalf("forecast.MarketAgent %q, stats.MarketAgent %q", forecast.MarketAgent, stats.MarketAgent)
	}
}

// The baselines' ids and names are reserved up to look-alikes: each of
// these passes for a baseline and is refused as taken; names that merely
// share a word are not.
func TestReservedNameLookAlikes(t *testing.T) {
	cases := []struct {
		name, s string
		taken   bool
	}{
		{"the id", "random", true},
		{"the id with a digit 0", "rand0m", true},
		{"the name with digits 0", "Rand0m (unif0rm)", true},
		{"the name in capitals with digits 0", "RAND0M (UNIF0RM)", true},
		{"the market id with kra", "mar\u0138et", true},
		{"the market name with flattened parentheses", "Market \u27EEbenchmark\u27EF", true},
		{"the market name with tortoise shell brackets", "Market \u2997benchmark\u2998", true},
		{"the market name with a small capital K", "Mar\u1D0Bet (benchmark)", true},
		{"the market name with a Bengali zero", "Market (benchm\u09E6rk)", false}, // "o" is not in "benchmark"
		{"the random id with a Bengali zero", "rand\u09E6m", true},
		{"a name with a baseline's word", "Random Forest", false},
		{"a name with a baseline's word in brackets", "Ada (benchmark)", false},
	}
	for _, c := range cases {
		err := forecast.CheckReservedName(c.s)
		if taken := err != nil; taken != c.taken {
			t.Errorf("%s: CheckReservedName(%q) = %v, want taken %v", c.name, c.s, err, c.taken)
		}
		if err != nil && !strings.Contains(err.Error(), forecast.CodeProfileNameTaken) && !strings.Contains(err.Error(), "baseline") {
			t.Errorf("%s: %v, want a name taken by a baseline", c.name, err)
		}
	}
}
