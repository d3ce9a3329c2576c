package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/strategy"
	"github.com/forecast-arena/arena/participant"
)

func init() {
	register("agent", "reference forecast participant: keygen, profile, run", runAgent)
}

const agentUsage = `Usage: arena agent <subcommand> [flags]

Subcommands:
  keygen  --out FILE    create a new secp256k1 key (mode 0600) and print its address
  profile --server URL --key FILE --name N [--organisation O] [--model M]
          [--homepage U] [--description D]
                        register or update the agent's display name and
                        profile, signed with its key
  run     --server URL --key FILE [--strategy random|market|sim|llm] [--state DIR]
          [--model ID --agents FILE [--cache-dir DIR] [--max-usd X]]
                        commit to open rounds, reveal in the window, upload
                        reasoning; every step is durable and idempotent, so
                        it is safe to run from cron and resumes after a crash

Run 'arena agent <subcommand> -h' for its flags.
`

// defaultLLMLeadTime is how long before the commit deadline an LLM agent
// forecasts: late enough to see recent prices, early enough to finish.
const defaultLLMLeadTime = 600 * time.Second

func runAgent(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, args, agentUsage, map[string]func(context.Context, *Env, []string) error{
		"keygen":  func(_ context.Context, env *Env, args []string) error { return agentKeygen(env, args) },
		"profile": agentProfile,
		"run":     agentRun,
	})
}

func agentKeygen(env *Env, args []string) error {
	fs := newFlagSet(env, "agent keygen", "--out FILE")
	out := fs.String("out", "", "where to write the key (must not exist)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out FILE is required")
	}
	k, err := forecast.GenerateKey()
	if err != nil {
		return err
	}
	if err := k.Save(*out); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists; refusing to overwrite a key", *out)
		}
		return err
	}
	fmt.Fprintln(env.Stdout, k.Address().Hex())
	return nil
}

func agentProfile(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "agent profile", "--server URL --key FILE --name N [--organisation O] [--model M] [--homepage U] [--description D] [--format table|json]")
	server := fs.String("server", "", "arena server base URL, e.g. http://127.0.0.1:8080")
	keyFile := fs.String("key", "", "key file written by 'arena agent keygen'")
	var p forecast.ProfileFields
	fs.StringVar(&p.Name, "name", "", fmt.Sprintf("display name, unique in the arena ignoring case (1 to %d characters)", forecast.MaxProfileName))
	fs.StringVar(&p.Organisation, "organisation", "", fmt.Sprintf("who runs the agent (at most %d characters)", forecast.MaxProfileOrganisation))
	fs.StringVar(&p.Model, "model", "", fmt.Sprintf("the model behind it (at most %d characters)", forecast.MaxProfileModel))
	fs.StringVar(&p.Homepage, "homepage", "", "an http:// or https:// URL")
	fs.StringVar(&p.Description, "description", "", fmt.Sprintf("a short description (at most %d characters)", forecast.MaxProfileDescription))
	timeout := fs.Duration("timeout", 30*time.Second, "HTTP timeout per request")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *server == "" || *keyFile == "" || p.Name == "" {
		return fmt.Errorf("--server URL, --key FILE and --name N are required (run 'arena agent profile -h')")
	}
	if err := checkServerURL(*server); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	key, err := forecast.LoadKey(*keyFile)
	if err != nil {
		return err
	}
	c := &participant.Client{Server: *server, Key: key, HTTP: &http.Client{Timeout: *timeout}}
	got, err := c.SetProfile(ctx, p)
	if err != nil {
		return unreachable(*server, err)
	}
	if *format == "json" {
		return writeJSON(env.Stdout, got)
	}
	// The server's answer is printed as data: a character that would
	// drive the terminal is shown escaped.
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	for _, row := range [][2]string{{"agent", got.Agent}, {"version", strconv.FormatUint(got.Version, 10)}, {"name", got.Name},
		{"organisation", got.Organisation}, {"model", got.Model}, {"homepage", got.Homepage}, {"description", got.Description},
		{"page", strings.TrimRight(*server, "/") + "/agents/" + got.Agent}} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], printable(row[1]))
	}
	return tw.Flush()
}

// printable is s as a terminal shows it safely: unchanged when every
// character is graphic, else Go-quoted with the others escaped.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0 {
		return s
	}
	return strconv.QuoteToGraphic(s)
}

// checkServerURL refuses a --server that is not an http(s) URL.
func checkServerURL(server string) error {
	if u, err := url.Parse(server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q: want an http(s) URL", server)
	}
	return nil
}

// agentRunFlags are the flags of `arena agent run`.
type agentRunFlags struct {
	server, keyFile, strategyName, model, agentsFile, cacheDir, search, stateDir *string
	simStart, simAgent, logLevel                                                 *string
	maxUSD                                                                       *float64
	seed                                                                         *int64
	simMarkets                                                                   *int
	leadTime, every, timeout                                                     *time.Duration
}

