package agent

import (
	"fmt"
	"testing"
)

func TestCombine(t *testing.T) {
	for _, tc := range []struct {
		method  string
		members [][]uint16
		weights []float64
		want    string
	}{
		{"mean", [][]uint16{{1000, 0}, {2000, 10000}, {4000, 5000}}, nil, "[2333 5000]"},
		{"mean", [][]uint16{{1, 0}, {2, 0}}, nil, "[2 0]"}, // 1.5 rounds half up
		{"mean", [][]uint16{{1000}, {4000}}, []float64{2, 1}, "[2000]"},
		{"median", [][]uint16{{1000}, {9000}, {4000}}, nil, "[4000]"},
		{"median", [][]uint16{{1000}, {9000}, {4000}, {5000}}, nil, "[4500]"},
		{"median", [][]uint16{{1000}, {9000}, {4000}}, []float64{1, 3, 1}, "[9000]"},
		{"median", [][]uint16{{1000}, {9000}}, []float64{1, 0}, "[1000]"},
		{"median", [][]uint16{{7}}, nil, "[7]"},
	} {
		got, err := Combine(tc.method, tc.members, tc.weights)
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%s %v %v: got %v %v, want %s", tc.method, tc.members, tc.weights, got, err, tc.want)
		}
	}
	for _, bad := range []struct {
		method  string
		members [][]uint16
		weights []float64
	}{
		{"mean", nil, nil},
		{"max", [][]uint16{{1}}, nil},
		{"mean", [][]uint16{{1}, {1, 2}}, nil},
		{"mean", [][]uint16{{1}}, []float64{0}},
		{"mean", [][]uint16{{1}}, []float64{1, 1}},
	} {
		if _, err := Combine(bad.method, bad.members, bad.weights); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
