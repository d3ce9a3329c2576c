package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	arena "github.com/forecast-arena/arena"
)

// The providers a registry may name. OpenRouter and OpenAI have default
// base URLs; "local" is any other OpenAI-compatible server (vLLM,
// llama.cpp, Ollama …) at the base_url the entry gives. Any other name is
// refused, so a typo cannot pass for a provider.
const (
	ProviderOpenRouter = "openrouter"
	ProviderOpenAI     = "openai"
	ProviderLocal      = "local"
)

// Providers lists the provider names a registry accepts.
var Providers = []string{ProviderOpenRouter, ProviderOpenAI, ProviderLocal}

// Default base URLs of the known providers.
const (
	OpenRouterBaseURL = "https://openrouter.ai/api/v1"
	OpenAIBaseURL     = "https://api.openai.com/v1"
)

// DefaultTimeout bounds one model call attempt when the registry gives none.
const DefaultTimeout = 120 * time.Second

// ModelSpec is one LLM agent of the registry. ID is the stable
// internal identifier used for joins and must never be reused for another
// model; Name is only for display and may change. A ModelSpec marshals to
// the same JSON shape it is parsed from, so a cohort can freeze the exact
// spec it ran with.
type ModelSpec struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Provider    string  `json:"provider"`
	Model       string  `json:"model"`
	BaseURL     string  `json:"base_url"`
	APIKeyEnv   string  `json:"api_key_env"`
	Temperature float64 `json:"temperature"`
	// MaxTokens caps completion tokens; 0 leaves the provider's default.
	MaxTokens        int            `json:"max_tokens"`
	Timeout          arena.Duration `json:"timeout"`
	InputUSDPerMtok  Price          `json:"input_usd_per_mtok"`
	OutputUSDPerMtok Price          `json:"output_usd_per_mtok"`
	TrainingCutoff   Date           `json:"training_cutoff"`
	// MaxUSD caps what the agent may spend in one run (0: no cap).
	MaxUSD Price `json:"max_usd,omitempty"`
	// NoTools marks a model without tool calling: it is asked for a JSON
	// answer instead.
	NoTools bool `json:"no_tools,omitempty"`
	// Kind is "" (a model) or KindEnsemble: an agent that combines the
	// forecasts of Members by Combine ("mean" or "median"), with optional
	// Weights aligned with Members.
	Kind              string    `json:"kind,omitempty"`
	Members           []string  `json:"members,omitempty"`
	Combine           string    `json:"combine,omitempty"`
	Weights           []float64 `json:"weights,omitempty"`
	temperatureSet    bool
	timeoutSet        bool
	inputPriceSet     bool
	outputPriceSet    bool
	trainingCutoffSet bool
}

// Cost returns the cost in integer micro-dollars of a call that used the
// given tokens. A price of P USD per million tokens is P micro-dollars per
// token, so prices are stored as micro-dollars per Mtok (6 decimals exact)
// and the product is divided by 10^6 once, rounding half up: each call's
// cost is within half a micro-dollar of the exact value.
func (s *ModelSpec) Cost(inputTokens, outputTokens int64) int64 {
	num := inputTokens*int64(s.InputUSDPerMtok) + outputTokens*int64(s.OutputUSDPerMtok)
	if num <= 0 {
		return 0
	}
	return (num + 500_000) / 1_000_000
}

// KindEnsemble is the registry kind of an agent that combines its
// members' forecasts (forecast track only).
const KindEnsemble = "ensemble"

// IsEnsemble reports whether the entry is an ensemble, not a model.
func (s *ModelSpec) IsEnsemble() bool { return s.Kind == KindEnsemble }

// Registry is a parsed model registry file (`--agents FILE`).
type Registry struct {
	// MaxUSD caps what all agents together may spend in one run (0: no cap).
	MaxUSD Price       `json:"max_usd,omitempty"`
	Agents []ModelSpec `json:"agents"`
}

// Skipped is an agent of the registry that cannot run, with the reason.
type Skipped struct {
	ID     string
	Name   string
	Reason string
}

func (s Skipped) String() string {
	return fmt.Sprintf("agent %q (%s) skipped: %s", s.ID, s.Name, s.Reason)
}

