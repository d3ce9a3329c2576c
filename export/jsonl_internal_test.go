package export

import (
	"encoding/json"
	"testing"
)

// A JSON Lines cell is written exactly as json.Marshal writes the string,
// so that the fast path for plain ASCII changes no exported byte.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "123", "0xAbC", "2026-01-01T00:00:00Z", `a "quote"`, `back\slash`, "<tag>&", "tab\there", "\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "\xff\xfe broken", "=1+2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: wrote %s, json.Marshal %s", s, got[1:], want)
		}
	})
}