func agentRun(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "agent run", "--server URL --key FILE [--strategy random|market|sim|llm] [--model ID --agents FILE] [--state DIR] [--seed N] [--lead-time D] [--every D]")
	f := &agentRunFlags{
		server:       fs.String("server", "", "arena server base URL, e.g. http://127.0.0.1:8080"),
		keyFile:      fs.String("key", "", "key file written by 'arena agent keygen'"),
		strategyName: fs.String("strategy", "random", "forecasting strategy: random, market (echo the listed price), sim (an informed simulator agent) or llm (an agent of --agents)"),
		model:        fs.String("model", "", "llm: id of the agent (a model or an ensemble) in --agents"),
		agentsFile:   fs.String("agents", "", "llm: model registry file (see examples/agents.json)"),
		cacheDir:     fs.String("cache-dir", "", "llm: content-addressed model-call cache (default STATE/llm-cache)"),
		search:       fs.String("search", "", "llm: offer the searchWeb tool through this provider: exa (EXA_API_KEY) or dir:PATH (default: no search)"),
		maxUSD:       fs.Float64("max-usd", 0, "llm: stop spending once this run could exceed X USD (0: the agents file's max_usd, if any)"),
		stateDir:     fs.String("state", "", "directory of the durable salt/reveal queue (default: KEY.state next to the key file)"),
		seed:         fs.Int64("seed", 1, "sim: world seed, as given to 'arena sync --source sim --seed N'"),
		simMarkets:   fs.Int("sim-markets", 0, fmt.Sprintf("sim: number of markets of the world (default %d)", sim.DefaultMarkets)),
		simStart:     fs.String("sim-start", "", "sim: start of the world's horizon, RFC 3339: the start that 'arena sync --source sim' printed (default: today 00:00 UTC, as a first sync today chooses)"),
		simAgent:     fs.String("sim-agent", "informed-0.05", "sim: which simulator agent to forecast as"),
		leadTime:     fs.Duration("lead-time", 0, "commit only when the commit deadline is this close (0: as soon as a round is open; llm: 10m)"),
		every:        fs.Duration("every", 0, "run again at this interval until interrupted (0: run once, e.g. from cron)"),
		timeout:      fs.Duration("timeout", 30*time.Second, "HTTP timeout per request"),
		logLevel:     fs.String("log-level", "info", "debug, info, warn or error"),
	}
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	key, err := forecast.LoadKey(*f.keyFile)
	if err != nil {
		return err
	}
	if *f.stateDir == "" {
		*f.stateDir = *f.keyFile + ".state"
	}
	var fc *agent.Forecasters // llm strategy: its call accounting is printed
	c := &participant.Client{Server: *f.server, Key: key, StateDir: *f.stateDir, LeadTime: *f.leadTime,
		HTTP: &http.Client{Timeout: *f.timeout}, Logger: newLogger(env, *f.logLevel)}
	switch *f.strategyName {
	case "random", "market":
		if c.Strategy, err = participant.NewStrategy(*f.strategyName, key.Address()); err != nil {
			return err
		}
	case "sim":
		if c.Strategy, err = f.simStrategy(c); err != nil {
			return err
		}
	case "llm":
		if fc, err = f.llmStrategy(env, c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--strategy %q: want random, market, sim or llm", *f.strategyName)
	}
	return runPasses(ctx, env, c, fc, *f.server, *f.every)
}

// check refuses missing or malformed flags before the key is read.
func (f *agentRunFlags) check() error {
	if *f.server == "" || *f.keyFile == "" {
		return fmt.Errorf("--server URL and --key FILE are required (run 'arena agent run -h')")
	}
	if err := checkServerURL(*f.server); err != nil {
		return err
	}
	if *f.every < 0 || *f.leadTime < 0 || *f.timeout <= 0 {
		return fmt.Errorf("--every, --lead-time must not be negative and --timeout must be positive")
	}
	switch *f.logLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *f.logLevel)
	}
	return nil
}

// simStrategy builds the simulator agent --sim-agent of the world the
// flags describe, as 'arena sync --source sim' does.
func (f *agentRunFlags) simStrategy(c *participant.Client) (participant.Strategy, error) {
	cfg := sim.Config{Seed: *f.seed, Markets: *f.simMarkets, Start: time.Now().UTC().Truncate(24 * time.Hour)}
	if *f.simStart != "" {
		var err error
		if cfg.Start, err = time.Parse(time.RFC3339, *f.simStart); err != nil {
			return nil, fmt.Errorf("--sim-start: %w", err)
		}
	}
	world, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	// Forecast from what the world showed at the last point of its
	// price grid, never from later; on the grid a rerun (or anyone
	// with the seed) recomputes the same forecast.
	step := world.Config().Step
	at := func() time.Time { return time.Now().UTC().Truncate(step) }
	return strategy.NewSim(world, *f.simAgent, c.LookupMarket, at)
}

