// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AggregatorV3Interface} from "./AggregatorV3Interface.sol";
import {IGovernedParameters} from "./IGovernedParameters.sol";

/// @title A contract that values ZEC with a governed ZEC/USD feed and refuses stale answers.
interface IPriceConsumer is IGovernedParameters {
    error StalePrice(uint256 updatedAt, uint256 maxPriceAge);
    error InvalidPrice(int256 answer);
    /// @notice The feed must be a contract answering with 8 decimals.
    error InvalidOracle(address oracle);

    event OracleUpdated(address indexed previousOracle, address indexed newOracle);

    /// @notice The ZEC/USD feed.
    function oracle() external view returns (AggregatorV3Interface);

    /// @notice How old, in seconds, an oracle answer may be.
    function maxPriceAge() external view returns (uint256);

    /// @notice Points the contract at another ZEC/USD feed (8 decimals). Admin (timelock) only.
    function setOracle(address newOracle) external;

    /// @notice Sets how old an oracle answer may be, in seconds (1 to 7 days). Admin (timelock) only.
    function setMaxPriceAge(uint256 newMaxPriceAge) external;
}
