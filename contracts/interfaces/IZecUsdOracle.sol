// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AggregatorV3Interface} from "./AggregatorV3Interface.sol";

/// @title The governed ZEC/USD feed used on local chains and in the sandbox.
interface IZecUsdOracle is AggregatorV3Interface {
    /// @notice A price must be strictly positive and fit in 128 bits (a round keeps it in one slot).
    error PriceOutOfRange(int256 answer);
    /// @notice `getRoundData` was asked for a round that was never written.
    error RoundNotFound(uint80 roundId);

    /// @notice Same signature as Chainlink's aggregators, so feed watchers work unchanged.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    /// @notice Publishes a new ZEC/USD price with 8 decimals. Oracle-updater role only.
    /// @param answer USD per ZEC times 1e8.
    /// @return roundId The id of the new round.
    function setPrice(int256 answer) external returns (uint80 roundId);
}
