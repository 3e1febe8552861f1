// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Burnable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Burnable.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";

/// @title The Shielded Dollar (ZSD), backed by attested shielded ZEC.
/// @notice No vote checkpoints: they would add gas to every transfer, and the
/// governance token votes instead.
contract StableToken is IStableToken, ERC20, ERC20Burnable, ERC20Permit, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    bytes32 public constant REDEEMER_ROLE = keccak256("REDEEMER_ROLE");

    constructor(string memory name_, string memory symbol_, address admin) ERC20(name_, symbol_) ERC20Permit(name_) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @inheritdoc IStableToken
    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }

    /// @inheritdoc IStableToken
    function burnForRedemption(address from, uint256 amount) external onlyRole(REDEEMER_ROLE) {
        _burn(from, amount);
    }
}
