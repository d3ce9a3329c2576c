package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/shareddata"
)

// walkthroughCommands are the commands of the shell block under heading
// in the markdown file path, comments dropped.
func walkthroughCommands(t *testing.T, path, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("no shell block under %q", heading)
	}
	var cmds [][]string
	sc := bufio.NewScanner(strings.NewReader(m[1]))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if f := strings.Fields(line); len(f) > 0 {
			if f[0] != "arena" {
				t.Fatalf("the walkthrough runs %q, not arena", f[0])
			}
			cmds = append(cmds, f[1:])
		}
	}
	return cmds
}

// The humans walkthrough of docs/agents.md, followed as written from a
// clone: its download (here from a local file server holding ForecastBench's
// published files in their repository's layout, with --from, and into a
// --dir of the test's), the scripted backtest, the report and the served
// board, whose page and JSON answer; the files it leaves beside the
// database are all ones .gitignore keeps out of a commit.
func TestHumansWalkthrough(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	files := map[string]string{}
	for _, p := range []string{"question_sets/2024-07-21-human.json", "resolution_sets/2024-07-21_resolution_set.json",
		"forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json"} {
		b, err := os.ReadFile(shareddata.Path(t, "forecastbench-human", filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	from, _ := datasetsServer(t, files)
	dir := t.TempDir()
	cmds := walkthroughCommands(t, "../../docs/agents.md", "Humans on the board: a walkthrough")
	if len(cmds) != 4 || cmds[0][0] != "import" || cmds[3][0] != "serve" {
		t.Fatalf("the walkthrough's commands changed: %q", cmds)
	}
	// The database the walkthrough names, in the test's directory.
	local := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			if db, ok := strings.CutPrefix(a, "sqlite:"); ok {
				a = "sqlite:" + filepath.Join(dir, db)
			}
			out[i] = a
		}
		return out
	}
	outputs := map[string]string{}
	for _, args := range cmds[:3] {
		args = local(args)
		if args[0] == "import" {
			args = append(args, "--from", from, "--dir", filepath.Join(t.TempDir(), "fb"))
		}
		out, stderr, err := cli(t, nil, args...)
		if err != nil {
			t.Fatalf("arena %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		outputs[args[0]] = out
	}
	for cmd, want := range map[string]string{
		"import":   "humans: 7693 super forecasts by 40 forecasters on 189 questions, due 2024-07-21",
		"backtest": "Superforecaster median forecast (human)",
		"report":   "Superforecaster median forecast (human)",
	} {
		if !strings.Contains(outputs[cmd], want) {
			t.Errorf("arena %s printed no %q:\n%s", cmd, want, outputs[cmd])
		}
	}
	base := "http://" + startServeArgs(t, append(local(cmds[3]), "--addr", "127.0.0.1:0")...).addr
	page := string(getOK(t, base+"/backtest/humans"))
	link := regexp.MustCompile(`This page's data as JSON: <a href="([^"]+)">`).FindStringSubmatch(page)
	if !strings.Contains(page, "Superforecaster median forecast") || link == nil {
		t.Fatalf("the board page:\n%.2000s", page)
	}
	getOK(t, base+link[1])
	item := regexp.MustCompile(`<a href="(/backtest/humans/[^"]+)">`).FindStringSubmatch(page)
	if item == nil {
		t.Fatal("the board links no question")
	}
	itemPage := string(getOK(t, base+item[1]))
	if link := regexp.MustCompile(`This page's data as JSON: <a href="([^"]+)">`).FindStringSubmatch(itemPage); link == nil {
		t.Fatal("the question's page has no JSON link")
	} else {
		getOK(t, base+link[1])
	}
	checkIgnored(t, dir)
}

// checkIgnored fails the test for every file under dir that the
// repository's .gitignore would let into a commit were dir the clone (the
// tours write their databases, keys and agents' state there).
func checkIgnored(t *testing.T, dir string) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Log("no git on PATH: .gitignore not checked")
		return
	}
	var paths []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	cmd := exec.Command(git, "check-ignore", "--no-index", "--non-matching", "--verbose", "--stdin")
	cmd.Dir = "../.."
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("git check-ignore: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "::\t") {
			t.Errorf("%s would be committed: .gitignore does not cover it", strings.TrimPrefix(line, "::\t"))
		}
	}
}