// llmStrategy sets c's strategy to the agent --model of --agents, its
// calls cached and traced under the state directory, and returns the
// forecasters whose call accounting each pass prints.
func (f *agentRunFlags) llmStrategy(env *Env, c *participant.Client) (*agent.Forecasters, error) {
	if *f.model == "" || *f.agentsFile == "" {
		return nil, fmt.Errorf("--strategy llm needs --model ID and --agents FILE")
	}
	if *f.maxUSD < 0 {
		return nil, fmt.Errorf("--max-usd must not be negative")
	}
	reg, err := llm.LoadRegistry(*f.agentsFile)
	if err != nil {
		return nil, err
	}
	if _, ok := reg.Agent(*f.model); !ok {
		return nil, fmt.Errorf("--model %q is not in %s", *f.model, *f.agentsFile)
	}
	if *f.leadTime == 0 {
		*f.leadTime = defaultLLMLeadTime
		c.LeadTime = *f.leadTime
	}
	fc, skipped := agent.NewForecasters(reg, llm.EnvLookup(env.Environ), int64(math.Round(*f.maxUSD*1e6)), llm.WithLogger(c.Logger))
	for _, sk := range skipped {
		if sk.ID == *f.model {
			return nil, fmt.Errorf("%s", sk.String())
		}
	}
	if *f.cacheDir == "" {
		*f.cacheDir = filepath.Join(*f.stateDir, "llm-cache")
	}
	fc.Cache = llm.DirStore{Dir: *f.cacheDir}
	fc.Sink = strategy.DirTraces{Dir: filepath.Join(*f.stateDir, "traces")}
	ls := &strategy.LLMStrategy{Agents: fc, AgentID: *f.model, Client: c}
	if ls.Search, err = searchRetriever(env, *f.search, *f.cacheDir, false, c.Logger); err != nil {
		return nil, err
	}
	c.Strategy = ls
	return fc, nil
}

// runPasses runs the agent's passes, printing each (with an LLM agent's
// call accounting, fc), once or, with every, at that interval until
// interrupted.
func runPasses(ctx context.Context, env *Env, c *participant.Client, fc *agent.Forecasters, server string, every time.Duration) error {
	pp := passPrinter{w: env.Stdout, agent: c.Key.Address().Hex(), strategy: c.Strategy.Name()}
	for {
		rep, err := c.RunOnce(ctx)
		err = unreachable(server, err)
		if pp.print(rep, err, c.Time()) && fc != nil {
			u := fc.Meter.Run()
			fmt.Fprintf(env.Stdout, "model calls: %d (%d tokens in, %d out, %s estimated, billed by the provider: %s), %d answered from the cache\n",
				u.Calls, u.InputTokens, u.OutputTokens, arena.Micros(u.CostMicros).String(), billedText(arena.Micros(u.BilledMicros).String(), u.BilledCalls, u.Calls), u.CachedCalls)
			for _, s := range fc.Meter.Stops() {
				fmt.Fprintf(env.Stdout, "stopped: %s\n", s.Error())
			}
		}
		if every == 0 {
			return err
		}
		if err != nil {
			c.Logger.Error("run failed; retrying at the next interval", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// passPrinter says what each pass of 'agent run' did and what the agent
// waits for, and stays quiet while that does not change: with --every, a
// pass that sent nothing and waits for what the last one said prints
// nothing, rather than "committed 0, revealed 0" every interval.
type passPrinter struct {
	w               io.Writer
	agent, strategy string
	printed         bool
	last            string // the wait last printed, without the time left
}

// print prints the pass's report (unless it is news to nobody) and says
// whether it printed its counts.
func (p *passPrinter) print(rep participant.Report, err error, now time.Time) bool {
	sent := rep.Committed+rep.Revealed+rep.ReasoningSent+rep.Abandoned > 0
	wait, left := "", ""
	switch x := rep.Next; {
	case err != nil: // the pass failed: what it waits for is not known
	case !x.At.IsZero():
		wait = fmt.Sprintf("round %d: waiting for %s at %s", x.Round, x.For, x.At.UTC().Format(time.RFC3339))
		left = fmt.Sprintf(" (in %s)", max(x.At.Sub(now), 0).Round(time.Second))
	case rep.Open == 0 && !sent:
		wait = "no round is open for commits on the server: waiting for the next one"
	}
	// A pass that failed having sent nothing leaves it to the error.
	counts := sent || (!p.printed && err == nil)
	if counts {
		fmt.Fprintf(p.w, "agent %s (%s): committed %d, revealed %d, reasoning %d, abandoned %d\n",
			p.agent, p.strategy, rep.Committed, rep.Revealed, rep.ReasoningSent, rep.Abandoned)
	}
	if wait != "" && (counts || wait != p.last) {
		fmt.Fprintln(p.w, wait+left)
	}
	p.printed, p.last = p.printed || counts, wait
	return counts
}

// unreachable says that no arena answers at server when err is a refused
// connection, the error of a server that is not running; other errors
// are err.
func unreachable(server string, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &unreachableError{server, err}
	}
	return err
}

// unreachableError is a refused connection to the arena at server.
type unreachableError struct {
	server string
	err    error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("no arena answers at %s (connection refused): is 'arena serve' running there? Start it, or give the address it serves on with --server", e.server)
}

func (e *unreachableError) Unwrap() error { return e.err }
