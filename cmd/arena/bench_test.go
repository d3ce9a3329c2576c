package main

import (
	"encoding/json"
	"testing"
)

func TestBenchCommand(t *testing.T) {
	t.Parallel()
	out, _, err := cli(t, nil, "bench", "--rows", "20000", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 3 {
		t.Fatalf("%v %s", err, out)
	}
	for _, r := range res {
		if !(r.Throughput > 0) || (r.Baseline != "" && !(r.Ratio > 0)) {
			t.Errorf("%+v", r)
		}
	}
	if _, _, err := cli(t, nil, "bench", "--rows", "5"); err == nil {
		t.Error("--rows 5 accepted")
	}
}
