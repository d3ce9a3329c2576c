package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/safefile"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

func init() {
	register("witness", "run a C2SP witness for other arenas' logs: cosign their checkpoints, refusing rollbacks and forks", runWitness)
}

// maxFlagFile is the largest policy file witness.ParsePolicy accepts,
// more than a checkpoint note may have.
const maxFlagFile = 1 << 20

func runWitness(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "witness", "--key FILE --logs FILE --state DIR [--addr HOST:PORT] [--name NAME]")
	keyPath := fs.String("key", "", "ed25519 key file of the witness (64 hex digits), created on first start; keep it: policies name the witness by it")
	logsPath := fs.String("logs", "", "the logs to cosign, a line 'log <vkey>' each (an arena serves its vkey at /log/vkey)")
	stateDir := fs.String("state", "", "directory keeping the latest checkpoint cosigned for each log; keep it: a witness that forgot one could cosign a rollback")
	addr := fs.String("addr", "127.0.0.1:7380", "address to listen on")
	name := fs.String("name", "", "the witness's name in its cosignatures and verifier key, such as witness.example.com/w1 (default: this host's name)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	switch {
	case *keyPath == "":
		return errors.New("--key is required")
	case *logsPath == "":
		return errors.New("--logs is required")
	case *stateDir == "":
		return errors.New("--state is required")
	}
	if *name == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--name: no host name to default to (%v)", err)
		}
		*name = host
	}
	if err := tlog.CheckOrigin(*name); err != nil { // a witness name is a note key name, as an origin is
		return fmt.Errorf("--name: %w", err)
	}
	// What can be refused is, before the key and the state directory are
	// created.
	b, err := readFlagFile("--logs", *logsPath)
	if err != nil {
		return err
	}
	logs, err := witness.ParseLogs(b)
	if err != nil {
		return fmt.Errorf("--logs %s: %w", *logsPath, err)
	}
	if len(logs) == 0 {
		return fmt.Errorf("--logs %s lists no log", *logsPath)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer ln.Close()
	key, err := tlog.LoadOrCreateKey(*keyPath)
	if err != nil {
		return err
	}
	w, err := witness.New(*name, key, logs, *stateDir)
	if err != nil {
		return err
	}
	logger := newLogger(env, "info")
	w.Logger = logger
	origins := make([]string, len(logs))
	for i, l := range logs {
		origins[i] = l.Origin
	}
	fmt.Fprintf(env.Stdout, "witness %s listening on %s\nverifier key: %s\ncosigns the logs %s\nits line in a witness policy: witness <short name> %s <its URL>\n",
		*name, ln.Addr(), w.VerifierKey(), strings.Join(origins, ", "), w.VerifierKey())
	logger.Info("serving", "addr", ln.Addr().String(), "logs", len(logs))
	err = app.ServeHandler(ctx, ln, w.Handler())
	logger.Info("stopped")
	return err
}

// readFlagFile reads a small file a flag names (a witness policy, a list
// of logs, a checkpoint), refusing one larger than maxFlagFile.
func readFlagFile(flag, path string) ([]byte, error) {
	b, err := safefile.ReadFile(path, maxFlagFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return b, nil
}
