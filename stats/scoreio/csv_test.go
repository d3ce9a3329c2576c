package scoreio

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// records splits data into CSV records as body does (blank lines
// skipped, each record by splitRecord: cutFields when it has no quote),
// without the rows' checks.
func records(data []byte) ([][]string, error) {
	var out [][]string
	for pos := 0; pos < len(data); {
		switch c := data[pos]; {
		case c == '\n', c == '\r' && pos+1 < len(data) && data[pos+1] == '\n':
			pos = nextLine(data, pos)
			continue
		case c == '\r' && pos+1 == len(data):
			return out, nil
		}
		fields, _, next, _, err := splitRecord(data, pos, nil, nil)
		if err != nil {
			return out, err
		}
		var rec []string
		for _, f := range fields {
			rec = append(rec, string(f))
		}
		out = append(out, rec)
		pos = next
	}
	return out, nil
}

// csvRecords are encoding/csv's records of data, any count of fields.
func csvRecords(data []byte) ([][]string, error) {
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = -1
	var out [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// FuzzRecordsMatchEncodingCSV: the hand-written split finds encoding/csv's
// records, field for field, and fails where it fails.
func FuzzRecordsMatchEncodingCSV(f *testing.F) {
	for _, s := range []string{
		"agent,round,market\nA,1,m\n",
		"a,\"b,c\",\"d\"\"e\"\r\nf,,\n",
		"a,\"multi\nline\",b\n\n\r\nc\r",
		"a,b\"c\n",
		"\"a\"x,b\n",
		"\"open,b\n",
		"a,b,c\r\n1,2,3\r\n",
		"x\r,y\n",
		"a,\"x\r\ny\"\n",
		"a,\"x\r\r\ny\"\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := csvRecords(data)
		got, gerr := records(data)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: error %v, encoding/csv %v", data, gerr, werr)
		}
		if werr != nil {
			return
		}
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Fatalf("%q:\n got %s\nwant %s", data, show(got), show(want))
		}
	})
}

func show(recs [][]string) string { return fmt.Sprintf("%q", recs) }
