package witness

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/tlog"
)

// Policy is a C2SP transparency log trust policy (tlog-policy): the logs
// a verifier accepts checkpoints from, the witnesses it knows, and the
// quorum of them that must cosign. Its file is line based:
//
//	# comment
//	log <vkey> [<url>]
//	witness <name> <vkey> [<url>]
//	group <name> all|any|<k> <name>...
//	quorum <name>|none
//
// Witness vkeys are cosignature/v1 keys (VerifierKey); a group or the
// quorum names witnesses and groups defined on earlier lines, and each
// name is a group member at most once. A policy for the arena's log with
// two witnesses that must both cosign:
//
//	log arena.example.com/log+1234abcd+AaBb…
//	witness w1 witness1.example/w+5678ef01+BCcD… https://witness1.example
//	witness w2 witness2.example/w+9abcdef0+BDdE… https://witness2.example
//	group both all w1 w2
//	quorum both
//
// A witness's URL, when given, is its submission prefix: the log sends it
// checkpoints (Remotes).
type Policy struct {
	Logs      []Log
	Witnesses []PolicyWitness
	quorum    *member // nil: quorum none
}

// PolicyWitness is a witness of a policy.
type PolicyWitness struct {
	Name     string
	VKey     string
	URL      string
	Verifier note.Verifier
}

// member is a witness (group nil) or a group of a policy.
type member struct {
	witness int // index in Witnesses, when group is nil
	group   *group
}

type group struct {
	k       int
	members []*member
}

// maxPolicy bounds a policy file; maxNames its witnesses and groups.
const (
	maxPolicy = 1 << 20
	maxNames  = 1024
)

// ErrPolicy is wrapped by the errors about a malformed policy file.
var ErrPolicy = errors.New("malformed witness policy")

// ParsePolicy parses a policy file (see Policy).
func ParsePolicy(data []byte) (*Policy, error) {
	return parsePolicy(data, true)
}

// ParseLogs parses the list of logs a witness cosigns: a policy file
// with log lines only (and comments), each log's origin being its key's
// name.
func ParseLogs(data []byte) ([]Log, error) {
	p, err := parsePolicy(data, false)
	if err != nil {
		return nil, err
	}
	return p.Logs, nil
}

func parsePolicy(data []byte, full bool) (*Policy, error) {
	if len(data) > maxPolicy {
		return nil, fmt.Errorf("%w: %d bytes", ErrPolicy, len(data))
	}
	for _, b := range data {
		if b < 0x20 && b != '\t' && b != '\n' || b == 0x7f {
			return nil, fmt.Errorf("%w: control character 0x%02x (only tab and newline are allowed)", ErrPolicy, b)
		}
	}
	ps := &policyParser{p: &Policy{}, names: map[string]*member{}, used: map[string]bool{}, keys: map[string]string{}}
	for i, line := range bytes.Split(data, []byte("\n")) {
		f := strings.FieldsFunc(string(line), func(r rune) bool { return r == ' ' || r == '\t' })
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		ps.line = i + 1
		if !full && f[0] != "log" {
			return nil, ps.bad("a witness's log list has log lines only, not %q", f[0])
		}
		var err error
		switch f[0] {
		case "log":
			err = ps.log(f)
		case "witness":
			err = ps.witness(f)
		case "group":
			err = ps.group(f)
		case "quorum":
			err = ps.quorumLine(f)
		default:
			err = ps.bad("unknown keyword %q", f[0])
		}
		if err != nil {
			return nil, err
		}
	}
	if full && !ps.quorum {
		return nil, fmt.Errorf("%w: no quorum line (write \"quorum none\" to require no cosignature)", ErrPolicy)
	}
	return ps.p, nil
}

// policyParser is the state of parsePolicy from line to line: the policy
// so far, the witnesses and groups it names, and the keys it has listed.
// Its methods parse the line'th line (f, split into fields).
type policyParser struct {
	line   int
	p      *Policy
	names  map[string]*member
	used   map[string]bool   // names listed as a group member
	keys   map[string]string // public key → the line that listed it
	quorum bool              // a quorum line was read
}

// bad is the error of a line the policy may not hold.
func (ps *policyParser) bad(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrPolicy, ps.line, fmt.Sprintf(format, args...))
}

// log parses a log line.
func (ps *policyParser) log(f []string) error {
	if len(f) < 2 || len(f) > 3 {
		return ps.bad("want log <vkey> [<url>]")
	}
	name, pub, err := parseVKey(f[1], 1)
	if err != nil {
		return ps.bad("log key: not an Ed25519 note verifier key: %v", err)
	}
	v, err := note.NewVerifier(f[1])
	if err != nil {
		return ps.bad("log key: %v", err)
	}
	if prev, dup := ps.keys["log "+string(pub)]; dup {
		return ps.bad("the log key of %s again", prev)
	}
	ps.keys["log "+string(pub)] = fmt.Sprintf("line %d", ps.line)
	ps.p.Logs = append(ps.p.Logs, Log{Origin: name, Verifier: v, VKey: f[1], URL: field(f, 2)})
	return nil
}

// witness parses a witness line.
func (ps *policyParser) witness(f []string) error {
	if len(f) < 3 || len(f) > 4 {
		return ps.bad("want witness <name> <vkey> [<url>]")
	}
	if err := ps.p.checkName(ps.names, f[1]); err != nil {
		return ps.bad("%v", err)
	}
	_, pub, err := parseVKey(f[2], algCosignature)
	if err != nil {
		return ps.bad("witness %s: %v", f[1], err)
	}
	if prev, dup := ps.keys["witness "+string(pub)]; dup {
		return ps.bad("witness %s has the key of %s", f[1], prev)
	}
	ps.keys["witness "+string(pub)] = "witness " + f[1]
	v, _ := NewVerifier(f[2])
	ps.names[f[1]] = &member{witness: len(ps.p.Witnesses)}
	ps.p.Witnesses = append(ps.p.Witnesses, PolicyWitness{Name: f[1], VKey: f[2], URL: field(f, 3), Verifier: v})
	return nil
}

