package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/tlog"
)

// interopDir holds the independent clients' pins, configurations and
// scripts (internal/interop, relative to this package).
const interopDir = "../../internal/interop"

// interopMissing skips a check whose independent client is not
// installed, saying how to get it, or fails it under
// ARENA_REQUIRE_INTEROP=1 (set by .ci/run, which installs them all).
func interopMissing(t *testing.T, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if os.Getenv("ARENA_REQUIRE_INTEROP") == "1" {
		t.Fatalf("%s: ARENA_REQUIRE_INTEROP=1 requires it (.ci/run installs it)", what)
	}
	t.Skipf("%s: skipped (.ci/run installs the independent clients; docs/development.md)", what)
}

// interopBin is the path of a Go or Debian client that .ci/run installs
// into $ARENA_INTEROP_BIN; never a command of that name on PATH (fsck is
// also the file system checker).
func interopBin(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(os.Getenv("ARENA_INTEROP_BIN"), name)
	if st, err := os.Stat(p); os.Getenv("ARENA_INTEROP_BIN") == "" || err != nil || st.IsDir() {
		interopMissing(t, "%s not found in ARENA_INTEROP_BIN=%q", name, os.Getenv("ARENA_INTEROP_BIN"))
	}
	return p
}

// interopNode is node and the node_modules holding the pinned npm
// clients: $ARENA_INTEROP_NODE_MODULES, else internal/interop's own
// (`npm ci` there).
func interopNode(t *testing.T) (node, modules string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		interopMissing(t, "node not found")
	}
	modules = os.Getenv("ARENA_INTEROP_NODE_MODULES")
	if modules == "" {
		modules = filepath.Join(interopDir, "node_modules")
	}
	if _, err := os.Stat(filepath.Join(modules, "ethers")); err != nil {
		interopMissing(t, "no npm clients in %s", modules)
	}
	modules, err = filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	return node, modules
}

