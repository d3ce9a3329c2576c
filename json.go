package arena

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrDuplicateKey is wrapped by the errors about a JSON object that names
// a key twice: encoding/json would keep the last value silently, so two
// readers of one file could see different values.
var ErrDuplicateKey = errors.New("a JSON object names a key twice")

// CheckUniqueKeys walks the JSON value b, token by token, and fails on the
// first object that names a key twice, at any depth (an error wrapping
// ErrDuplicateKey). It checks nothing else of b: malformed JSON passes, for
// the decoder that reads b afterwards to report.
func CheckUniqueKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if seen[key] {
					return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(); errors.Is(err, ErrDuplicateKey) {
		return err
	}
	return nil
}
