// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title RoundManager
/// @notice Rounds of the forecast track: the markets (conditional-tokens
/// condition ids), the commit/reveal schedule, the grace period after which
/// a partly resolved round may be scored, the benchmark prices in basis
/// points and invalidation. Only the curator writes; everyone reads.
contract RoundManager {
    /// Largest number of markets in a round; it bounds the gas of every
    /// per-round loop (trigger, scoring of one agent).
    uint256 public constant MAX_MARKETS = 32;
    /// A benchmark value meaning "no benchmark price": the market is scored
    /// for Brier but excluded from Alpha.
    uint16 public constant NO_BENCHMARK = type(uint16).max;
    uint16 internal constant MAX_BPS = 10000;

    struct Round {
        uint64 commitDeadline;
        uint64 revealStart;
        uint64 revealDeadline;
        uint64 grace;
        bool exists;
        bool invalidated;
        bool benchmarksSet;
        bytes32[] conditionIds;
        uint16[] benchmarks;
    }

    address public immutable curator;
    mapping(uint256 => Round) internal rounds;

    error NotCurator();
    error RoundExists();
    error RoundNotFound();
    error RoundIdZero();
    error MarketCount();
    error ScheduleInvalid();
    error BenchmarksSet();
    error BenchmarksTooEarly();
    error BenchmarkRange();
    error RoundInvalidated();

    event RoundCreated(uint256 indexed roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace);
    event BenchmarksRecorded(uint256 indexed roundId, uint16[] benchmarks);
    event RoundInvalidatedEvent(uint256 indexed roundId);

    constructor(address curator_) {
        curator = curator_;
    }

    modifier onlyCurator() {
        if (msg.sender != curator) revert NotCurator();
        _;
    }

    /// @notice Creates round `roundId` (ids are chosen by the curator so
    /// they equal the arena's own round ids, which commit hashes bind).
    function createRound(
        uint256 roundId,
        bytes32[] calldata conditionIds,
        uint64 commitDeadline,
        uint64 revealStart,
        uint64 revealDeadline,
        uint64 grace
    ) external onlyCurator {
        if (roundId == 0) revert RoundIdZero();
        Round storage r = rounds[roundId];
        if (r.exists) revert RoundExists();
        if (conditionIds.length == 0 || conditionIds.length > MAX_MARKETS) revert MarketCount();
        if (!(commitDeadline < revealStart && revealStart <= revealDeadline)) revert ScheduleInvalid();
        r.exists = true;
        r.commitDeadline = commitDeadline;
        r.revealStart = revealStart;
        r.revealDeadline = revealDeadline;
        r.grace = grace;
        r.conditionIds = conditionIds;
        emit RoundCreated(roundId, conditionIds, commitDeadline, revealStart, revealDeadline, grace);
    }

    /// @notice Records the benchmark prices (market mid-price at the commit
    /// deadline, in bps; NO_BENCHMARK for none), once, after the deadline.
    function setBenchmarks(uint256 roundId, uint16[] calldata bps) external onlyCurator {
        Round storage r = rounds[roundId];
        if (!r.exists) revert RoundNotFound();
        if (r.invalidated) revert RoundInvalidated();
        if (r.benchmarksSet) revert BenchmarksSet();
        if (block.timestamp <= r.commitDeadline) revert BenchmarksTooEarly();
        if (bps.length != r.conditionIds.length) revert MarketCount();
        for (uint256 i = 0; i < bps.length; i++) {
            if (bps[i] > MAX_BPS && bps[i] != NO_BENCHMARK) revert BenchmarkRange();
        }
        r.benchmarks = bps;
        r.benchmarksSet = true;
        emit BenchmarksRecorded(roundId, bps);
    }

    /// @notice Invalidates a round: no commit, reveal, trigger or scoring
    /// is accepted for it afterwards.
    function invalidateRound(uint256 roundId) external onlyCurator {
        Round storage r = rounds[roundId];
        if (!r.exists) revert RoundNotFound();
        if (r.invalidated) revert RoundInvalidated();
        r.invalidated = true;
        emit RoundInvalidatedEvent(roundId);
    }

    function getRound(uint256 roundId)
        external
        view
        returns (
            bool exists,
            bool invalidated,
            bool benchmarksSet,
            uint64 commitDeadline,
            uint64 revealStart,
            uint64 revealDeadline,
            uint64 grace,
            uint256 marketCount
        )
    {
        Round storage r = rounds[roundId];
        return (r.exists, r.invalidated, r.benchmarksSet, r.commitDeadline, r.revealStart, r.revealDeadline, r.grace, r.conditionIds.length);
    }

    function conditionIdsOf(uint256 roundId) external view returns (bytes32[] memory) {
        return rounds[roundId].conditionIds;
    }

    function benchmarksOf(uint256 roundId) external view returns (uint16[] memory) {
        return rounds[roundId].benchmarks;
    }
}
