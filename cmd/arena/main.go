// Command arena runs Forecast Arena. Each subcommand lives in its own file
// with its own flag.FlagSet and registers itself in init.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/redact"
)

// command is one subcommand. Run receives the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, env *Env, args []string) error) {
	commands[name] = command{name, summary, run}
}

// Env is what a subcommand may touch of the process, so tests can run the
// CLI in-process.
type Env struct {
	Stdout  io.Writer
	Stderr  io.Writer
	Environ []string
	Getwd   func() (string, error)
}

// errUsage marks errors whose message already says everything; usage was printed.
var errUsage = errors.New("usage")

func main() {
	// The first SIGINT or SIGTERM ends ctx, which every command is given:
	// a batch command stops and fails, a server shuts down cleanly. Then
	// the signals' default action is back, so a second one kills at once.
	ignored := ignoredSignals() // before the handlers are installed
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		secondSignalExits(ignored)
	}()
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), Getwd: os.Getwd}
	err := Main(ctx, env, os.Args[1:])
	cause := context.Cause(ctx)
	stop()
	switch {
	case err != nil && cause != nil:
		// What failed inside a command stopped on purpose is noise: say
		// that it stopped, and what it left behind when it says so.
		msg := fmt.Sprintf("%s: interrupted (%v)", os.Args[1], cause)
		var demoStop *demo.Interrupted
		if errors.As(err, &demoStop) {
			msg = demoStop.Error()
		}
		fmt.Fprintln(os.Stderr, "arena: "+redact.String(msg))
		os.Exit(exitInterrupted)
	case err != nil:
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "arena: "+redact.String(oneLine(err)))
		}
		os.Exit(exitCode(err))
	}
}

// ignoredSignals are those of SIGINT and SIGTERM the process was started
// with ignored (as a non-interactive shell starts a background job with
// SIGINT).
func ignoredSignals() []os.Signal {
	var ignored []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if signal.Ignored(s) {
			ignored = append(ignored, s)
		}
	}
	return ignored
}

// secondSignalExits makes a second SIGINT or SIGTERM end the process
// when its default action does not come back: a signal the process was
// started with ignored is ignored again once the first one was handled.
// It exits as a shell reports a process killed by SIGINT.
func secondSignalExits(ignored []os.Signal) {
	if len(ignored) == 0 {
		return
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, ignored...)
	<-again
	os.Exit(exitInterrupted)
}

// exitInterrupted is the exit status of a command stopped by SIGINT or
// SIGTERM, as shells report one killed by SIGINT (128 + 2).
const exitInterrupted = 130

// Main dispatches to a subcommand.
func Main(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stderr)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q (run 'arena help' for the list)", args[0])
	}
	err := cmd.run(ctx, env, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	// Name the command, unless the error already starts with its name (a
	// package named like its command, such as demo or config, says it
	// already, and "round 9 not found" needs no "round: " before it).
	if err != nil && !errors.Is(err, errUsage) && !strings.HasPrefix(err.Error(), cmd.name+": ") && !strings.HasPrefix(err.Error(), cmd.name+" ") {
		return fmt.Errorf("%s: %w", cmd.name, err)
	}
	return err
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// oneLine keeps error output to one line, as users expect from a CLI.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: arena <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'arena <command> -h' for a command's flags.")
}

// dispatch runs the subcommand named by args[0] (as in 'arena round
// show'), printing usage when there is none or help is asked for.
func dispatch(ctx context.Context, env *Env, args []string, usage string, subs map[string]func(context.Context, *Env, []string) error) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.Stderr, usage)
		return nil
	}
	run, ok := subs[args[0]]
	if !ok {
		names := make([]string, 0, len(subs))
		for n := range subs {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown subcommand %q (want %s)", args[0], strings.Join(names, ", "))
	}
	return run(ctx, env, args[1:])
}
