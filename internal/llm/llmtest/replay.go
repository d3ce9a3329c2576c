package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Exchange is one recorded (or project-made) chat-completions response:
// what a provider answered, byte for byte where the recording keeps bytes
// (SSE streams, text bodies) and re-serialised from the recording's parsed
// form otherwise (same fields, same values).
type Exchange struct {
	// Name says where it comes from: "<dir>/<file>#<n>" for the n-th
	// chat-completions interaction of a recorded cassette, or
	// "project-made/<name>" for a body this project wrote.
	Name   string
	Status int
	// Header holds the response headers that matter to a client
	// (Content-Type, Retry-After, Retry-After-Ms); framing headers of the
	// recording (Content-Length, Transfer-Encoding, Content-Encoding) are
	// dropped because the body is re-serialised.
	Header map[string]string
	Body   string
	// ProjectMade marks a body written by this project, modelled on a
	// provider's documentation, for a failure class the recordings lack.
	ProjectMade bool
	// Source names the documentation a project-made body follows.
	Source string
}

// Reply serves the exchange as it was recorded.
func (e Exchange) Reply() Reply {
	return Reply{Status: e.Status, Header: e.Header, Body: e.Body}
}

// Stream reports a server-sent-events body.
func (e Exchange) Stream() bool {
	return strings.HasPrefix(e.Header["Content-Type"], "text/event-stream")
}

// Completion decodes a JSON body as a generic object; ok is false for
// streams, text and bodies that are not a JSON object.
func (e Exchange) Completion() (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(e.Body), &m) != nil {
		return nil, false
	}
	return m, true
}

// cassette is the part of a VCR cassette (as pydantic-ai records them)
// that a replay needs.
type cassette struct {
	Interactions []struct {
		Request struct {
			URI string `yaml:"uri"`
		} `yaml:"request"`
		Response struct {
			Headers    map[string][]string `yaml:"headers"`
			ParsedBody any                 `yaml:"parsed_body"`
			Body       any                 `yaml:"body"`
			Status     struct {
				Code int `yaml:"code"`
			} `yaml:"status"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// keptHeaders are the response headers a replay sends.
var keptHeaders = []string{"Content-Type", "Retry-After", "Retry-After-Ms"}

// LoadCassettes reads every YAML cassette under root and returns its
// chat-completions responses (requests to any …/chat/completions URL) in
// file order, named relative to root. Other interactions (other APIs,
// downloads) are left out.
func LoadCassettes(root string) ([]Exchange, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("llmtest: list cassettes: %w", err)
	}
	slices.Sort(files)
	var out []Exchange
	for _, f := range files {
		ex, err := loadCassette(root, f)
		if err != nil {
			return nil, err
		}
		out = append(out, ex...)
	}
	return out, nil
}

func loadCassette(root, path string) ([]Exchange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	var c cassette
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("llmtest: cassette %s: %w", path, err)
	}
	rel, _ := filepath.Rel(root, path)
	name := filepath.Base(filepath.Dir(rel)) + "/" + filepath.Base(rel)
	var out []Exchange
	for i, it := range c.Interactions {
		u := strings.TrimSuffix(strings.SplitN(it.Request.URI, "#", 2)[0], "/")
		if !strings.HasSuffix(u, "/chat/completions") {
			continue
		}
		rs := it.Response
		ex := Exchange{Name: fmt.Sprintf("%s#%d", name, i), Status: rs.Status.Code, Header: map[string]string{}}
		for k, v := range rs.Headers {
			ck := http.CanonicalHeaderKey(k)
			if slices.Contains(keptHeaders, ck) && len(v) > 0 {
				ex.Header[ck] = v[0]
			}
		}
		switch {
		case rs.ParsedBody != nil:
			j, err := json.Marshal(rs.ParsedBody)
			if err != nil {
				return nil, fmt.Errorf("llmtest: cassette %s interaction %d: %w", path, i, err)
			}
			ex.Body = string(j)
		default:
			switch v := rs.Body.(type) {
			case string:
				ex.Body = v
			case map[string]any:
				ex.Body, _ = v["string"].(string)
			}
		}
		out = append(out, ex)
	}
	return out, nil
}
