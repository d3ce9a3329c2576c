package forecast

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/secure/precis"

	"github.com/forecast-arena/arena"
)

// Caps on a profile's fields, in characters. A name fits in 40, shorter
// than a 42-character address (arena.AddressLike refuses the parts of
// one).
const (
	MaxProfileName         = 40
	MaxProfileOrganisation = 80
	MaxProfileModel        = 80
	MaxProfileHomepage     = 200
	MaxProfileDescription  = 280
)

// NormalizeProfile returns f in the form CheckProfile accepts: each text
// field as the PRECIS nickname profile enforces it (RFC 8266: NFKC,
// every space a plain one, runs of spaces collapsed, trimmed), the
// homepage trimmed. A field holding a character no name may hold is only
// trimmed (CheckProfile then says which). Clients normalise before they
// sign, since the server stores exactly what was signed.
func NormalizeProfile(f ProfileFields) ProfileFields {
	norm := func(s string) string {
		if n, err := precis.Nickname.String(s); err == nil {
			return n
		}
		return strings.TrimSpace(s)
	}
	return ProfileFields{Name: norm(f.Name), Organisation: norm(f.Organisation), Model: norm(f.Model),
		Homepage: strings.TrimSpace(f.Homepage), Description: norm(f.Description)}
}

// CheckProfile checks a profile's fields in the order of the table in
// Codes: a name of 1 to 40 characters that arena.CheckName admits
// (visible characters of Unicode 13.0, a common script mix, nothing
// address-like); organisation, model (80) and description (280)
// optional; each in normal form (NormalizeProfile) without a control,
// formatting or unassigned character; the homepage empty or an http(s)
// URL with a host and no credentials, at most 200 characters, of visible
// characters only (no space, control or formatting character: a
// bidirectional control would show the link reversed).
func CheckProfile(f ProfileFields) error {
	if f.Name == "" {
		return reject(CodeProfileNameInvalid, "name is required")
	}
	if err := checkProfileText("name", f.Name, MaxProfileName, CodeProfileNameInvalid); err != nil {
		return err
	}
	if err := arena.CheckName(f.Name); err != nil {
		return reject(CodeProfileNameInvalid, "name %q %v", clip(f.Name), err)
	}
	for _, x := range []struct {
		field, s string
		max      int
	}{{"organisation", f.Organisation, MaxProfileOrganisation}, {"model", f.Model, MaxProfileModel}} {
		if err := checkProfileText(x.field, x.s, x.max, CodeProfileTextInvalid); err != nil {
			return err
		}
	}
	if err := checkHomepage(f.Homepage); err != nil {
		return err
	}
	return checkProfileText("description", f.Description, MaxProfileDescription, CodeProfileTextInvalid)
}

func checkProfileText(field, s string, max int, code string) error {
	if s == "" {
		return nil
	}
	if !utf8.ValidString(s) {
		return reject(code, "%s is not valid UTF-8", field)
	}
	n, err := precis.Nickname.String(s)
	if err != nil {
		return reject(code, "%s %q holds a character a name may not hold (a control, formatting or unassigned character)", field, clip(s))
	}
	if n != s {
		return reject(code, "%s %q is not in normal form (NFKC, single spaces, trimmed): sign %q instead", field, clip(s), n)
	}
	if c := utf8.RuneCountInString(s); c > max {
		return reject(code, "%s is %d characters long, the most is %d", field, c, max)
	}
	return nil
}

func checkHomepage(s string) error {
	if s == "" {
		return nil
	}
	switch {
	case !utf8.ValidString(s):
		return reject(CodeProfileHomepageInvalid, "homepage is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxProfileHomepage:
		return reject(CodeProfileHomepageInvalid, "homepage is longer than %d characters", MaxProfileHomepage)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsGraphic(r) }):
		return reject(CodeProfileHomepageInvalid, "homepage %q holds a space, a control or a formatting character", clip(s))
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return reject(CodeProfileHomepageInvalid, "homepage %q is not an http:// or https:// URL with a host", clip(s))
	case u.User != nil:
		return reject(CodeProfileHomepageInvalid, "homepage %q holds a user name or password", clip(s))
	}
	return nil
}

// clip shortens a client's text echoed in an error.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:64]) + "…"
}

// reservedNames are the baselines' ids and display names: no agent may
// pass for a baseline.
var reservedNames = BaselineNameSet()

// BaselineNameSet is the set of the baselines' names and ids, each held
// by its baseline: the names taken before any agent's.
func BaselineNameSet() *arena.NameSet {
	var out arena.NameSet
	for id, name := range BaselineNames() {
		out.Add(id, id)
		out.Add(name, id)
	}
	return &out
}

func checkReserved(name string) error {
	if id, ok := reservedNames.Holder(name); ok {
		return reject(CodeProfileNameTaken, "the name %q is the %s baseline's, or passes for it", name, id)
	}
	return nil
}

func profileJSON(a arena.AgentInfo) ProfileJSON {
	return ProfileJSON{Agent: a.Address, Kind: a.Kind, Version: a.ProfileVersion, ProfileFields: ProfileFields{Name: a.Name,
		Organisation: a.Organisation, Model: a.Model, Homepage: a.Homepage, Description: a.Description}}
}

