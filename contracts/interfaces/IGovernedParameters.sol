// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title The error and event of a parameter the timelock governs, shared by the minter and redemptions.
interface IGovernedParameters {
    error InvalidParameter(bytes32 name, uint256 value);

    /// @notice A governed parameter changed (`name` is e.g. "maxPriceAge").
    event ParameterUpdated(bytes32 indexed name, uint256 previousValue, uint256 newValue);
}
