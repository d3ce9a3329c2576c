// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title MockConditionalTokens
/// @notice The payout views of the Gnosis conditional-tokens framework, with
/// a setter, for tests and local chains. The denominator is the sum of the
/// numerators, as reportPayouts sets it.
contract MockConditionalTokens {
    mapping(bytes32 => uint256[]) public payoutNumerators;
    mapping(bytes32 => uint256) public payoutDenominator;

    error AlreadyReported();
    error NoPayout();

    event ConditionResolution(bytes32 indexed conditionId, uint256[] payoutNumerators);

    function reportPayouts(bytes32 conditionId, uint256[] calldata numerators) external {
        if (payoutDenominator[conditionId] != 0) revert AlreadyReported();
        uint256 den;
        for (uint256 i = 0; i < numerators.length; i++) {
            den += numerators[i];
        }
        if (den == 0) revert NoPayout();
        payoutNumerators[conditionId] = numerators;
        payoutDenominator[conditionId] = den;
        emit ConditionResolution(conditionId, numerators);
    }
}