// LoadRegistry reads and validates a registry file.
func LoadRegistry(path string) (*Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llm: open agents file: %w", err)
	}
	defer f.Close()
	reg, err := ParseRegistry(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reg, nil
}

// maxRegistryBytes bounds an agents file, which lists a few models.
const maxRegistryBytes = 16 << 20

// ParseRegistry decodes and validates a registry. Decoding is strict:
// unknown fields, trailing data and duplicate ids are errors. All validation
// problems are reported together, each naming the agent and the field.
// Defaults: name = id, provider = openrouter, base_url = the provider's,
// temperature 0, timeout 120s.
func ParseRegistry(r io.Reader) (*Registry, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRegistryBytes+1))
	if err != nil {
		return nil, fmt.Errorf("llm: read agents file: %w", err)
	}
	if len(data) > maxRegistryBytes {
		return nil, arena.Errorf(arena.EINVALID, "agents file: larger than %d MiB, the limit of an agents file", maxRegistryBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var reg Registry
	if err := dec.Decode(&reg); err != nil {
		return nil, arena.Errorf(arena.EINVALID, "agents file: %s", describeJSONError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, arena.Errorf(arena.EINVALID, "agents file: unexpected data after the top-level object")
	}
	if err := reg.validate(); err != nil {
		return nil, err
	}
	return &reg, nil
}

// describeJSONError adds a line number to syntax and type errors.
func describeJSONError(data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Sprintf("line %d: %v", line, err)
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func (reg *Registry) validate() error {
	if len(reg.Agents) == 0 {
		return arena.Errorf(arena.EINVALID, "agents file: no agents")
	}
	var errs []string
	seen := make(map[string]int)
	for i := range reg.Agents {
		a := &reg.Agents[i]
		who := fmt.Sprintf("agents[%d]", i)
		if a.ID != "" {
			who = fmt.Sprintf("agents[%d] (id %q)", i, a.ID)
		}
		bad := func(field, format string, args ...any) {
			errs = append(errs, fmt.Sprintf("%s: field %q: %s", who, field, fmt.Sprintf(format, args...)))
		}
		switch {
		case a.ID == "":
			bad("id", "required")
		case !idPattern.MatchString(a.ID):
			bad("id", "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
		default:
			if j, dup := seen[a.ID]; dup {
				bad("id", "duplicates agents[%d]; ids must be unique", j)
			}
			seen[a.ID] = i
		}
		if a.Name == "" {
			a.Name = a.ID
		}
		switch a.Kind {
		case "":
		case KindEnsemble:
			continue // checked below, once every id is known
		default:
			bad("kind", "want \"\" (a model) or %q, got %q", KindEnsemble, a.Kind)
		}
		checkModel(a, bad)
	}
	for i := range reg.Agents {
		a := &reg.Agents[i]
		if !a.IsEnsemble() {
			continue
		}
		bad := func(field, format string, args ...any) {
			errs = append(errs, fmt.Sprintf("agents[%d] (id %q): field %q: %s", i, a.ID, field, fmt.Sprintf(format, args...)))
		}
		reg.checkEnsemble(a, seen, bad)
	}
	if len(errs) > 0 {
		return arena.Errorf(arena.EINVALID, "agents file: %s", strings.Join(errs, "; "))
	}
	return nil
}

// checkModel checks a model's fields through bad, and fills in the
// defaults of those left out: the provider, its base URL and the timeout.
func checkModel(a *ModelSpec, bad func(field, format string, args ...any)) {
	if len(a.Members) > 0 || a.Combine != "" || len(a.Weights) > 0 {
		bad("members", "only an agent of kind %q has members, combine or weights", KindEnsemble)
	}
	if strings.TrimSpace(a.Model) == "" {
		bad("model", "required")
	}
	if a.Provider == "" {
		a.Provider = ProviderOpenRouter
	}
	if !slices.Contains(Providers, a.Provider) {
		bad("provider", "unknown provider %q: want one of %s (%q for any other OpenAI-compatible server, with its base_url)",
			a.Provider, strings.Join(Providers, ", "), ProviderLocal)
	}
	if a.BaseURL == "" {
		switch a.Provider {
		case ProviderOpenRouter:
			a.BaseURL = OpenRouterBaseURL
		case ProviderOpenAI:
			a.BaseURL = OpenAIBaseURL
		default:
			bad("base_url", "required for provider %q", a.Provider)
		}
	} else if !strings.HasPrefix(a.BaseURL, "http://") && !strings.HasPrefix(a.BaseURL, "https://") {
		bad("base_url", "must be an http:// or https:// URL, got %q", a.BaseURL)
	}
	if a.APIKeyEnv == "" && (a.Provider == ProviderOpenRouter || a.Provider == ProviderOpenAI) {
		bad("api_key_env", "required for provider %q", a.Provider)
	}
	if a.temperatureSet && (a.Temperature < 0 || a.Temperature > 2) {
		bad("temperature", "must be in [0, 2], got %v", a.Temperature)
	}
	if a.MaxTokens < 0 {
		bad("max_tokens", "must not be negative, got %d", a.MaxTokens)
	}
	if !a.timeoutSet {
		a.Timeout = arena.Duration(DefaultTimeout)
	} else if a.Timeout <= 0 {
		bad("timeout", "must be positive")
	}
	if !a.inputPriceSet {
		bad("input_usd_per_mtok", "required (use 0 for a free model)")
	}
	if !a.outputPriceSet {
		bad("output_usd_per_mtok", "required (use 0 for a free model)")
	}
}

// checkEnsemble checks an ensemble's fields through bad: its members,
// among the ids seen (to their index), must be distinct models, and its
// weights, if any, one non-negative number for each, not all zero.
func (reg *Registry) checkEnsemble(a *ModelSpec, seen map[string]int, bad func(field, format string, args ...any)) {
	if a.Model != "" || a.BaseURL != "" || a.APIKeyEnv != "" {
		bad("model", "an ensemble has members, not a model, base_url or api_key_env")
	}
	if len(a.Members) == 0 {
		bad("members", "required for an ensemble")
	}
	dup := map[string]bool{}
	for _, m := range a.Members {
		j, ok := seen[m]
		switch {
		case !ok:
			bad("members", "unknown agent %q", m)
		case reg.Agents[j].IsEnsemble():
			bad("members", "member %q is an ensemble; members must be models", m)
		case dup[m]:
			bad("members", "member %q listed twice", m)
		}
		dup[m] = true
	}
	switch a.Combine {
	case "mean", "median":
	default:
		bad("combine", "want \"mean\" or \"median\", got %q", a.Combine)
	}
	if len(a.Weights) > 0 {
		if len(a.Weights) != len(a.Members) {
			bad("weights", "%d weights for %d members", len(a.Weights), len(a.Members))
		}
		sum := 0.0
		for _, w := range a.Weights {
			if !(w >= 0) || w > 1e6 {
				bad("weights", "must be non-negative numbers, got %v", w)
			}
			sum += w
		}
		if !(sum > 0) {
			bad("weights", "must not all be zero")
		}
	}
}

// UnmarshalJSON records which optional fields were present so defaults and
// "required" checks can tell absent from zero.
func (s *ModelSpec) UnmarshalJSON(data []byte) error {
	type plain ModelSpec
	var present map[string]json.RawMessage
	if err := json.Unmarshal(data, &present); err != nil {
		return err
	}
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		// Name the agent: the decoder's own message does not say which.
		var id string
		_ = json.Unmarshal(present["id"], &id)
		return fmt.Errorf("agent %q: %w", id, err)
	}
	*s = ModelSpec(p)
	has := func(k string) bool { v, ok := present[k]; return ok && string(v) != "null" }
	s.temperatureSet = has("temperature")
	s.timeoutSet = has("timeout")
	s.inputPriceSet = has("input_usd_per_mtok")
	s.outputPriceSet = has("output_usd_per_mtok")
	s.trainingCutoffSet = has("training_cutoff")
	return nil
}

// clientFor returns a client for one agent, looking its key up with getenv.
// An agent with an api_key_env whose variable is unset or empty is skipped
// with the reason.
func clientFor(spec ModelSpec, getenv func(string) (string, bool), opts []Option) (*Client, *Skipped) {
	key := ""
	if spec.APIKeyEnv != "" {
		v, ok := getenv(spec.APIKeyEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, &Skipped{ID: spec.ID, Name: spec.Name, Reason: fmt.Sprintf("environment variable %s is not set", spec.APIKeyEnv)}
		}
		key = strings.TrimSpace(v)
	}
	c, err := NewClient(spec, key, opts...)
	if err != nil {
		return nil, &Skipped{ID: spec.ID, Name: spec.Name, Reason: err.Error()}
	}
	return c, nil
}

// Clients builds a client per agent. Agents that cannot run (missing key)
// are returned in skipped with a clear reason; this never fails as a whole.
// getenv is typically os.LookupEnv.
func (reg *Registry) Clients(getenv func(string) (string, bool), opts ...Option) (clients []*Client, skipped []Skipped) {
	for _, spec := range reg.Agents {
		if spec.IsEnsemble() {
			skipped = append(skipped, Skipped{ID: spec.ID, Name: spec.Name, Reason: "an ensemble has no model client"})
			continue
		}
		c, sk := clientFor(spec, getenv, opts)
		if sk != nil {
			skipped = append(skipped, *sk)
			continue
		}
		clients = append(clients, c)
	}
	return clients, skipped
}

// Agent returns the spec with the given id.
func (reg *Registry) Agent(id string) (ModelSpec, bool) {
	for _, a := range reg.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return ModelSpec{}, false
}

// EnvLookup adapts a KEY=VALUE environment list (as cmd/arena's Env holds)
// to a getenv function; later entries win, as in os/exec.
func EnvLookup(environ []string) func(string) (string, bool) {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Price is USD per million tokens held exactly as integer micro-dollars per
// million tokens (so at most 6 decimals). It reads and writes a JSON number.
type Price int64

func (p Price) MarshalJSON() ([]byte, error) { return []byte(formatMicros(int64(p))), nil }

func (p *Price) UnmarshalJSON(b []byte) error {
	v, err := parseMicros(string(b))
	if err != nil {
		return fmt.Errorf("price %s: %w", b, err)
	}
	*p = Price(v)
	return nil
}

// USD returns the price as a float for display.
func (p Price) USD() float64 { return float64(p) / 1e6 }

// Date is a calendar date (UTC midnight), written as YYYY-MM-DD.
type Date struct{ time.Time }

func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte(`""`), nil
	}
	return json.Marshal(d.Format(time.DateOnly))
}

func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("date %s: want \"YYYY-MM-DD\"", b)
	}
	if s == "" {
		d.Time = time.Time{}
		return nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t, err = time.Parse(time.RFC3339, s)
		if err != nil {
			return fmt.Errorf("date %q: want \"YYYY-MM-DD\"", s)
		}
	}
	d.Time = t.UTC()
	return nil
}

