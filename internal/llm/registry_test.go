package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
)

const goodRegistry = `{
  "agents": [
    {"id": "gpt-4o", "name": "GPT-4o", "provider": "openrouter", "model": "openai/gpt-4o",
     "api_key_env": "OPENROUTER_API_KEY", "max_tokens": 4096, "timeout": "90s",
     "input_usd_per_mtok": 2.5, "output_usd_per_mtok": 10, "training_cutoff": "2024-10-01"},
    {"id": "qwen-local", "provider": "local", "model": "Qwen/Qwen3-8B", "base_url": "http://127.0.0.1:8000/v1",
     "temperature": 0.2, "timeout": 30, "input_usd_per_mtok": 0, "output_usd_per_mtok": 0},
    {"id": "deepseek-r1", "name": "DeepSeek R1", "model": "deepseek/deepseek-r1", "api_key_env": "OPENROUTER_API_KEY",
     "input_usd_per_mtok": 0.55, "output_usd_per_mtok": 2.19}
  ]
}`

func TestParseRegistryDefaults(t *testing.T) {
	reg, err := ParseRegistry(strings.NewReader(goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Agents) != 3 {
		t.Fatalf("%d agents", len(reg.Agents))
	}
	g := reg.Agents[0]
	if g.Name != "GPT-4o" || g.BaseURL != OpenRouterBaseURL || g.Temperature != 0 || g.MaxTokens != 4096 ||
		time.Duration(g.Timeout) != 90*time.Second || g.InputUSDPerMtok != 2_500_000 || g.OutputUSDPerMtok != 10_000_000 ||
		g.TrainingCutoff.Format(time.DateOnly) != "2024-10-01" {
		t.Errorf("gpt-4o = %+v", g)
	}
	q := reg.Agents[1]
	if q.Name != "qwen-local" || q.Temperature != 0.2 || time.Duration(q.Timeout) != 30*time.Second || q.APIKeyEnv != "" {
		t.Errorf("qwen = %+v", q)
	}
	d, ok := reg.Agent("deepseek-r1")
	if !ok || d.Provider != ProviderOpenRouter || time.Duration(d.Timeout) != DefaultTimeout || d.InputUSDPerMtok != 550_000 ||
		d.OutputUSDPerMtok != 2_190_000 || !d.TrainingCutoff.IsZero() {
		t.Errorf("deepseek = %+v", d)
	}
	if _, ok := reg.Agent("nope"); ok {
		t.Error("unknown agent found")
	}
}

func TestParseRegistryErrors(t *testing.T) {
	cases := []struct {
		name, json string
		want       []string // substrings of the error
	}{
		{"unknown top-level field", `{"agents":[], "models":[]}`, []string{`unknown field "models"`}},
		{"unknown agent field", `{"agents":[{"id":"a","model":"m","api_key_env":"K","input_usd_per_mtok":1,"output_usd_per_mtok":1,"temprature":0}]}`,
			[]string{`agent "a"`, `unknown field "temprature"`}},
		{"no agents", `{"agents":[]}`, []string{"no agents"}},
		{"trailing data", `{"agents":[{"id":"a","model":"m","provider":"local","base_url":"http://h","input_usd_per_mtok":1,"output_usd_per_mtok":1}]} {}`, []string{"after the top-level object"}},
		{"syntax error has a line", "{\"agents\": [\n{\"id\": \"a\",,}]}", []string{"line 2"}},
		{"duplicate id", `{"agents":[
			{"id":"a","model":"m","api_key_env":"K","input_usd_per_mtok":1,"output_usd_per_mtok":1},
			{"id":"a","model":"m2","api_key_env":"K","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`,
			[]string{`agents[1] (id "a"): field "id": duplicates agents[0]`}},
		{"unknown provider", `{"agents":[{"id":"a","model":"m","provider":"vllm","base_url":"http://127.0.0.1:8000/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0}]}`,
			[]string{`field "provider": unknown provider "vllm": want one of openrouter, openai, local`}},
		{"everything wrong at once", `{"agents":[{"id":"Bad Id","provider":"local","temperature":3,"max_tokens":-1,"timeout":"0s"}]}`,
			[]string{`field "id"`, `field "model": required`, `field "base_url": required for provider "local"`,
				`field "temperature": must be in [0, 2]`, `field "max_tokens"`, `field "timeout": must be positive`,
				`field "input_usd_per_mtok": required`, `field "output_usd_per_mtok": required`}},
		{"missing id", `{"agents":[{"model":"m","api_key_env":"K","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`, []string{`agents[0]: field "id": required`}},
		{"openrouter needs a key env", `{"agents":[{"id":"a","model":"m","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`, []string{`field "api_key_env": required for provider "openrouter"`}},
		{"bad base url", `{"agents":[{"id":"a","model":"m","provider":"local","base_url":"localhost:8000","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`, []string{`field "base_url": must be an http`}},
		{"price with 7 decimals", `{"agents":[{"id":"a","model":"m","api_key_env":"K","input_usd_per_mtok":0.0000001,"output_usd_per_mtok":1}]}`, []string{"at most 6 decimals"}},
		{"negative price", `{"agents":[{"id":"a","model":"m","api_key_env":"K","input_usd_per_mtok":-1,"output_usd_per_mtok":1}]}`, []string{"non-negative"}},
		{"bad timeout", `{"agents":[{"id":"a","model":"m","api_key_env":"K","timeout":"soon","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`, []string{`duration "soon"`}},
		{"bad cutoff", `{"agents":[{"id":"a","model":"m","api_key_env":"K","training_cutoff":"Oct 2024","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`, []string{"YYYY-MM-DD"}},
	}
	for _, tc := range cases {
		_, err := ParseRegistry(strings.NewReader(tc.json))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%s: kind %s (%v)", tc.name, arena.ErrorKind(err), err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestRegistryRoundTrip(t *testing.T) {
	reg, err := ParseRegistry(strings.NewReader(goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	// A cohort freezes the spec as JSON (T9); it must parse back identically.
	b, err := json.Marshal(reg)
	if err != nil {
		t.Fatal(err)
	}
	reg2, err := ParseRegistry(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	b2, _ := json.Marshal(reg2)
	if string(b) != string(b2) {
		t.Errorf("round trip changed:\n%s\n%s", b, b2)
	}
	if !strings.Contains(string(b), `"input_usd_per_mtok":2.5`) || !strings.Contains(string(b), `"timeout":"1m30s"`) ||
		!strings.Contains(string(b), `"training_cutoff":"2024-10-01"`) {
		t.Errorf("marshalled form: %s", b)
	}
}

func TestClientsSkipMissingKeys(t *testing.T) {
	reg, err := ParseRegistry(strings.NewReader(goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	// No key in the environment: both OpenRouter agents skip, the local one runs.
	clients, skipped := reg.Clients(EnvLookup([]string{"HOME=/root", "OPENROUTER_API_KEY="}))
	if len(clients) != 1 || clients[0].Spec().ID != "qwen-local" {
		t.Errorf("clients %d", len(clients))
	}
	if len(skipped) != 2 || skipped[0].ID != "gpt-4o" || skipped[1].ID != "deepseek-r1" ||
		!strings.Contains(skipped[0].Reason, "OPENROUTER_API_KEY is not set") {
		t.Errorf("skipped %+v", skipped)
	}
	if s := skipped[0].String(); !strings.Contains(s, `agent "gpt-4o" (GPT-4o) skipped`) {
		t.Errorf("String() = %q", s)
	}
	clients, skipped = reg.Clients(EnvLookup([]string{"OPENROUTER_API_KEY=sk-or-1"}))
	if len(clients) != 3 || len(skipped) != 0 {
		t.Errorf("with key: %d clients, skipped %+v", len(clients), skipped)
	}
}

func TestLoadRegistry(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(p, []byte(goodRegistry), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRegistry(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"agents":[{"id":"x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadRegistry(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `(id "x")`) {
		t.Errorf("error %v should name the file and agent", err)
	}
	if _, err := LoadRegistry(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	// A file past the bound is refused as such, not as truncated JSON.
	padded := `{"agents":[` + strings.Repeat(" ", maxRegistryBytes) + `]}`
	if err := os.WriteFile(p, []byte(padded), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRegistry(p); err == nil || !strings.Contains(err.Error(), p+": agents file: larger than 16 MiB, the limit of an agents file") {
		t.Errorf("oversized agents file: %v", err)
	}
}

func TestParseMicros(t *testing.T) {
	good := map[string]int64{"0": 0, "2.5": 2_500_000, "10": 10_000_000, "0.000001": 1, "1e-6": 1, "1.5e2": 150_000_000, "0.123456": 123_456, "3.10": 3_100_000}
	for s, want := range good {
		got, err := parseMicros(s)
		if err != nil || got != want {
			t.Errorf("parseMicros(%q) = %d, %v; want %d", s, got, err, want)
		}
		if back := formatMicros(got); func() bool { v, _ := parseMicros(back); return v != got }() {
			t.Errorf("formatMicros(%d) = %q does not parse back", got, back)
		}
	}
	for _, s := range []string{"", "-1", "0.0000001", "abc", ".5", "1.2.3", "1e-7", "NaN", "1e300"} {
		if v, err := parseMicros(s); err == nil {
			t.Errorf("parseMicros(%q) = %d, want error", s, v)
		}
	}
}

func TestLineupFreezesSpec(t *testing.T) {
	reg, err := ParseRegistry(strings.NewReader(goodRegistry))
	if err != nil {
		t.Fatal(err)
	}
	e, err := reg.Agents[0].Lineup()
	if err != nil {
		t.Fatal(err)
	}
	if e.AgentID != "gpt-4o" || e.Name != "GPT-4o" || e.Kind != "llm" || e.Provider != "openrouter" || e.Model != "openai/gpt-4o" ||
		e.InputMicrosPerMtok != 2_500_000 || e.OutputMicrosPerMtok != 10_000_000 {
		t.Errorf("entry %+v", e)
	}
	// The frozen spec parses back as a registry entry.
	back, err := ParseRegistry(strings.NewReader(`{"agents":[` + string(e.Spec) + `]}`))
	if err != nil || back.Agents[0].Model != "openai/gpt-4o" || time.Duration(back.Agents[0].Timeout) != 90*time.Second {
		t.Errorf("frozen spec %s: %v", e.Spec, err)
	}
}

func TestRegistryEnsembles(t *testing.T) {
	base := `{"id":"a","provider":"local","model":"m","base_url":"http://x/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0},
	{"id":"b","provider":"local","model":"m2","base_url":"http://x/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0}`
	reg, err := ParseRegistry(strings.NewReader(`{"max_usd":1.5,"agents":[` + base + `,{"id":"e","kind":"ensemble","members":["a","b"],"combine":"median","weights":[1,2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := reg.Agent("e")
	if !e.IsEnsemble() || e.Combine != "median" || len(e.Members) != 2 || reg.MaxUSD != 1_500_000 {
		t.Errorf("parsed %+v max %d", e, reg.MaxUSD)
	}
	if cs, sk := reg.Clients(EnvLookup(nil)); len(cs) != 2 || len(sk) != 1 || sk[0].ID != "e" {
		t.Errorf("clients %d skipped %+v", len(cs), sk)
	}
	for _, bad := range []string{
		`{"id":"e","kind":"ensemble","members":["a","zz"],"combine":"mean"}`,
		`{"id":"e","kind":"ensemble","members":["a"],"combine":"max"}`,
		`{"id":"e","kind":"ensemble","members":["a","b"],"combine":"mean","weights":[1]}`,
		`{"id":"e","kind":"ensemble","members":[],"combine":"mean"}`,
		`{"id":"e","kind":"ensemble","members":["a","a"],"combine":"mean"}`,
		`{"id":"e","kind":"team","members":["a"],"combine":"mean"}`,
	} {
		if _, err := ParseRegistry(strings.NewReader(`{"agents":[` + base + `,` + bad + `]}`)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
