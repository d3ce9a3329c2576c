package arena

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text helpers: checking free text before it is stored, and saying counts
// in words for the command's messages and the dashboard.

// CodeInvalidText: text no column can store as given (a NUL or another
// control character, invalid UTF-8), or that would not display as stored
// (a bidirectional control).
const CodeInvalidText = "invalid_text"

// CleanText trims a free-text input field and checks that every engine
// stores it exactly as given and every page shows it in the order it is
// stored: valid UTF-8, no NUL nor any other control character but newline
// and tab, no bidirectional control (U+061C, U+200E, U+200F, U+202A to
// U+202E, U+2066 to U+2069: they reorder the text around them, so a
// reason or a name could read otherwise than it is written), at most max
// characters, and not empty when required. Every free-text field of the
// oracle's and the admin's inputs goes through it, so a value one engine
// would store and the other refuse is refused up front by both.
func CleanText(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "", Rejectf(EINVALID, CodeInvalidText, "%s is not valid UTF-8", field)
	case s == "" && required:
		return "", Errorf(EINVALID, "%s is required", field)
	case utf8.RuneCountInString(s) > max:
		return "", Errorf(EINVALID, "%s is longer than %d characters", field, max)
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r) && r != '\n' && r != '\t':
			return "", Rejectf(EINVALID, CodeInvalidText, "%s contains the control character %U", field, r)
		case unicode.Is(unicode.Bidi_Control, r):
			return "", Rejectf(EINVALID, CodeInvalidText, "%s contains the bidirectional control %U, which would show the text in another order than it is stored", field, r)
		}
	}
	return s, nil
}

// Clip shortens a client's text echoed in an error to its first 64
// characters and "…", so that an error never repeats a long input whole.
func Clip(s string) string {
	n := 0
	for i := range s {
		if n == 64 {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n++
	}
	return s
}

// Plural says a count with its noun: "1 round", "3 rounds" (every noun
// counted, in the dashboard and the command's messages, takes an s).
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// SizeText says a byte count in the largest unit that divides it ("512
// MiB", "64 KiB", "100 bytes"): how bounds on inputs are stated.
func SizeText(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