// parseMicros parses a non-negative decimal JSON number with at most 6
// decimals into millionths, exactly (no float rounding).
func parseMicros(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == '-' {
		return 0, errors.New("must be a non-negative number")
	}
	if strings.ContainsAny(s, "eE") {
		// JSON allows exponents; accept them only if they convert exactly.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 9e12 {
			return 0, errors.New("must be a non-negative number")
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || len(whole) > 12 {
		return 0, errors.New("must be a number with at most 6 decimals")
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, errors.New("must be a non-negative number")
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	frac += strings.Repeat("0", 6-len(frac))
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*1_000_000 + f, nil
}

// formatMicros writes millionths as a decimal number without trailing zeros.
func formatMicros(v int64) string {
	s := strconv.FormatInt(v/1_000_000, 10)
	if f := v % 1_000_000; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", f), "0")
	}
	return s
}

// Lineup freezes the spec as a cohort lineup entry: the stable
// id, display name, provider, model and prices it runs with, and the whole
// spec as JSON (which holds the key's variable name, never the key).
func (s ModelSpec) Lineup() (arena.LineupEntry, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return arena.LineupEntry{}, fmt.Errorf("llm: freeze spec %s: %w", s.ID, err)
	}
	return arena.LineupEntry{AgentID: s.ID, Name: s.Name, Kind: "llm", Provider: s.Provider, Model: s.Model,
		InputMicrosPerMtok: int64(s.InputUSDPerMtok), OutputMicrosPerMtok: int64(s.OutputUSDPerMtok), Spec: b}, nil
}
