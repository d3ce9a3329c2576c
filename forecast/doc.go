// Package forecast is the forecast track's protocol, what a client or a
// verifier outside the arena needs: commitment hashes, EIP-712 signed
// messages, keys and signature recovery, the API's wire types and the log
// entries' formats, rejection codes, round schedules, and validation of
// submissions and profiles against round state. It is pure logic with no
// I/O except the agent key file helpers (Key). Round scoring and the
// leaderboard analysis are package forecast/scoring; the arena's server
// side of the track (which markets a round takes, and everything it
// stores) is its own (internal/rounds).
//
// # Wire formats (what an external agent must reproduce)
//
// Probabilities are uint16 basis points 0..10000 (10000 = certain YES).
//
//	commitHash      = keccak256(uint256 roundId ‖ address agent ‖ uint16 p_1 … p_k ‖ bytes32 salt)
//	predictionsHash = keccak256(uint16 p_1 … p_k)
//	reasoningHash   = keccak256(CanonicalReasoning(reasons)), or 0x00…00 for no reasoning
//
// all tightly packed big-endian (Solidity abi.encodePacked). CompatCommitHash
// is the Foresight Arena format without the address.
//
// Agents sign EIP-712 typed data under the domain
// {name: "ForecastArena", version: "1", chainId, verifyingContract}
// (chainId 0 and the zero address for an arena without a chain) with types
//
//	Commit(uint256 roundId,bytes32 commitHash,bytes32 reasoningHash,address agent,uint256 nonce,uint256 deadline)
//	Reveal(uint256 roundId,bytes32 predictionsHash,bytes32 salt,address agent,uint256 nonce,uint256 deadline)
//
// Signatures are 65 bytes r ‖ s ‖ v, v ∈ {27, 28}, s ≤ n/2, sent as 0x-hex.
// Deadlines are Unix seconds. The nonce is one per-agent counter across
// commits and reveals, starting at 0 and incremented by each accepted
// request. CommitTypedData and RevealTypedData give the eth_signTypedData_v4
// JSON for wallet signers.
//
// # How the round service uses this package
//
// For a commit request: Domain.CheckRequest (if the request names a chain
// or contract), then Domain.VerifyCommit — both need no state and run
// before any transaction — then, in one transaction, load the State, call
// ValidateCommit, and on success store the commit and increment the nonce.
// Reveals are the same with VerifyReveal and ValidateReveal. A rejected
// request stores nothing. Every rejection is an *arena.Error with one of
// the codes listed at CodeSignatureMalformed and in Codes.
//
// After outcomes are frozen, scoring.ScoreRound gives each agent's exact
// bps² and float Brier and Alpha; commits without reveals are forfeits.
package forecast
