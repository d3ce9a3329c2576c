package arena_test

import (
	"strings"
	"testing"

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
