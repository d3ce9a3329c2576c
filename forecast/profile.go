package forecast

import (
	"net/url"
	"strings"
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
		return Reject(CodeProfileNameInvalid, "name is required")
	}
	if err := checkProfileText("name", f.Name, MaxProfileName, CodeProfileNameInvalid); err != nil {
		return err
	}
	if err := arena.CheckName(f.Name); err != nil {
		return Reject(CodeProfileNameInvalid, "name %q %v", arena.Clip(f.Name), err)
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
		return Reject(code, "%s is not valid UTF-8", field)
	}
	n, err := precis.Nickname.String(s)
	if err != nil {
		return Reject(code, "%s %q holds a character a name may not hold (a control, formatting or unassigned character)", field, arena.Clip(s))
	}
	if n != s {
		return Reject(code, "%s %q is not in normal form (NFKC, single spaces, trimmed): sign %q instead", field, arena.Clip(s), n)
	}
	if c := utf8.RuneCountInString(s); c > max {
		return Reject(code, "%s is %d characters long, the most is %d", field, c, max)
	}
	return nil
}

func checkHomepage(s string) error {
	if s == "" {
		return nil
	}
	switch {
	case !utf8.ValidString(s):
		return Reject(CodeProfileHomepageInvalid, "homepage is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxProfileHomepage:
		return Reject(CodeProfileHomepageInvalid, "homepage is longer than %d characters", MaxProfileHomepage)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsGraphic(r) }):
		return Reject(CodeProfileHomepageInvalid, "homepage %q holds a space, a control or a formatting character", arena.Clip(s))
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return Reject(CodeProfileHomepageInvalid, "homepage %q is not an http:// or https:// URL with a host", arena.Clip(s))
	case u.User != nil:
		return Reject(CodeProfileHomepageInvalid, "homepage %q holds a user name or password", arena.Clip(s))
	}
	return nil
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

// CheckReservedName refuses a profile name a baseline holds, or one that
// passes for it.
func CheckReservedName(name string) error {
	if id, ok := reservedNames.Holder(name); ok {
		return Reject(CodeProfileNameTaken, "the name %q is the %s baseline's, or passes for it", name, id)
	}
	return nil
}

// Baseline agents scored in every round. The market baseline is the one
// package stats adds to every analysis, under the same name (spelt out
// here: the protocol does not import the statistics).
const (
	RandomAgent = "random"
	MarketAgent = "market"
)

// BaselineNames are the display names of the baselines scored in every
// round.
func BaselineNames() map[string]string {
	return map[string]string{RandomAgent: "Random (uniform)", MarketAgent: "Market (benchmark)"}
}