// Profile returns an agent's profile as the API shows it; an address
// never seen has an empty one at version 0.
func (s *Service) Profile(ctx context.Context, agent string) (ProfileJSON, error) {
	addr, err := ParseAddress(agent)
	if err != nil {
		return ProfileJSON{}, err
	}
	a, err := s.Store.Agent(ctx, addr.Hex())
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return ProfileJSON{Agent: addr.Hex()}, nil
	}
	if err != nil {
		return ProfileJSON{}, err
	}
	return profileJSON(*a), nil
}

// SetProfile verifies and records a signed profile update of agent, and
// logs it. It refuses, storing nothing, a profile that is not in normal
// form or out of bounds, a signature that is not the agent's under this
// arena's domain, a deadline past or more than 24 h ahead, a name another
// agent or a baseline holds (or one that passes for it), any version but
// the next, and an update past the agent's allowance of updates a day.
func (s *Service) SetProfile(ctx context.Context, agent string, req ProfileRequest) (ProfileJSON, error) {
	addr, err := ParseAddress(agent)
	if err != nil {
		return ProfileJSON{}, err
	}
	if err := CheckProfile(req.ProfileFields); err != nil {
		return ProfileJSON{}, err
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return ProfileJSON{}, err
	}
	sig, err := DecodeSignature(req.Signature)
	if err != nil {
		return ProfileJSON{}, err
	}
	msg := Profile{Agent: addr, ProfileFields: req.ProfileFields, Version: req.Version, Deadline: req.Deadline}
	if err := s.Domain.VerifyProfile(msg, sig); err != nil {
		return ProfileJSON{}, err
	}
	now := s.now()
	if err := checkDeadline(req.Deadline, now); err != nil {
		return ProfileJSON{}, err
	}
	if err := checkReserved(req.Name); err != nil {
		return ProfileJSON{}, err
	}
	if err := s.Admission.admitNew(ctx, addr.Hex(), now); err != nil {
		return ProfileJSON{}, err
	}
	f := req.ProfileFields
	entry := ProfileEntry{Agent: addr.Hex(), Name: f.Name, Organisation: f.Organisation, Model: f.Model, Homepage: f.Homepage,
		Description: f.Description, Version: req.Version, Deadline: req.Deadline, Signature: EncodeSignature(sig)}
	leaf, err := s.leafInTx(logProfile, entry)
	if err != nil {
		return ProfileJSON{}, err
	}
	a := arena.AgentInfo{Address: addr.Hex(), Name: f.Name, Organisation: f.Organisation, Model: f.Model, Homepage: f.Homepage,
		Description: f.Description, ProfileVersion: req.Version}
	err = s.Store.SetProfile(ctx, a, leaf, func(cur, next *arena.AgentInfo) error {
		var stored uint64
		var spent time.Time
		if cur != nil {
			stored, spent, a.Kind = cur.ProfileVersion, cur.ProfileSpentUntil, cur.Kind
		}
		if req.Version != stored+1 {
			return reject(CodeProfileVersionInvalid, "version %d: agent %s's profile is at version %d, so the next update is version %d",
				req.Version, addr.Hex(), stored, stored+1)
		}
		until, err := s.Admission.spendProfileUpdate(addr.Hex(), spent, now)
		next.ProfileSpentUntil = until
		return err
	})
	if err != nil {
		return ProfileJSON{}, err
	}
	if leaf == nil {
		s.record(ctx, logProfile, entry)
	}
	s.log().InfoContext(ctx, "agent profile updated", "agent", addr.Hex(), "version", req.Version)
	if a.Kind == "" {
		a.Kind = "external"
	}
	return profileJSON(a), nil
}

// ProfileStore is what registering an agent needs of storage.
type ProfileStore interface {
	SetProfile(ctx context.Context, a arena.AgentInfo, leaf *arena.LogLeaf, check func(cur, next *arena.AgentInfo) error) error
}

// errOwnProfile: the agent signed a profile of its own, which the
// operator's registration leaves alone.
var errOwnProfile = errors.New("forecast: the agent signed its own profile")

// RegisterAgent records the kind and profile of an agent the operator
// runs (hosted or simulated): checked as a signed update is, under the
// same unique names, but unsigned and unlogged, so its fields are the
// operator's claim. An agent that signed a profile of its own keeps it.
func RegisterAgent(ctx context.Context, st ProfileStore, a arena.AgentInfo) error {
	if err := CheckProfile(ProfileFields{Name: a.Name, Organisation: a.Organisation, Model: a.Model, Homepage: a.Homepage,
		Description: a.Description}); err != nil {
		return err
	}
	if err := checkReserved(a.Name); err != nil {
		return err
	}
	a.ProfileVersion = 0
	err := st.SetProfile(ctx, a, nil, func(cur, _ *arena.AgentInfo) error {
		if cur != nil && cur.ProfileVersion > 0 {
			return errOwnProfile
		}
		return nil
	})
	if errors.Is(err, errOwnProfile) {
		return nil
	}
	return err
}

// Profiles returns every agent's record by id, baselines included (kind
// builtin, their fixed display names): the one source of what the
// leaderboards, pages, exports and tables call an agent.
func (s *Service) Profiles(ctx context.Context) (map[string]arena.AgentInfo, error) {
	out := map[string]arena.AgentInfo{}
	for id, name := range BaselineNames() {
		out[id] = arena.AgentInfo{Address: id, Name: name, Kind: "builtin"}
	}
	agents, err := s.Store.Agents(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if b, ok := out[a.Address]; ok && a.Name == "" {
			a.Name = b.Name
		}
		out[a.Address] = a
	}
	return out, nil
}
