package arena

import (
	"golang.org/x/text/cases"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// Codes of refused profile writes, which the store decides (in the
// transaction that would write the profile) and the forecast track
// returns.
const (
	// CodeProfileNameTaken: another agent, or a baseline, holds the name
	// up to NameKey.
	CodeProfileNameTaken = "profile_name_taken"
	// CodeProfileVersionInvalid: the signed version is not the one after
	// the agent's stored version (a replay, or a concurrent update).
	CodeProfileVersionInvalid = "profile_version_invalid"
)

// NameKey is the form in which two agents' names are compared: the PRECIS
// nickname comparison (RFC 8266: NFKC, spaces mapped and collapsed,
// lower case), then full Unicode case folding and NFKC again. Names with
// the same key are the same name: "Alice", "ALICE", "Ａｌｉｃｅ" and
// " alice " are one. A name PRECIS refuses is its own key (such a name is
// refused before it is stored; this keeps the key total).
func NameKey(name string) string {
	k, err := precis.Nickname.CompareKey(name)
	if err != nil {
		k = name
	}
	return norm.NFKC.String(cases.Fold().String(k))
}

// AgentSubmission is one round an agent committed to, and whether it
// revealed.
type AgentSubmission struct {
	RoundID  uint64
	Revealed bool
}
