// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IGovernedParameters} from "./IGovernedParameters.sol";
import {IPriceFeed} from "./IPriceFeed.sol";

/// @title Every position and every change to one: opening, top-ups, repayments, withdrawals,
/// closes, liquidations, redistributions and redemptions from positions, and the ratio rules.
/// @notice The minter (StableMinter) checks proofs and signatures, moves tokens and pays collateral
/// out, and asks this contract to change a position; Redemptions asks it to take a redemption out of
/// all positions. Nothing else changes a position. A position's debt and collateral shrink together
/// when tokens are redeemed and grow together when a position under 100% is redistributed: each
/// holds shares of the system's totals (see the docs, "Positions").
interface IPositionManager is IGovernedParameters {
    enum PositionStatus {
        None,
        Open,
        Liquidated,
        Closed
    }

    /// @notice A position as read now, after every redemption so far.
    struct PositionView {
        address owner;
        PositionStatus status;
        uint256 collateralZat;
        uint256 debt;
    }

    /// @notice Only `operator` (the minter, or Redemptions for `redeem`) may make this change.
    error CallerNotOperator(address caller, address operator);
    /// @notice The minter is named once, after deployment, and must be one built on this contract.
    error MinterAlreadySet(address minter);
    error MinterForOtherPositions(address minter, address itsPositions);
    /// @notice The minter's redemptions contract must be named, and draw on this contract.
    error RedemptionsForOtherPositions(address redemptions, address itsPositions);
    /// @notice `collateralZat * price` does not cover `debt * minCollateralRatio`.
    error InsufficientCollateralValue(uint256 collateralValueUsd, uint256 requiredValueUsd);
    error PositionNotOpen(uint256 positionId, PositionStatus status);
    error NotPositionOwner(uint256 positionId, address caller);
    error InvalidRepayAmount(uint256 amount, uint256 debt);
    /// @notice A position owes nothing or at least `minimumDebt`: a mint of less, or a repayment leaving less
    /// of a position that owed at least that, is refused.
    error DebtBelowMinimum(uint256 debt, uint256 minimumDebt);
    error InvalidWithdrawAmount(uint256 amountZat, uint256 collateralZat);
    /// @notice The position would fall under the minimum collateral ratio.
    error PositionUndercollateralized(uint256 positionId, uint256 collateralValueUsd, uint256 requiredValueUsd);
    /// @notice The position is at or above the liquidation ratio.
    error PositionNotLiquidatable(uint256 positionId, uint256 collateralValueUsd, uint256 thresholdValueUsd);
    /// @notice The whole system would fall under the system floor ratio (recovery mode).
    error SystemRatioTooLow(uint256 collateralValueUsd, uint256 requiredValueUsd);
    /// @notice The position is worth more than its debt by more than a redemption's margin (4 zatoshi and
    /// 1 ppm), or owes nothing: liquidate it instead.
    error PositionNotUnderwater(uint256 positionId, uint256 collateralValueUsd, uint256 debt);
    /// @notice The position holds all the debt: there is nobody to spread it over.
    error NoDebtToRedistributeTo(uint256 positionId);
    /// @notice Positions under 100% that this redemption will not settle itself: more than it settles
    /// (`steps` = 24), or `steps` whose settling would leave one nobody can take the debt of (a path its
    /// quote did not foresee). Call `redistribute` on them first.
    error UnderwaterPositionsPending(uint256 steps);
    /// @notice None of the positions named can be redistributed now (cleared already, or not under 100%).
    error NothingToRedistribute();
    error RedemptionExceedsDebt(uint256 amount, uint256 totalDebt);
    /// @notice Neither price feed can be trusted now (`lastGoodPrice` is frozen): mints, withdrawals
    /// against debt, liquidations, redistributions and redemptions wait until one can.
    error PriceFrozen(uint256 lastGoodPrice);
    /// @notice The price feed must be a contract.
    error InvalidPriceFeed(address priceFeed);

