// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {AggregatorV3Interface} from "./interfaces/AggregatorV3Interface.sol";
import {IZecUsdOracle} from "./interfaces/IZecUsdOracle.sol";

/// @title ZEC/USD feed set by an oracle-updater key, readable as a Chainlink aggregator.
/// @notice For local chains and the sandbox; production points the minter at a market feed.
contract ZecUsdOracle is IZecUsdOracle, AccessControl {
    bytes32 public constant ORACLE_UPDATER_ROLE = keccak256("ORACLE_UPDATER_ROLE");

    /// @dev The latest round sits in one slot so that a price read is one SLOAD.
    struct Round {
        uint64 roundId;
        int128 answer;
        uint64 updatedAt;
    }

    Round private _latest;
    mapping(uint80 roundId => Round) private _history;

    constructor(address admin, address updater, int256 initialAnswer) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(ORACLE_UPDATER_ROLE, updater);
        if (initialAnswer != 0) _record(initialAnswer);
    }

    /// @inheritdoc IZecUsdOracle
    function setPrice(int256 answer) external onlyRole(ORACLE_UPDATER_ROLE) returns (uint80) {
        return _record(answer);
    }

    /// @inheritdoc AggregatorV3Interface
    function decimals() external pure returns (uint8) {
        return 8;
    }

    /// @inheritdoc AggregatorV3Interface
    function description() external pure returns (string memory) {
        return "ZEC / USD";
    }

    /// @inheritdoc AggregatorV3Interface
    function version() external pure returns (uint256) {
        return 1;
    }

    /// @inheritdoc AggregatorV3Interface
    function getRoundData(uint80 roundId) external view returns (uint80, int256, uint256, uint256, uint80) {
        Round memory round = _history[roundId];
        if (round.updatedAt == 0) revert RoundNotFound(roundId);
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }

    /// @inheritdoc AggregatorV3Interface
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        Round memory round = _latest;
        return (round.roundId, round.answer, round.updatedAt, round.updatedAt, round.roundId);
    }

    function _record(int256 answer) private returns (uint80 roundId) {
        if (answer <= 0 || answer > type(int128).max) revert PriceOutOfRange(answer);
        roundId = _latest.roundId + 1;
        // `answer` is in (0, int128's maximum], checked above; a round id past 64 bits would take 2^64
        // updates, and a timestamp past them 5e11 years.
        // forge-lint: disable-next-line(unsafe-typecast)
        Round memory round = Round(uint64(roundId), int128(answer), uint64(block.timestamp));
        _latest = round;
        _history[roundId] = round;
        emit AnswerUpdated(answer, roundId, block.timestamp);
    }
}
