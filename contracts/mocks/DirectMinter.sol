// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPositionManager} from "../interfaces/IPositionManager.sol";

/// @title A minter without notes, for measuring the ratio order under a crowd.
/// @notice Tests and benchmarks only: it stands where `StableMinter` stands for a `PositionManager`
/// of its own (deployed beside a system, never by the deploy script) and calls it directly, without
/// proofs or tokens, so that thousands of positions can be filed in one bucket in a few
/// transactions. The position manager's code runs as it does under the real minter; only the note
/// spends and the token moves around it are left out.
contract DirectMinter {
    IPositionManager public immutable positions;

    constructor(IPositionManager positions_) {
        positions = positions_;
    }

    /// @notice The position manager's `setMinter` asks its minter for the redemptions contract
    /// and that for its positions: this one answers for both.
    function redemptions() external view returns (address) {
        return address(this);
    }

    /// @notice Whether the minter is paused, as `redistributable` asks: never.
    function paused() external pure returns (bool) {
        return false;
    }

    /// @notice Opens `count` positions of `collateralZat` each, the first owing `firstDebt` and
    /// each next one `debtStep` more: each riskier than the last, so each heads the crowd and is
    /// filed without a walk.
    function openMany(
        address owner,
        uint256 collateralZat,
        uint256 firstDebt,
        uint256 debtStep,
        uint256 count
    ) external returns (uint256 firstId) {
        firstId = positions.open(owner, collateralZat, firstDebt, 0);
        for (uint256 i = 1; i < count; ++i) {
            positions.open(owner, collateralZat, firstDebt + i * debtStep, 0);
        }
    }

    function open(address owner, uint256 collateralZat, uint256 debt, uint256 hint) external returns (uint256) {
        return positions.open(owner, collateralZat, debt, hint);
    }

    function topUp(uint256 positionId, uint256 amountZat, uint256 hint) external {
        positions.topUp(positionId, amountZat, 0, hint);
    }

    function repay(uint256 positionId, uint256 amount, uint256 hint) external {
        positions.repay(positionId, amount, msg.sender, hint);
    }

    function withdraw(uint256 positionId, uint256 amountZat, uint256 hint) external {
        positions.withdraw(positionId, amountZat, msg.sender, hint);
    }
}