// runClient runs a client in dir with env added and returns its stdout
// and stderr.
func runClient(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// The arena's published formats, checked by software that did not come
// from this project, against a demo arena served by `arena serve`:
// tessera's fsck reads the log's checkpoint, tiles and entry bundles;
// transparency-dev's omniwitness cosigns its checkpoints, and `arena
// verify --url` passes with a policy requiring that witness and fails with
// one requiring a witness that never cosigned; promtool checks /metrics;
// ethers and viem recover the signer of every exported commit, reveal and
// profile under the served EIP-712 domain; Redocly and Spectral lint the
// OpenAPI document; and a client oapi-codegen generates from that document
// calls three operations. Each check skips without its client, and fails
// without it under ARENA_REQUIRE_INTEROP=1 (CI).
func TestInterop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("serves a demo and runs external clients")
	}
	_, demoDir, _ := seed1Demo(t)
	dir := t.TempDir()
	keyFile, vkey := demoLog(t, demoDir)
	vkeyFile := filepath.Join(dir, "log.vkey")
	write(t, vkeyFile, vkey+"\n")

	// The omniwitness, when installed, and serve's policy requiring its
	// cosignature; without it the arena serves unwitnessed.
	env := []string{"ARENA_LOG_KEY=" + keyFile, "ARENA_CHECKPOINT_INTERVAL=1s", "ARENA_RATE_IP_PER_MIN=0",
		"ARENA_EXPORT_DIR=" + filepath.Join(dir, "exports"), "ARENA_EXPORT_EVERY=1h"}
	omni := startOmniwitness(t, dir, vkey)
	var policy string
	if omni != nil {
		policy = filepath.Join(dir, "policy")
		write(t, policy, "log "+vkey+"\nwitness omni "+omni.key.vkey+" "+omni.url+"\nquorum omni\n")
		env = append(env, "ARENA_WITNESS_POLICY="+policy)
	}
	srv := startServeEnv(t, env, "serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", "sqlite:"+filepath.Join(demoDir, "arena.db"))
	base := "http://" + srv.addr
	get := func(t *testing.T, path string) []byte { t.Helper(); return getOK(t, base+path) }
	// The served checkpoint, once it carries the omniwitness's
	// cosignature when witnessed is set; false when it never did.
	checkpoint := func(t *testing.T, witnessed bool) (tlog.Checkpoint, bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			n := get(t, "/log/checkpoint")
			c, err := tlog.OpenCheckpoint(n, vkey)
			if err != nil {
				t.Fatalf("the served checkpoint: %v\n%s", err, n)
			}
			if !witnessed || bytes.Contains(n, []byte("\n— "+omni.key.name+" ")) {
				return c, true
			}
			if time.Now().After(deadline) {
				t.Logf("the served checkpoint has no cosignature by %s after 60 s:\n%s\nserve:\n%s", omni.key.name, n, srv.logs)
				return c, false
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	t.Run("tessera fsck", func(t *testing.T) {
		fsck := interopBin(t, "fsck")
		c, _ := checkpoint(t, false)
		_, logs, err := runClient(t, dir, nil, fsck, "--storage_url", base+"/log/", "--public_key", vkeyFile, "--ui=false", "-v=1")
		// fsck exits 0 whatever it found: its log says whether the
		// checkpoint, every tile and every entry bundle agreed.
		m := regexp.MustCompile(`Successfully fsck'd log with size (\d+) `).FindStringSubmatch(logs)
		if err != nil || m == nil || strings.Contains(logs, "fsck failed") {
			t.Fatalf("fsck of %s/log/ (checkpoint of %d entries): %v\n%s", base, c.Size, err, logs)
		}
		if n, _ := strconv.ParseUint(m[1], 10, 64); n < c.Size {
			t.Fatalf("fsck checked %d entries, the checkpoint has %d", n, c.Size)
		}
		t.Logf("fsck: %s", m[0])
	})

	t.Run("omniwitness", func(t *testing.T) {
		if omni == nil {
			interopMissing(t, "omniwitness or generate_keys not found in ARENA_INTEROP_BIN=%q", os.Getenv("ARENA_INTEROP_BIN"))
		}
		c, _ := checkpoint(t, true)
		// serve publishes its export once a checkpoint is cosigned.
		var (
			out, errOut string
			err         error
		)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			out, errOut, err = cli(t, nil, "verify", "--url", base, "--witness-policy", policy)
			if err == nil || !strings.Contains(err.Error(), "fetching the published export") || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || !strings.Contains(out, "OK") {
			t.Fatalf("verify --url with the omniwitness required (checkpoint of %d entries): %v\n%s%s", c.Size, err, out, errOut)
		}
		// A policy requiring a witness that never cosigned: its key is
		// real, its address answers nothing.
		ghost := generateWitnessKey(t, omni.generateKeys, dir, "ghost.witness.test")
		ghostPolicy := filepath.Join(dir, "ghost-policy")
		write(t, ghostPolicy, "log "+vkey+"\nwitness ghost "+ghost.vkey+" http://"+freeAddr(t)+"\nquorum ghost\n")
		out, _, err = cli(t, nil, "verify", "--url", base, "--witness-policy", ghostPolicy)
		if err == nil || !strings.Contains(err.Error(), "no cosignature by ghost") {
			t.Fatalf("verify --url requiring a witness that never cosigned: %v\n%s", err, out)
		}
		t.Log(err)
	})

	t.Run("promtool", func(t *testing.T) {
		promtool := interopBin(t, "promtool")
		// Requests first, so that the request metrics have series.
		get(t, "/api/v1/domain")
		get(t, "/api/v1/markets?limit=1")
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(get(t, "/metrics"))
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Fatalf("promtool check metrics: %v\n%s", err, out)
		}
	})

	t.Run("ethers and viem", func(t *testing.T) {
		node, modules := interopNode(t)
		// A profile signed by an agent of the test's, so that every kind
		// of signed entry is exported.
		agentKey := filepath.Join(t.TempDir(), "agent.key")
		if _, _, err := cli(t, nil, "agent", "keygen", "--out", agentKey); err != nil {
			t.Fatal(err)
		}
		if out, errOut, err := cli(t, nil, "agent", "profile", "--server", base, "--key", agentKey, "--name", "Interop Agent"); err != nil {
			t.Fatalf("agent profile: %v\n%s%s", err, out, errOut)
		}
		script := nodeDir(t, modules, "signers.mjs")
		out, errOut, err := runClient(t, filepath.Dir(script), nil, node, script, base)
		var got struct {
			Ethers, Viem                            string
			Commits, Reveals, Profiles, Submissions int
		}
		if err != nil || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("signers.mjs: %v\n%s%s", err, out, errOut)
		}
		if !strings.HasPrefix(got.Ethers, "6.") || !strings.HasPrefix(got.Viem, "2.") || got.Commits == 0 || got.Reveals == 0 || got.Profiles == 0 || got.Submissions == 0 {
			t.Fatalf("signers.mjs recovered too little: %s", out)
		}
		t.Logf("signers.mjs: %s", out)
	})

	openapi := filepath.Join(dir, "openapi.json")
	write(t, openapi, string(get(t, "/api/v1/openapi.json")))
	t.Run("redocly", func(t *testing.T) {
		node, modules := interopNode(t)
		cfg, _ := filepath.Abs(filepath.Join(interopDir, "redocly.yaml"))
		out, errOut, err := runClient(t, dir, []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true"},
			node, filepath.Join(modules, "@redocly/cli/bin/cli.js"), "lint", "--config", cfg, "--format=json", openapi)
		var rep struct {
			Totals   struct{ Errors, Warnings, Ignored int }
			Problems []json.RawMessage
		}
		if jerr := json.Unmarshal([]byte(out), &rep); err != nil || jerr != nil || rep.Totals != (struct{ Errors, Warnings, Ignored int }{}) {
			t.Fatalf("redocly lint: %v\n%s%s", err, out, errOut)
		}
	})
	t.Run("spectral", func(t *testing.T) {
		node, modules := interopNode(t)
		ruleset, _ := filepath.Abs(filepath.Join(interopDir, ".spectral.yaml"))
		out, errOut, err := runClient(t, dir, nil, node, filepath.Join(modules, "@stoplight/spectral-cli/dist/index.js"),
			"lint", "--ruleset", ruleset, "--fail-severity=warn", openapi)
		if err != nil || !strings.Contains(out, "No results with a severity of 'warn' or higher") {
			t.Fatalf("spectral lint: %v\n%s%s", err, out, errOut)
		}
	})

	t.Run("generated client", func(t *testing.T) {
		goTool, err := exec.LookPath("go")
		if err != nil {
			interopMissing(t, "go not found")
		}
		src := filepath.Join(interopDir, "goclient")
		work := t.TempDir()
		for _, f := range []string{"go.mod", "go.sum", "main.go", "oapi-codegen.yaml"} {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(work, f), string(b))
		}
		// Only the module cache: a test reaches no network.
		goEnv := []string{"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off"}
		if _, errOut, err := runClient(t, work, goEnv, goTool, "mod", "download"); err != nil {
			interopMissing(t, "the generated client's modules are not in the module cache (go mod download in internal/interop/goclient): %s", strings.TrimSpace(errOut))
		}
		if out, errOut, err := runClient(t, work, goEnv, goTool, "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", openapi); err != nil {
			t.Fatalf("oapi-codegen: %v\n%s%s", err, out, errOut)
		}
		out, errOut, err := runClient(t, work, goEnv, goTool, "run", ".", base)
		if err != nil {
			t.Fatalf("the generated client: %v\n%s%s", err, out, errOut)
		}
		var got struct {
			Domain   map[string]any
			Rounds   []struct{ ID int64 }
			Round    struct{ ID int64 }
			NotFound struct{ Error struct{ Code string } } `json:"not_found"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("the generated client printed %q: %v", out, err)
		}
		var domain map[string]any
		json.Unmarshal(get(t, "/api/v1/domain"), &domain)
		var rounds []struct{ ID int64 }
		json.Unmarshal(get(t, "/api/v1/rounds?limit=2"), &rounds)
		if !reflect.DeepEqual(got.Domain, domain) || !reflect.DeepEqual(got.Rounds, rounds) || got.Round.ID != rounds[0].ID ||
			got.NotFound.Error.Code != "round_not_found" {
			t.Fatalf("the generated client got %s; the API answers domain %v, rounds %v", out, domain, rounds)
		}
	})
}

// nodeDir copies a script of internal/interop into a directory of its own
// beside a link to modules, where node resolves its imports, and returns
// the copy's path.
func nodeDir(t *testing.T, modules, script string) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(d, "node_modules")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(interopDir, script))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, script), string(b))
	return filepath.Join(d, script)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// omniwitness is a running transparency-dev omniwitness.
type omniwitness struct {
	url          string
	key          witnessKey
	generateKeys string // the generate_keys of the same module version
}

// witnessKey is a witness key made by transparency-dev's generate_keys.
type witnessKey struct {
	name, skeyFile, vkey string
}

func generateWitnessKey(t *testing.T, generateKeys, dir, name string) witnessKey {
	t.Helper()
	out, errOut, err := runClient(t, dir, nil, generateKeys, "--origin", name, "--print")
	lines := strings.Fields(out)
	if err != nil || len(lines) != 2 {
		t.Fatalf("generate_keys: %v\n%s%s", err, out, errOut)
	}
	k := witnessKey{name: name, skeyFile: filepath.Join(dir, name+".skey"), vkey: lines[1]}
	if err := os.WriteFile(k.skeyFile, []byte(lines[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// startOmniwitness runs the omniwitness on loopback, told of the arena's
// log (origin, verifier key) besides the public logs it knows: it serves
// the C2SP tlog-witness protocol, and with no distributor, bastion or
// public configuration URL it sends nothing anywhere. It returns nil when
// the omniwitness is not installed.
func startOmniwitness(t *testing.T, dir, vkey string) *omniwitness {
	t.Helper()
	bin := filepath.Join(os.Getenv("ARENA_INTEROP_BIN"), "omniwitness")
	gen := filepath.Join(os.Getenv("ARENA_INTEROP_BIN"), "generate_keys")
	for _, p := range []string{bin, gen} {
		if _, err := os.Stat(p); os.Getenv("ARENA_INTEROP_BIN") == "" || err != nil {
			return nil
		}
	}
	k := generateWitnessKey(t, gen, dir, "omni.witness.test")
	logs := filepath.Join(dir, "omniwitness-logs.yaml")
	origin, _, _ := strings.Cut(vkey, "+") // a note key's name is the log's origin
	write(t, logs, "Logs:\n  - Origin: "+origin+"\n    PublicKey: "+vkey+"\n    URL: http://127.0.0.1/\n")
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--listen", addr, "--metrics_listen", "", "--private_key_path", k.skeyFile,
		"--additional_logs", logs, "--db_file", filepath.Join(dir, "omniwitness.db"), "--logtostderr")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("omniwitness:\n%s", out)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("omniwitness does not listen on %s:\n%s", addr, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &omniwitness{url: "http://" + addr, key: k, generateKeys: gen}
}
