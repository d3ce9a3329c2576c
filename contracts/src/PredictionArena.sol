// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {RoundManager} from "./RoundManager.sol";

/// @notice The part of the Gnosis conditional-tokens framework the arena reads.
interface IConditionalTokens {
    function payoutNumerators(bytes32 conditionId, uint256 index) external view returns (uint256);
    function payoutDenominator(bytes32 conditionId) external view returns (uint256);
}

/// @title PredictionArena
/// @notice Commit–reveal of probability forecasts (integer basis points) on
/// the markets of a RoundManager round, directly or through a relayer with
/// the agent's EIP-712 signature, and proper scoring in squared basis
/// points, computed exactly as the off-chain scorer does (integer division
/// truncating toward zero).
contract PredictionArena {
    uint256 internal constant MAX_BPS = 10000;
    int256 internal constant BPS2 = 1e8;
    /// Largest number of agents one scoreBatch call scores, so no call's gas
    /// grows with the number of agents.
    uint256 public constant MAX_BATCH = 64;
    /// How far ahead a signed deadline may lie, so a leaked signed message
    /// cannot be held back and replayed much later.
    uint256 public constant MAX_DEADLINE_AHEAD = 24 hours;

    /// Frozen outcomes: 1 YES, 0 NO, and two kinds excluded from scoring.
    int8 public constant OUTCOME_NO = 0;
    int8 public constant OUTCOME_YES = 1;
    int8 public constant OUTCOME_VOID = -1; // resolved with a split payout
    int8 public constant OUTCOME_UNRESOLVED = -2;

    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant COMMIT_TYPEHASH = keccak256(
        "Commit(uint256 roundId,bytes32 commitHash,bytes32 reasoningHash,address agent,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant REVEAL_TYPEHASH = keccak256(
        "Reveal(uint256 roundId,bytes32 predictionsHash,bytes32 salt,address agent,uint256 nonce,uint256 deadline)"
    );
    bytes32 internal constant NAME_HASH = keccak256("ForecastArena");
    bytes32 internal constant VERSION_HASH = keccak256("1");

    // secp256k1 group order n and n/2 (EIP-2: s ≤ n/2).
    uint256 internal constant SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141;
    uint256 internal constant SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    struct Submission {
        bytes32 commitHash;
        bytes32 reasoningHash;
        bool committed;
        bool revealed;
        uint16[] predictions;
    }

    struct Score {
        bool scored;
        bool forfeit;
        int64 brierBps2;
        int64 alphaBps2;
    }

    struct Result {
        bool triggered;
        uint8 n; // markets with outcome YES or NO (the frozen set)
        uint8 alphaN; // of those, markets with a benchmark
        int256 baseSum; // Σ over the alpha set of (b − 10000·x)²
        uint256 scoredCount; // participants scored so far, in order
        int8[] outcomes;
    }

    RoundManager public immutable rounds;
    IConditionalTokens public immutable ctf;

    mapping(address => uint256) public nonces;
    mapping(uint256 => mapping(address => Submission)) internal submissions;
    mapping(uint256 => address[]) internal participants;
    mapping(uint256 => mapping(address => Score)) internal scores;
    mapping(uint256 => Result) internal results;

    // One error per rejection; the names match the off-chain API's codes.
    error SignatureMalformed();
    error SignatureV();
    error SignatureInvalid();
    error SignatureHighS();
    error SignerMismatch();
    error RoundNotFound();
    error RoundInvalidated();
    error DeadlineExpired();
    error DeadlineTooFar();
    error PredictionCount();
    error PredictionRange();
    error CommitClosed();
    error RevealNotOpen();
    error RevealClosed();
    error AlreadyCommitted();
    error NotCommitted();
    error AlreadyRevealed();
    error NonceInvalid();
    error CommitMismatch();
    error TriggerNotAllowed();
    error NoResolvedMarkets();
    error NotTriggered();
    error BatchSize();

    event Committed(uint256 indexed roundId, address indexed agent, bytes32 commitHash, bytes32 reasoningHash, uint256 nonce);
    event Revealed(uint256 indexed roundId, address indexed agent, uint16[] predictions, bytes32 salt, uint256 nonce);
    event OutcomesTriggered(uint256 indexed roundId, int8[] outcomes, uint256 scored, uint256 benchmarked, int256 baseBrierBps2);
    event AgentScored(uint256 indexed roundId, address indexed agent, bool forfeit, int256 brierBps2, int256 alphaBps2);

    constructor(RoundManager rounds_, IConditionalTokens ctf_) {
        rounds = rounds_;
        ctf = ctf_;
    }

    // ---- hashes -------------------------------------------------------

    /// @notice EIP-712 domain separator {name:"ForecastArena", version:"1", chainId, this}.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice keccak256(uint256 roundId ‖ address agent ‖ uint16 p_1 … p_k ‖ bytes32 salt), tightly packed.
    function commitHashOf(uint256 roundId, address agent, uint16[] calldata predictions, bytes32 salt)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(roundId, agent, _pack(predictions), salt));
    }

    /// @notice The deployed Foresight Arena format: the same packing without the address.
    function compatCommitHash(uint256 roundId, uint16[] calldata predictions, bytes32 salt) external pure returns (bytes32) {
        return keccak256(abi.encodePacked(roundId, _pack(predictions), salt));
    }

    /// @notice keccak256 of the predictions as tightly packed big-endian uint16s.
    function predictionsHash(uint16[] calldata predictions) public pure returns (bytes32) {
        return keccak256(_pack(predictions));
    }

    function commitDigest(uint256 roundId, bytes32 commitHash, bytes32 reasoningHash, address agent, uint256 nonce, uint256 deadline)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(COMMIT_TYPEHASH, roundId, commitHash, reasoningHash, agent, nonce, deadline));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function revealDigest(uint256 roundId, bytes32 predsHash, bytes32 salt, address agent, uint256 nonce, uint256 deadline)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(REVEAL_TYPEHASH, roundId, predsHash, salt, agent, nonce, deadline));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function _pack(uint16[] calldata p) internal pure returns (bytes memory b) {
        b = new bytes(2 * p.length);
        for (uint256 i = 0; i < p.length; i++) {
            b[2 * i] = bytes1(uint8(p[i] >> 8));
            b[2 * i + 1] = bytes1(uint8(p[i]));
        }
    }

    // ---- submissions --------------------------------------------------

    /// @notice Commits for msg.sender. Uses (and increments) the sender's nonce
    /// like a signed commit, so the two paths share one counter.
    function commit(uint256 roundId, bytes32 commitHash, bytes32 reasoningHash) external {
        uint64 commitDeadline = _checkRound(roundId).commitDeadline;
        _commit(roundId, commitHash, reasoningHash, msg.sender, nonces[msg.sender], commitDeadline);
    }

    /// @notice Commits for `agent`, who signed the EIP-712 Commit message; anyone may relay it.
    function commitWithSignature(
        uint256 roundId,
        bytes32 commitHash,
        bytes32 reasoningHash,
        address agent,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external {
        _verify(commitDigest(roundId, commitHash, reasoningHash, agent, nonce, deadline), signature, agent);
        uint64 commitDeadline = _checkRound(roundId).commitDeadline;
        _checkDeadline(deadline);
        _commit(roundId, commitHash, reasoningHash, agent, nonce, commitDeadline);
    }

    /// @notice Reveals msg.sender's predictions and salt.
    function reveal(uint256 roundId, uint16[] calldata predictions, bytes32 salt) external {
        _reveal(roundId, predictions, salt, msg.sender, nonces[msg.sender], _checkRound(roundId));
    }

    /// @notice Reveals for `agent`, who signed the EIP-712 Reveal message.
    function revealWithSignature(
        uint256 roundId,
        uint16[] calldata predictions,
        bytes32 salt,
        address agent,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external {
        _verify(revealDigest(roundId, predictionsHash(predictions), salt, agent, nonce, deadline), signature, agent);
        RoundInfo memory ri = _checkRound(roundId);
        _checkDeadline(deadline);
        _reveal(roundId, predictions, salt, agent, nonce, ri);
    }

    function _commit(uint256 roundId, bytes32 commitHash, bytes32 reasoningHash, address agent, uint256 nonce, uint64 commitDeadline)
        internal
    {
        if (block.timestamp > commitDeadline) revert CommitClosed();
        Submission storage s = submissions[roundId][agent];
        if (s.committed) revert AlreadyCommitted();
        if (nonce != nonces[agent]) revert NonceInvalid();
        nonces[agent] = nonce + 1;
        s.committed = true;
        s.commitHash = commitHash;
        s.reasoningHash = reasoningHash;
        participants[roundId].push(agent);
        emit Committed(roundId, agent, commitHash, reasoningHash, nonce);
    }

    function _reveal(
        uint256 roundId,
        uint16[] calldata predictions,
        bytes32 salt,
        address agent,
        uint256 nonce,
        RoundInfo memory ri
    ) internal {
        if (predictions.length != ri.k) revert PredictionCount();
        for (uint256 i = 0; i < ri.k; i++) {
            if (predictions[i] > MAX_BPS) revert PredictionRange();
        }
        if (block.timestamp < ri.revealStart) revert RevealNotOpen();
        if (block.timestamp > ri.revealDeadline) revert RevealClosed();
        if (results[roundId].triggered) revert RevealClosed();
        Submission storage s = submissions[roundId][agent];
        if (!s.committed) revert NotCommitted();
        if (s.revealed) revert AlreadyRevealed();
        if (nonce != nonces[agent]) revert NonceInvalid();
        if (commitHashOf(roundId, agent, predictions, salt) != s.commitHash) revert CommitMismatch();
        nonces[agent] = nonce + 1;
        s.revealed = true;
        s.predictions = predictions;
        emit Revealed(roundId, agent, predictions, salt, nonce);
    }

    struct RoundInfo {
        bool benchmarksSet;
        uint64 commitDeadline;
        uint64 revealStart;
        uint64 revealDeadline;
        uint64 grace;
        uint256 k;
    }

    function _checkRound(uint256 roundId) internal view returns (RoundInfo memory ri) {
        bool exists;
        bool invalidated;
        (exists, invalidated, ri.benchmarksSet, ri.commitDeadline, ri.revealStart, ri.revealDeadline, ri.grace, ri.k) =
            rounds.getRound(roundId);
        if (!exists) revert RoundNotFound();
        if (invalidated) revert RoundInvalidated();
    }

    /// Valid while now ≤ deadline ≤ now + MAX_DEADLINE_AHEAD.
    function _checkDeadline(uint256 deadline) internal view {
        if (deadline < block.timestamp) revert DeadlineExpired();
        if (deadline - block.timestamp > MAX_DEADLINE_AHEAD) revert DeadlineTooFar();
    }

    /// Accepts only canonical signatures r ‖ s ‖ v: 65 bytes, v ∈ {27,28},
    /// 0 < r,s < n and s ≤ n/2, checked in that order.
    function _verify(bytes32 digest, bytes calldata sig, address agent) internal pure {
        if (sig.length != 65) revert SignatureMalformed();
        uint8 v = uint8(sig[64]);
        if (v != 27 && v != 28) revert SignatureV();
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        if (uint256(r) == 0 || uint256(r) >= SECP256K1_N || uint256(s) == 0 || uint256(s) >= SECP256K1_N) {
            revert SignatureInvalid();
        }
        if (uint256(s) > SECP256K1_HALF_N) revert SignatureHighS();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert SignatureInvalid();
        if (signer != agent) revert SignerMismatch();
    }

    // ---- outcomes and scoring -----------------------------------------

    /// @notice Freezes the round's outcomes from the conditional tokens:
    /// payout [1,0] (index 0 = YES) is YES, [0,1] is NO, any split payout is
    /// void and an unresolved condition is excluded. Allowed after the reveal
    /// deadline once benchmarks are recorded, when every market resolved, or
    /// (after the grace period, or at once for the curator) when at least one
    /// resolved to YES or NO. Cost is linear in the round's markets only.
    function triggerOutcomes(uint256 roundId) external {
        RoundInfo memory ri = _checkRound(roundId);
        uint256 k = ri.k;
        Result storage res = results[roundId];
        if (res.triggered || block.timestamp <= ri.revealDeadline || !ri.benchmarksSet) revert TriggerNotAllowed();
        bytes32[] memory cids = rounds.conditionIdsOf(roundId);
        uint16[] memory bench = rounds.benchmarksOf(roundId);
        int8[] memory outcomes = new int8[](k);
        uint256 resolved;
        uint256 n;
        uint256 alphaN;
        int256 baseSum;
        for (uint256 i = 0; i < k; i++) {
            outcomes[i] = _outcome(cids[i]);
            if (outcomes[i] == OUTCOME_UNRESOLVED) continue;
            resolved++;
            if (outcomes[i] == OUTCOME_VOID) continue;
            n++;
            if (bench[i] != rounds.NO_BENCHMARK()) {
                alphaN++;
                baseSum += _sqErr(int256(uint256(bench[i])), outcomes[i]);
            }
        }
        bool all = resolved == k;
        bool late = block.timestamp >= uint256(ri.revealDeadline) + ri.grace || msg.sender == rounds.curator();
        if (!all) {
            if (n == 0) revert NoResolvedMarkets();
            if (!late) revert TriggerNotAllowed();
        }
        res.triggered = true;
        res.n = uint8(n);
        res.alphaN = uint8(alphaN);
        res.baseSum = baseSum;
        res.outcomes = outcomes;
        emit OutcomesTriggered(roundId, outcomes, n, alphaN, alphaN > 0 ? baseSum / int256(alphaN) : int256(0));
    }

    function _outcome(bytes32 cid) internal view returns (int8) {
        uint256 den = ctf.payoutDenominator(cid);
        if (den == 0) return OUTCOME_UNRESOLVED;
        uint256 yes = ctf.payoutNumerators(cid, 0);
        uint256 no = ctf.payoutNumerators(cid, 1);
        if (yes == den && no == 0) return OUTCOME_YES;
        if (yes == 0 && no == den) return OUTCOME_NO;
        return OUTCOME_VOID;
    }

    /// @notice Scores the next `count` (1..MAX_BATCH) participants of a
    /// triggered round, in commit order; call until scoringDone. A commit
    /// without a reveal is a forfeit: Brier 1 on every scored market.
    function scoreBatch(uint256 roundId, uint256 count) external returns (uint256 scoredNow) {
        _checkRound(roundId);
        if (count == 0 || count > MAX_BATCH) revert BatchSize();
        Result storage res = results[roundId];
        if (!res.triggered) revert NotTriggered();
        address[] storage ps = participants[roundId];
        uint256 start = res.scoredCount;
        uint256 end = start + count;
        if (end > ps.length) end = ps.length;
        uint16[] memory bench = rounds.benchmarksOf(roundId);
        int8[] memory outcomes = res.outcomes;
        uint16 noBench = rounds.NO_BENCHMARK();
        for (uint256 a = start; a < end; a++) {
            _scoreAgent(roundId, ps[a], outcomes, bench, noBench, res.n, res.alphaN);
        }
        res.scoredCount = end;
        return end - start;
    }

    function _scoreAgent(
        uint256 roundId,
        address agent,
        int8[] memory outcomes,
        uint16[] memory bench,
        uint16 noBench,
        uint256 n,
        uint256 alphaN
    ) internal {
        Submission storage s = submissions[roundId][agent];
        bool forfeit = !s.revealed;
        int256 brierSum;
        int256 alphaSum;
        for (uint256 i = 0; i < outcomes.length; i++) {
            int8 x = outcomes[i];
            if (x != OUTCOME_YES && x != OUTCOME_NO) continue;
            // A forfeit's prediction is the opposite of the outcome.
            int256 p = forfeit ? (1 - int256(x)) * int256(MAX_BPS) : int256(uint256(s.predictions[i]));
            int256 e = _sqErr(p, x);
            brierSum += e;
            if (bench[i] != noBench) {
                alphaSum += _sqErr(int256(uint256(bench[i])), x) - e;
            }
        }
        Score storage sc = scores[roundId][agent];
        sc.scored = true;
        sc.forfeit = forfeit;
        // Solidity's signed division truncates toward zero, as the off-chain scorer does.
        if (n > 0) sc.brierBps2 = int64(brierSum / int256(n));
        if (alphaN > 0) sc.alphaBps2 = int64(alphaSum / int256(alphaN));
        emit AgentScored(roundId, agent, forfeit, sc.brierBps2, sc.alphaBps2);
    }

    function _sqErr(int256 p, int8 x) internal pure returns (int256) {
        int256 d = p - int256(x) * int256(MAX_BPS);
        return d * d;
    }

    // ---- views --------------------------------------------------------

    function participantCount(uint256 roundId) external view returns (uint256) {
        return participants[roundId].length;
    }

    function participantAt(uint256 roundId, uint256 i) external view returns (address) {
        return participants[roundId][i];
    }

    function submissionOf(uint256 roundId, address agent)
        external
        view
        returns (bool committed, bool revealed, bytes32 commitHash, bytes32 reasoningHash, uint16[] memory predictions)
    {
        Submission storage s = submissions[roundId][agent];
        return (s.committed, s.revealed, s.commitHash, s.reasoningHash, s.predictions);
    }

    function scoreOf(uint256 roundId, address agent)
        external
        view
        returns (bool scored, bool forfeit, int64 brierBps2, int64 alphaBps2)
    {
        Score storage s = scores[roundId][agent];
        return (s.scored, s.forfeit, s.brierBps2, s.alphaBps2);
    }

    function resultOf(uint256 roundId)
        external
        view
        returns (bool triggered, uint8 scored, uint8 benchmarked, int256 baseBrierBps2, uint256 scoredCount, int8[] memory outcomes)
    {
        Result storage r = results[roundId];
        int256 base = r.alphaN > 0 ? r.baseSum / int256(uint256(r.alphaN)) : int256(0);
        return (r.triggered, r.n, r.alphaN, base, r.scoredCount, r.outcomes);
    }

    function scoringDone(uint256 roundId) external view returns (bool) {
        Result storage r = results[roundId];
        return r.triggered && r.scoredCount == participants[roundId].length;
    }
}
