package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
)

// ReadTable reads a table written by WriteTable. Every row must have every
// column; a JSON object must have exactly the columns of the first row.
func ReadTable(r io.Reader, name, format string) (Table, error) {
	t := Table{Name: name}
	switch format {
	case CSV:
		cr := csv.NewReader(r)
		recs, err := cr.ReadAll()
		if err != nil {
			return t, fmt.Errorf("export: %s: %w", name, err)
		}
		if len(recs) == 0 {
			return t, fmt.Errorf("export: %s: no header row", name)
		}
		t.Columns = recs[0]
		for _, rec := range recs[1:] {
			row := make([]string, len(rec))
			for i, c := range rec {
				row[i] = UnescapeCell(c)
			}
			t.Rows = append(t.Rows, row)
		}
		return t, nil
	case JSONL:
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if len(sc.Bytes()) == 0 {
				continue
			}
			cols, vals, err := decodeObject(sc.Bytes())
			if err != nil {
				return t, fmt.Errorf("export: %s line %d: %w", name, line, err)
			}
			if t.Columns == nil {
				t.Columns = cols
			} else if fmt.Sprint(cols) != fmt.Sprint(t.Columns) {
				return t, fmt.Errorf("export: %s line %d: columns %v, want %v", name, line, cols, t.Columns)
			}
			t.Rows = append(t.Rows, vals)
		}
		if err := sc.Err(); err != nil {
			return t, fmt.Errorf("export: %s: %w", name, err)
		}
		return t, nil
	}
	return t, fmt.Errorf("export: format %q: want csv or jsonl", format)
}

// decodeObject decodes one JSON object of string values, keeping key order.
func decodeObject(b []byte) ([]string, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	var cols, vals []string
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := k.(string)
		if seen[key] {
			return nil, nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		var v string
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if err := json.Unmarshal(raw, &v); err != nil || raw[0] != '"' {
			return nil, nil, fmt.Errorf("value of %q: %s is not a string", key, raw)
		}
		cols, vals = append(cols, key), append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("trailing data")
	}
	return cols, vals, nil
}
