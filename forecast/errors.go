package forecast

import (
	"time"

	"github.com/forecast-arena/arena"
)

// Rejection codes. Every request the protocol refuses fails with an
// *arena.Error whose Code is one of these constants and whose Kind selects
// the HTTP status. The codes are the API contract: never rename or reuse one.
//
// Agent submissions, in the order the checks run:
//
//	code                   kind          when
//	address_invalid        invalid       agent is not a 0x-prefixed 20-byte hex address
//	hash_invalid           invalid       commit_hash, reasoning_hash or salt is not 0x-prefixed 32-byte hex
//	domain_mismatch        invalid       the request names a chain_id / verifying_contract other than the server's
//	signature_malformed    invalid       signature is not 65 bytes (or not 0x-hex when decoded from text)
//	signature_v_invalid    invalid       v is not 27 or 28 (v = 0/1 is refused: sign with v+27)
//	signature_invalid      unauthorized  r or s is zero or ≥ secp256k1 n, or no public key recovers
//	signature_high_s       invalid       s > n/2 (malleable twin of a valid signature)
//	signer_mismatch        unauthorized  the recovered signer is not the message's agent (also what a
//	                                     signature made for another chain id or contract yields)
//	round_not_found        not_found     no such round
//	round_invalidated      conflict      the round was invalidated by the operator
//	deadline_expired       invalid       the signed deadline is before now
//	deadline_too_far       invalid       the signed deadline is more than 24 h after now
//	prediction_count       invalid       reveal: number of predictions ≠ k
//	prediction_range       invalid       reveal: a prediction > 10000 bps
//	commit_closed          conflict      commit: now is after commit_deadline
//	reveal_not_open        conflict      reveal: now is before reveal_start
//	reveal_closed          conflict      reveal: now is after reveal_deadline
//	already_committed      conflict      commit: the agent already committed in this round
//	not_committed          conflict      reveal: the agent has no commit in this round
//	already_revealed       conflict      reveal: the agent already revealed in this round
//	nonce_invalid          conflict      the nonce is not the agent's current one (stale, reused or ahead)
//	commit_mismatch        invalid       reveal: CommitHash(round, agent, predictions, salt) ≠ stored commit
//
// Reasoning upload, after the agent's reveal:
//
//	reasoning_too_large       too_large  canonical reasoning exceeds MaxReasoningBytes
//	reasoning_malformed       invalid    not a JSON array of k strings in valid UTF-8
//	reasoning_not_revealed    conflict   the agent has not revealed (yet) in this round
//	reasoning_not_committed   conflict   the commit carried no reasoning hash (zero)
//	reasoning_already_stored  conflict   reasoning for this commit was already accepted
//	reasoning_mismatch        invalid    ReasoningHash(reasoning) ≠ the committed reasoning hash
//	reasoning_unpublished     not_found  reading reasoning before the round's outcomes are triggered
//	reasoning_not_found       not_found  the agent uploaded no reasoning in this round
//
// Profile updates (POST /api/v1/agents/{address}/profile), in the order the
// checks run; address_invalid, domain_mismatch, the signature codes,
// signer_mismatch, deadline_expired, deadline_too_far and
// too_many_new_agents (an agent's first profile joins the arena as its
// first commit does) apply as to submissions, in the table's order:
//
//	profile_name_invalid      invalid   name empty, longer than 40 characters, holding a character
//	                                    a name may not (control, formatting, unassigned, newer than
//	                                    Unicode 13.0, showing nothing, marks stacked), not in normal
//	                                    form (NormalizeProfile: NFKC, spaces collapsed, trimmed),
//	                                    mixing scripts other than as arena.NameScripts admits, or
//	                                    address-like (arena.AddressLike); see arena.CheckName
//	profile_text_invalid      invalid   organisation or model longer than 80 characters, description
//	                                    longer than 280, a character they may not hold, or not in
//	                                    normal form
//	profile_homepage_invalid  invalid   homepage not an http or https URL with a host, with a user
//	                                    name or password, with a space, control or formatting
//	                                    character (a bidirectional control among them), or longer
//	                                    than 200 characters
//	profile_name_taken        conflict  another agent or a baseline holds the name or one it can pass
//	                                    for: ignoring case, compatibility forms and look-alike
//	                                    characters (arena.SameName)
//	profile_version_invalid   conflict  version is not the agent's stored version + 1 (a replay, or an
//	                                    update stored meanwhile)
//	too_many_profile_updates  too_many  the agent has made the signed updates a day allows
//	                                    (Admission.ProfileUpdatesPerDay: that many at once, then one
//	                                    every 24 h / that many; a RetryLater with Retry-After)
//
// Round definition (operator side):
//
//	schedule_invalid       invalid  not commit_deadline < reveal_start ≤ reveal_deadline
//	round_markets_invalid  invalid  market count ≠ k, duplicate market or event, non-binary,
//	                                not open, or closing at or before the reveal deadline
//	not_enough_markets     invalid  SelectMarkets found fewer than k eligible markets
//	rules_invalid          invalid  selection rules out of range
//
// Operator trigger:
//
//	trigger_not_allowed    conflict  the round is not past its reveal deadline, already scored, or its
//	                                 benchmarks are not captured yet (a failing lookup is retried)
//	no_resolved_markets    conflict  no market of the round has resolved to YES or NO yet
//
// Operator resolution (admin resolve):
//
//	market_in_open_round   conflict  a round containing the market, not yet scored, is before its
//	                                 reveal deadline (publishing the outcome would leak it to revealers)
//
// Admission caps (commit; configured per deployment, see Admission):
//
//	round_full             conflict  the round already has the most agents a round admits (final
//	                                 for the round: commit to a later one)
//	too_many_new_agents    too_many  the most new agents an hour admits have joined in the last hour
//	                                 (a RetryLater: the HTTP answer's Retry-After says when one may)
//
// The HTTP layer adds malformed_json (invalid), body_too_large (too_large),
// invalid_text (invalid: a NUL byte or invalid UTF-8 in the path or query),
// unknown_parameter, missing_parameter and invalid_parameter (invalid: a
// query parameter the route does not declare, a required one missing, a
// value outside its type or values), rate_limited (too_many, with
// Retry-After), unauthorized (unauthorized) and admin_disabled (forbidden)
// for any request.
const (
	CodeAddressInvalid     = "address_invalid"
	CodeHashInvalid        = "hash_invalid"
	CodeSignatureMalformed = "signature_malformed"
	CodeSignatureV         = "signature_v_invalid"
	CodeSignatureInvalid   = "signature_invalid"
	CodeSignatureHighS     = "signature_high_s"
	CodeSignerMismatch     = "signer_mismatch"
	CodeDomainMismatch     = "domain_mismatch"
	CodeRoundNotFound      = "round_not_found"
	CodeRoundInvalidated   = "round_invalidated"
	CodeDeadlineExpired    = "deadline_expired"
	CodeDeadlineTooFar     = "deadline_too_far"
	CodePredictionCount    = "prediction_count"
	CodePredictionRange    = "prediction_range"
	CodeCommitClosed       = "commit_closed"
	CodeRevealNotOpen      = "reveal_not_open"
	CodeRevealClosed       = "reveal_closed"
	CodeAlreadyCommitted   = "already_committed"
	CodeNotCommitted       = "not_committed"
	CodeAlreadyRevealed    = "already_revealed"
	CodeNonceInvalid       = "nonce_invalid"
	CodeCommitMismatch     = "commit_mismatch"

	CodeReasoningTooLarge     = "reasoning_too_large"
	CodeReasoningMalformed    = "reasoning_malformed"
	CodeReasoningNotRevealed  = "reasoning_not_revealed"
	CodeReasoningNotCommitted = "reasoning_not_committed"
	CodeReasoningStored       = "reasoning_already_stored"
	CodeReasoningMismatch     = "reasoning_mismatch"
	CodeReasoningUnpublished  = "reasoning_unpublished"
	CodeReasoningNotFound     = "reasoning_not_found"

	CodeTriggerNotAllowed = "trigger_not_allowed"
	CodeNoResolvedMarkets = "no_resolved_markets"

	CodeMarketInOpenRound = "market_in_open_round"

	CodeScheduleInvalid     = "schedule_invalid"
	CodeRoundMarketsInvalid = "round_markets_invalid"
	CodeNotEnoughMarkets    = "not_enough_markets"
	CodeRulesInvalid        = "rules_invalid"

	CodeRoundFull        = "round_full"
	CodeTooManyNewAgents = "too_many_new_agents"

	CodeProfileNameInvalid     = "profile_name_invalid"
	CodeProfileTextInvalid     = "profile_text_invalid"
	CodeProfileHomepageInvalid = "profile_homepage_invalid"
	CodeProfileNameTaken       = arena.CodeProfileNameTaken
	CodeProfileVersionInvalid  = arena.CodeProfileVersionInvalid
	CodeTooManyProfileUpdates  = "too_many_profile_updates"
)

