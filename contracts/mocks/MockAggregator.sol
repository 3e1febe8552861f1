// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AggregatorV3Interface} from "../interfaces/AggregatorV3Interface.sol";

/// @title A Chainlink-shaped feed that tests can break in every way a real one breaks.
/// @notice Tests only: anyone may write any round, date it anywhere, and make the feed revert or
/// answer short. Never deployed by the deploy script.
contract MockAggregator is AggregatorV3Interface {
    /// @notice How the feed answers: normally, by reverting, or with fewer bytes than a round.
    enum Mode {
        Normal,
        Reverting,
        Short
    }

    struct Round {
        int256 answer;
        uint256 updatedAt;
    }

    error FeedDown();
    error NoSuchRound(uint80 roundId);

    /// @notice Answered by `decimals()`; a test may set another to see the feed refused.
    uint8 public feedDecimals = 8;
    Mode public mode;
    uint80 public latestRound;
    mapping(uint80 roundId => Round) private _rounds;

    /// @notice Writes a new round, `answer` dated `updatedAt` (any value: zero, negative, the future).
    function pushRound(int256 answer, uint256 updatedAt) external returns (uint80 roundId) {
        roundId = ++latestRound;
        _rounds[roundId] = Round(answer, updatedAt);
    }

    /// @notice Rewrites the latest round in place (its predecessor stays).
    function setLatest(int256 answer, uint256 updatedAt) external {
        _rounds[latestRound] = Round(answer, updatedAt);
    }

    function setMode(Mode mode_) external {
        mode = mode_;
    }

    function setDecimals(uint8 decimals_) external {
        feedDecimals = decimals_;
    }

    /// @inheritdoc AggregatorV3Interface
    function decimals() external view returns (uint8) {
        return feedDecimals;
    }

    /// @inheritdoc AggregatorV3Interface
    function description() external pure returns (string memory) {
        return "mock ZEC / USD";
    }

    /// @inheritdoc AggregatorV3Interface
    function version() external pure returns (uint256) {
        return 1;
    }

    /// @inheritdoc AggregatorV3Interface
    function getRoundData(uint80 roundId) external view returns (uint80, int256, uint256, uint256, uint80) {
        _answerOrFail();
        Round memory round = _rounds[roundId];
        if (round.updatedAt == 0 && round.answer == 0) revert NoSuchRound(roundId);
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }

    /// @inheritdoc AggregatorV3Interface
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        _answerOrFail();
        uint80 roundId = latestRound;
        Round memory round = _rounds[roundId];
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }

    function _answerOrFail() private view {
        if (mode == Mode.Reverting) revert FeedDown();
        if (mode == Mode.Short) {
            // Two words where five are due: only assembly returns fewer than the declared outputs.
            // solhint-disable-next-line no-inline-assembly
            assembly ("memory-safe") {
                mstore(0, 1)
                return(0, 64)
            }
        }
    }
}
