// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title The Shielded Dollar: an ERC-20 with EIP-2612 permit.
interface IStableToken is IERC20 {
    /// @notice Mints new tokens. Minter role only (the minter and, for refunds of failed redemptions, the redemptions contract).
    function mint(address to, uint256 amount) external;

    /// @notice Burns `amount` of `from` for a redemption that `from` authorised. Redeemer role only.
    function burnForRedemption(address from, uint256 amount) external;
}