// Codes maps every rejection code to its error kind; it is the table above
// in machine form (the HTTP layer and the API docs can be generated from it).
var Codes = map[string]string{
	CodeSignatureMalformed: arena.EINVALID,
	CodeSignatureV:         arena.EINVALID,
	CodeSignatureInvalid:   arena.EUNAUTHORIZED,
	CodeSignatureHighS:     arena.EINVALID,
	CodeSignerMismatch:     arena.EUNAUTHORIZED,
	CodeDomainMismatch:     arena.EINVALID,
	CodeRoundNotFound:      arena.ENOTFOUND,
	CodeRoundInvalidated:   arena.ECONFLICT,
	CodeDeadlineExpired:    arena.EINVALID,
	CodeDeadlineTooFar:     arena.EINVALID,
	CodePredictionCount:    arena.EINVALID,
	CodePredictionRange:    arena.EINVALID,
	CodeCommitClosed:       arena.ECONFLICT,
	CodeRevealNotOpen:      arena.ECONFLICT,
	CodeRevealClosed:       arena.ECONFLICT,
	CodeAlreadyCommitted:   arena.ECONFLICT,
	CodeNotCommitted:       arena.ECONFLICT,
	CodeAlreadyRevealed:    arena.ECONFLICT,
	CodeNonceInvalid:       arena.ECONFLICT,
	CodeCommitMismatch:     arena.EINVALID,

	CodeReasoningTooLarge:     arena.ETOOLARGE,
	CodeReasoningMalformed:    arena.EINVALID,
	CodeReasoningNotRevealed:  arena.ECONFLICT,
	CodeReasoningNotCommitted: arena.ECONFLICT,
	CodeReasoningStored:       arena.ECONFLICT,
	CodeReasoningMismatch:     arena.EINVALID,

	CodeAddressInvalid:       arena.EINVALID,
	CodeHashInvalid:          arena.EINVALID,
	CodeReasoningUnpublished: arena.ENOTFOUND,
	CodeReasoningNotFound:    arena.ENOTFOUND,
	CodeTriggerNotAllowed:    arena.ECONFLICT,
	CodeNoResolvedMarkets:    arena.ECONFLICT,
	CodeMarketInOpenRound:    arena.ECONFLICT,

	CodeScheduleInvalid:     arena.EINVALID,
	CodeRoundMarketsInvalid: arena.EINVALID,
	CodeNotEnoughMarkets:    arena.EINVALID,
	CodeRulesInvalid:        arena.EINVALID,

	CodeRoundFull:        arena.ECONFLICT,
	CodeTooManyNewAgents: arena.ETOOMANY,

	CodeProfileNameInvalid:     arena.EINVALID,
	CodeProfileTextInvalid:     arena.EINVALID,
	CodeProfileHomepageInvalid: arena.EINVALID,
	CodeProfileNameTaken:       arena.ECONFLICT,
	CodeProfileVersionInvalid:  arena.ECONFLICT,
	CodeTooManyProfileUpdates:  arena.ETOOMANY,
}

// Reject builds the *arena.Error refusing a request with code, of the kind
// Codes gives it, so a code can never be raised with two different kinds.
// It panics for a code not in Codes.
func Reject(code, format string, args ...any) *arena.Error {
	kind, ok := Codes[code]
	if !ok {
		panic("forecast: unregistered rejection code " + code)
	}
	return arena.Rejectf(kind, code, format, args...)
}

// RetryLater is a rejection that may pass later: After is how long until
// it may (an HTTP answer's Retry-After). It unwraps to the *arena.Error
// that says what was refused.
type RetryLater struct {
	Err   *arena.Error
	After time.Duration
}

func (e *RetryLater) Error() string { return e.Err.Error() }

// Unwrap returns the rejection.
func (e *RetryLater) Unwrap() error { return e.Err }

// RetryAfter is how long until the request may pass.
func (e *RetryLater) RetryAfter() time.Duration { return e.After }
