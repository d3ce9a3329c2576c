package retrieve

import (
	"encoding/json"
	"testing"
)

func FuzzParsePacket(f *testing.F) {
	f.Add([]byte(`{"question":"q","criteria":"c","retrieved_at":"2025-01-01T00:00:00Z","query":"","sources":[{"title":"t","url":"u","published":null,"highlights":["h"]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"sources":null} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePacket(b)
		if err != nil {
			return
		}
		if p.Sources == nil {
			t.Fatal("nil sources")
		}
		// A parsed packet survives a round trip unchanged.
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := ParsePacket(out)
		if err != nil {
			t.Fatalf("reparse %s: %v", out, err)
		}
		out2, _ := json.Marshal(p2)
		if string(out) != string(out2) {
			t.Fatalf("round trip changed:\n%s\n%s", out, out2)
		}
	})
}

func FuzzParseExaResponse(f *testing.F) {
	f.Add([]byte(exaResult))
	f.Add([]byte(`{"results":[{"publishedDate":"garbage"}]}`))
	f.Add([]byte(`{"results":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		src, err := ParseExaResponse(b)
		if err != nil {
			return
		}
		for _, s := range src {
			if s.Highlights == nil {
				t.Fatal("nil highlights")
			}
			if s.Published != nil && s.Published.Location().String() != "UTC" {
				t.Fatal("date not UTC")
			}
		}
	})
}
