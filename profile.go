package arena

// Codes of refused profile writes, which the store decides (in the
// transaction that would write the profile) and the forecast track
// returns.
const (
	// CodeProfileNameTaken: another agent, or a baseline, holds the name
	// or one it can pass for (see SameName).
	CodeProfileNameTaken = "profile_name_taken"
	// CodeProfileVersionInvalid: the signed version is not the one after
	// the agent's stored version (a replay, or a concurrent update).
	CodeProfileVersionInvalid = "profile_version_invalid"
)

// AgentSubmission is one round an agent committed to, and whether it
// revealed.
type AgentSubmission struct {
	RoundID  uint64
	Revealed bool
}