    /// @notice The minter and the redemptions contract that may change positions were named.
    event OperatorsSet(address minter, address redemptions);
    /// @notice Position `positionId` opened with `collateralZat` and `debt`, owned by `owner`.
    event PositionOpened(uint256 indexed positionId, address indexed owner, uint256 collateralZat, uint256 debt);
    /// @notice A note's ZEC was added to `positionId`.
    event PositionToppedUp(uint256 indexed positionId, uint256 indexed nullifierHash, uint256 amountZat);
    /// @notice `payer` burned `amount` of the position's debt.
    event PositionRepaid(uint256 indexed positionId, address indexed payer, uint256 amount, uint256 debtLeft);
    /// @notice The owner closed the position: no debt and no collateral left.
    event PositionClosed(uint256 indexed positionId, uint256 debtRepaid, uint256 collateralZat);
    /// @notice `liquidator` repaid `debt` and took `seizedZat`; `surplusZat` stays claimable by the owner.
    event PositionLiquidated(
        uint256 indexed positionId,
        address indexed liquidator,
        uint256 debt,
        uint256 seizedZat,
        uint256 surplusZat,
        int256 price
    );
    /// @notice A redemption of `amount` took `zatTaken` from all positions in proportion.
    event RedeemedFromPositions(uint256 amount, uint256 zatTaken, uint256 totalDebt, uint256 totalCollateralZat);
    /// @notice Position `positionId` was under 100%: its `debt` and `collateralZat` less `rewardZat`
    /// (paid to `caller`) were spread over every other position in proportion to debt. What the
    /// keeper's floor asks beyond `rewardZat` comes from the others after it: the minter's
    /// `CollateralReleased` to the caller carries the whole reward.
    event PositionRedistributed(
        uint256 indexed positionId,
        address indexed caller,
        uint256 debt,
        uint256 collateralZat,
        uint256 rewardZat
    );

    /// @notice Names the minter (and, through it, the redemptions contract), once. Admin only.
    function setMinter(address minter) external;

    /// @notice Opens a position for a proven mint: `collateralZat` backing `debt`, which must meet
    /// the minimum ratio (and, in recovery mode, the system floor). Minter only. `hint`, here and in
    /// every write below, is where the walk to the position's place in the ratio order starts (see
    /// `findInsertHint`; 0 for none): it changes what the write costs, never what it does.
    function open(
        address owner,
        uint256 collateralZat,
        uint256 debt,
        uint256 hint
    ) external returns (uint256 positionId);

    /// @notice Adds a spent note's `amountZat` to an open position. Minter only.
    function topUp(uint256 positionId, uint256 amountZat, uint256 nullifierHash, uint256 hint) external;

    /// @notice Lowers the position's debt by `amount`, which `payer` burns. Minter only.
    function repay(uint256 positionId, uint256 amount, address payer, uint256 hint) external;

    /// @notice Takes `amountZat` out of `caller`'s open position, which must stay at the minimum
    /// ratio. Minter only.
    /// @return collateralLeft What the position holds after.
    function withdraw(
        uint256 positionId,
        uint256 amountZat,
        address caller,
        uint256 hint
    ) external returns (uint256 collateralLeft);

    /// @notice Closes `caller`'s open or liquidated position. Minter only.
    /// @return debt What `caller` burns.
    /// @return collateralZat What the minter releases.
    function close(uint256 positionId, address caller) external returns (uint256 debt, uint256 collateralZat);

    /// @notice Liquidates a position under the liquidation ratio. Minter only.
    /// @return debt What the liquidator burns.
    /// @return seizedZat What the minter releases to it.
    /// @return surplusZat What stays for the owner to claim with `close`.
    function liquidate(
        uint256 positionId,
        address liquidator
    ) external returns (uint256 debt, uint256 seizedZat, uint256 surplusZat);

    /// @notice Spreads a position under 100% (or within a redemption's margin of it: see
    /// `redistributable`) over every other position in proportion to debt. Minter only.
    /// @return rewardZat The caller's reward (see `keeperRewardFloorZat`), which the minter releases.
    function redistribute(uint256 positionId, address caller) external returns (uint256 rewardZat);

    /// @notice Redistributes each of `positionIds` that `redistribute` would take now, skipping the
    /// others; reverts `NothingToRedistribute` when none. Minter only.
    /// @return rewardZat The caller's rewards, which the minter releases in one payout.
    /// @return cleared How many were redistributed.
    function redistributeMany(
        uint256[] calldata positionIds,
        address caller
    ) external returns (uint256 rewardZat, uint256 cleared);

    /// @notice Takes the ZEC for a redemption of `amount` out of all positions:
    /// at the oracle price while the system is solvent (after redistributing
    /// any position under 100%), pro rata when not. Redemptions contract only.
    function redeem(uint256 amount, uint256 feeBps) external returns (uint256 zatDue, uint256 feeZat, int256 price);

    /// @notice What `redeem` would pay now, to the zatoshi, when it goes through: par less the fee
    /// while the positions are worth their debt, pro rata without a fee when not, and pro rata out of
    /// one position alone when it is under 100%, heads the order and the others hold under a
    /// millionth of its debt.
    function quoteRedemption(
        uint256 amount,
        uint256 feeBps
    ) external view returns (uint256 zatDue, uint256 feeZat, int256 price);

