package witness

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
)

// maxProof is the most consistency proof lines a request may carry: a
// proof between trees of at most 2^63 leaves has fewer.
const maxProof = 63

// FormatAddCheckpoint is an add-checkpoint request body: the old size
// line, the consistency proof one hash a line, a blank line, then the
// checkpoint note.
func FormatAddCheckpoint(oldSize uint64, proof [][]byte, checkpoint []byte) []byte {
	b := fmt.Appendf(nil, "old %d\n", oldSize)
	for _, h := range proof {
		b = append(b, base64.StdEncoding.EncodeToString(h)...)
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, checkpoint...)
}

// ParseAddCheckpoint parses an add-checkpoint request body (see
// FormatAddCheckpoint); errors wrap ErrMalformed. The checkpoint note is
// returned unverified.
func ParseAddCheckpoint(body []byte) (oldSize uint64, proof [][]byte, checkpoint []byte, err error) {
	line, rest, ok := bytes.Cut(body, []byte("\n"))
	num, isOld := bytes.CutPrefix(line, []byte("old "))
	if !ok || !isOld {
		return 0, nil, nil, fmt.Errorf("%w: the first line is not \"old <size>\"", ErrMalformed)
	}
	oldSize, err = strconv.ParseUint(string(num), 10, 64)
	if err != nil || string(num) != strconv.FormatUint(oldSize, 10) {
		return 0, nil, nil, fmt.Errorf("%w: old size %q is not a decimal without leading zeros", ErrMalformed, num)
	}
	for {
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			return 0, nil, nil, fmt.Errorf("%w: no blank line before the checkpoint", ErrMalformed)
		}
		if len(line) == 0 {
			break
		}
		if len(proof) == maxProof {
			return 0, nil, nil, fmt.Errorf("%w: more than %d proof lines", ErrMalformed, maxProof)
		}
		h, err := base64.StdEncoding.Strict().DecodeString(string(line))
		if err != nil || len(h) != 32 || base64.StdEncoding.EncodeToString(h) != string(line) {
			return 0, nil, nil, fmt.Errorf("%w: proof line %q is not a base64 hash", ErrMalformed, line)
		}
		proof = append(proof, h)
	}
	if len(rest) == 0 {
		return 0, nil, nil, fmt.Errorf("%w: no checkpoint", ErrMalformed)
	}
	return oldSize, proof, rest, nil
}