// group parses a group line: its members are witnesses or groups defined
// above, each a member of one group at most.
func (ps *policyParser) group(f []string) error {
	if len(f) < 4 {
		return ps.bad("want group <name> all|any|<k> <name>...")
	}
	if err := ps.p.checkName(ps.names, f[1]); err != nil {
		return ps.bad("%v", err)
	}
	g := &group{}
	for _, m := range f[3:] {
		mm, ok := ps.names[m]
		if !ok {
			return ps.bad("group %s: %q is not a witness or group defined above", f[1], m)
		}
		if ps.used[m] {
			return ps.bad("group %s: %q is already a member of a group", f[1], m)
		}
		ps.used[m] = true
		g.members = append(g.members, mm)
	}
	switch n := len(g.members); f[2] {
	case "all":
		g.k = n
	case "any":
		g.k = 1
	default:
		k, err := strconv.Atoi(f[2])
		if err != nil || k < 1 || k > n || f[2] != strconv.Itoa(k) {
			return ps.bad("group %s: threshold %q is not all, any or a number from 1 to %d", f[1], f[2], n)
		}
		g.k = k
	}
	ps.names[f[1]] = &member{group: g}
	return nil
}

// quorumLine parses the quorum line, which names a witness or group
// defined above, or none.
func (ps *policyParser) quorumLine(f []string) error {
	if len(f) != 2 {
		return ps.bad("want quorum <name>")
	}
	if ps.quorum {
		return ps.bad("a second quorum line")
	}
	ps.quorum = true
	if f[1] != "none" {
		m, ok := ps.names[f[1]]
		if !ok {
			return ps.bad("quorum %q is not a witness or group defined above", f[1])
		}
		ps.p.quorum = m
	}
	return nil
}

func (p *Policy) checkName(names map[string]*member, name string) error {
	switch {
	case name == "none":
		return errors.New(`"none" is reserved`)
	case names[name] != nil:
		return fmt.Errorf("%q is defined twice", name)
	case len(names) == maxNames:
		return fmt.Errorf("more than %d witnesses and groups", maxNames)
	}
	return nil
}

func field(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// Remotes lists the policy's witnesses that have a URL, for a Client.
func (p *Policy) Remotes() []Remote {
	var out []Remote
	for _, w := range p.Witnesses {
		if w.URL != "" {
			out = append(out, Remote{Name: w.Name, URL: w.URL, Verifier: w.Verifier})
		}
	}
	return out
}

// Verify checks a cosigned checkpoint note against the policy: signed by
// one of its logs (or of logs, the log keys the caller knows besides)
// under the checkpoint's origin, and cosigned by a quorum of its
// witnesses. A signature by a known key that does not verify (a forged
// cosignature) rejects the whole note, as signed notes require.
func (p *Policy) Verify(msg []byte, logs ...note.Verifier) (tlog.Checkpoint, error) {
	type key struct {
		name string
		hash uint32
	}
	isLog := map[key]bool{}
	var vs []note.Verifier
	for _, v := range append(verifiers(p.Logs), logs...) {
		if k := (key{v.Name(), v.KeyHash()}); !isLog[k] {
			isLog[k] = true
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return tlog.Checkpoint{}, errors.New("witness policy: no log key to check the checkpoint with")
	}
	witness := map[key]int{}
	for i, w := range p.Witnesses {
		witness[key{w.Verifier.Name(), w.Verifier.KeyHash()}] = i
		vs = append(vs, w.Verifier)
	}
	n, err := note.Open(msg, note.VerifierList(vs...))
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("witness policy: %w", err)
	}
	c, err := tlog.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("witness policy: %w", err)
	}
	signedByLog := false
	cosigned := make([]bool, len(p.Witnesses))
	for _, s := range n.Sigs {
		k := key{s.Name, s.Hash}
		if isLog[k] && s.Name == c.Origin {
			signedByLog = true
		}
		if i, ok := witness[k]; ok {
			cosigned[i] = true
		}
	}
	if !signedByLog {
		return tlog.Checkpoint{}, fmt.Errorf("witness policy: the checkpoint of %q is not signed by a log key of that name", c.Origin)
	}
	if p.quorum != nil && !p.quorum.witnessed(cosigned) {
		var have, lack []string
		for i, ok := range cosigned {
			if ok {
				have = append(have, p.Witnesses[i].Name)
			} else {
				lack = append(lack, p.Witnesses[i].Name)
			}
		}
		by := "none of the policy's witnesses"
		if len(have) > 0 {
			by = fmt.Sprintf("%d of the policy's witnesses (%s)", len(have), strings.Join(have, ", "))
		}
		return tlog.Checkpoint{}, fmt.Errorf("witness policy: the checkpoint is cosigned by %s, short of its quorum: no cosignature by %s", by, strings.Join(lack, ", "))
	}
	return c, nil
}

func verifiers(logs []Log) []note.Verifier {
	out := make([]note.Verifier, len(logs))
	for i, l := range logs {
		out[i] = l.Verifier
	}
	return out
}

// witnessed reports whether a witness cosigned, or at least k members of
// a group witnessed.
func (m *member) witnessed(cosigned []bool) bool {
	if m.group == nil {
		return cosigned[m.witness]
	}
	n := 0
	for _, x := range m.group.members {
		if x.witnessed(cosigned) {
			n++
		}
	}
	return n >= m.group.k
}