    /// @notice The position as of now.
    function getPosition(uint256 positionId) external view returns (PositionView memory);

    /// @notice Who owns the position (who may withdraw from and close it).
    function ownerOf(uint256 positionId) external view returns (address);

    /// @notice Positions opened so far (ids run from 1).
    function positionCount() external view returns (uint256);

    /// @notice Debt of all positions: equal to the token supply.
    function totalDebt() external view returns (uint256);

    /// @notice Collateral backing debt (the part redemptions draw on).
    function backingCollateralZat() external view returns (uint256);

    /// @notice Collateral of positions without debt (repaid or liquidated): the owner's to take.
    function freeCollateralZat() external view returns (uint256);

    /// @notice ZEC (zatoshi) backing all positions, surplus of liquidated ones included.
    function totalPositionCollateralZat() external view returns (uint256);

    /// @notice Starts a new map when all debt is gone or the map's factors leave their range.
    function epoch() external view returns (uint32);

    /// @notice The hint for a write that leaves position `positionId` (0 for a new one) holding
    /// `collateralZat` against `debt`: its riskier neighbour in the ratio order as it stands (0 when
    /// it would head its bucket). Walks from `from` (0: the bucket's head; else a hint an earlier call
    /// returned) over at most `maxSteps` positions, so that however crowded a bucket is, each call
    /// stays under an RPC's gas cap: `found` is false when the walk stopped short, and the caller
    /// calls again from the `hint` it got.
    function findInsertHint(
        uint256 positionId,
        uint256 collateralZat,
        uint256 debt,
        uint256 from,
        uint256 maxSteps
    ) external view returns (uint256 hint, bool found);

    /// @notice Whether `redistribute` would take the open position now: it owes something and is worth
    /// under its debt, or within 4 zatoshi and 1 ppm of it (what a par redemption settles first), the
    /// others hold at least a millionth of its debt to take it, the price is not frozen and the minter
    /// not paused.
    function redistributable(uint256 positionId) external view returns (bool);

    /// @notice The ZEC/USD price every valuation here reads (two feeds and a last good price).
    function priceFeed() external view returns (IPriceFeed);

    /// @notice The least debt an open position may owe, unless it owes nothing (a mint and a repayment's rest).
    function minDebt() external pure returns (uint256);

    /// @notice Minimum collateral ratio of a position (mint and withdraw), in basis points.
    function minCollateralRatioBps() external view returns (uint256);

    /// @notice Ratio under which a position may be liquidated, in basis points.
    function liquidationRatioBps() external view returns (uint256);

    /// @notice Liquidator's bonus on the debt's value, in basis points.
    function liquidationBonusBps() external view returns (uint256);

    /// @notice System ratio under which no mint or withdrawal may take it (recovery mode), in basis points.
    function systemFloorRatioBps() external view returns (uint256);

    /// @notice Share of a redistributed position's collateral paid to the caller, in basis points.
    function redistributionRewardBps() external view returns (uint256);

    /// @notice The least a keeper is paid, in zatoshi, to liquidate or redistribute any position: a
    /// clearing's gas at a reference gas price (the default, 125,000, is 250,000 gas at 0.5 zatoshi a
    /// gas: one clearing alone, its payout included; one in a batch costs a fifth of that). A liquidation takes it out of the owner's collateral over the debt's worth (as far as it
    /// goes); a redistribution out of the position's collateral and, past it, from every other
    /// position in proportion to debt.
    function keeperRewardFloorZat() external view returns (uint256);

    /// @notice Sets the minimum collateral ratio in basis points (15000 = 150%). Admin (timelock) only.
    function setMinCollateralRatio(uint256 ratioBps) external;

    /// @notice Sets the liquidation ratio in basis points (at most the minimum ratio). Admin (timelock) only.
    function setLiquidationRatio(uint256 ratioBps) external;

    /// @notice Sets the liquidation bonus in basis points (at most 2000). Admin (timelock) only.
    function setLiquidationBonus(uint256 bonusBps) external;

    /// @notice Sets the system floor ratio in basis points. Admin (timelock) only.
    function setSystemFloorRatio(uint256 ratioBps) external;

    /// @notice Sets the redistribution reward in basis points (at most 500). Admin (timelock) only.
    function setRedistributionReward(uint256 rewardBps) external;

    /// @notice Sets the keeper's reward floor in zatoshi (at most 10,000,000). Admin (timelock) only.
    function setKeeperRewardFloor(uint256 floorZat) external;
}
