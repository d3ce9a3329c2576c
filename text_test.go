package arena_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/forecast-arena/arena"
)

// CleanText: what every free-text field of the oracle's and the admin's
// inputs is refused for, with its code, and what it keeps.
func TestCleanText(t *testing.T) {
	cases := []struct {
		name, s string
		want    string // the cleaned text, when accepted
		code    string // the refusal's code; "" accepted
	}{
		{"trimmed", "  a reason \n", "a reason", ""},
		{"newline and tab kept", "line one\n\tline two", "line one\n\tline two", ""},
		{"right-to-left text", "السبب واضح", "السبب واضح", ""},
		{"emoji with a zero-width joiner", "👩\u200d💻 decided", "👩\u200d💻 decided", ""},
		{"empty but required", "   ", "", arena.EINVALID},
		{"too long", strings.Repeat("a", 11), "", arena.EINVALID},
		{"NUL", "a\x00b", "", arena.CodeInvalidText},
		{"escape", "a\x1b[31mb", "", arena.CodeInvalidText},
		{"invalid UTF-8", "a\xffb", "", arena.CodeInvalidText},
		{"right-to-left override", "abc\u202edcba", "", arena.CodeInvalidText},
		{"left-to-right embedding", "\u202aabc", "", arena.CodeInvalidText},
		{"right-to-left isolate", "a\u2067b\u2069", "", arena.CodeInvalidText},
		{"first strong isolate", "a\u2068b", "", arena.CodeInvalidText},
		{"right-to-left mark", "a\u200fb", "", arena.CodeInvalidText},
		{"left-to-right mark", "a\u200eb", "", arena.CodeInvalidText},
		{"Arabic letter mark", "a\u061cb", "", arena.CodeInvalidText},
	}
	for _, c := range cases {
		got, err := arena.CleanText("the reason", c.s, 10+len(c.want), true)
		switch {
		case c.code == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		case c.code != "" && arena.ErrorCode(err) != c.code:
			t.Errorf("%s: %q %v, want code %s", c.name, got, err, c.code)
		}
	}
}

// Every bidirectional control Unicode lists (unicode.Bidi_Control, not
// only the ones named above) is refused in every text of the oracle's
// admin inputs: a dispute's admin and reason, a flag's reason, an
// arbiter's name and reason.
func TestOracleTextsRefuseEveryBidiControl(t *testing.T) {
	n := 0
	for _, rg := range unicode.Bidi_Control.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			n++
			s := "a" + string(r) + "b"
			for name, validate := range map[string]func() error{
				"dispute admin":   (&arena.OracleDispute{MarketID: 1, Admin: s, Reason: "wrong"}).Validate,
				"dispute reason":  (&arena.OracleDispute{MarketID: 1, Admin: "ann", Reason: s}).Validate,
				"flag reason":     (&arena.OracleFlag{MarketID: 1, Reason: s}).Validate,
				"arbiter name":    (&arena.OracleDecisionInput{MarketID: 1, Decision: "YES", Arbiter: s}).Validate,
				"decision reason": (&arena.OracleDecisionInput{MarketID: 1, Decision: "YES", Arbiter: "bob", Reason: s}).Validate,
			} {
				if err := validate(); arena.ErrorCode(err) != arena.CodeInvalidText {
					t.Errorf("%s with %U: %v, want %s", name, r, err, arena.CodeInvalidText)
				}
			}
		}
	}
	if n < 12 || len(unicode.Bidi_Control.R32) != 0 {
		t.Fatalf("%d bidirectional controls (and %d ranges above U+FFFF) seen", n, len(unicode.Bidi_Control.R32))
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"short", "abc", "abc"},
		{"64 characters", strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{"65 characters", strings.Repeat("a", 65), strings.Repeat("a", 64) + "…"},
		{"counted in characters, not bytes", strings.Repeat("é", 70), strings.Repeat("é", 64) + "…"},
		{"invalid UTF-8 in a long text is replaced", "\xff" + strings.Repeat("a", 70), "\uFFFD" + strings.Repeat("a", 63) + "…"},
	} {
		if got := arena.Clip(c.in); got != c.want {
			t.Errorf("%s: Clip = %q, want %q", c.name, got, c.want)
		}
	}
}
