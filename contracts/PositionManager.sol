// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {IPositionManager} from "./interfaces/IPositionManager.sol";
import {IPriceFeed} from "./interfaces/IPriceFeed.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {RatioBuckets} from "./libraries/RatioBuckets.sol";
import {PositionRecord, SortedPositions} from "./libraries/SortedPositions.sol";

/// @title Every position and every change to one, and the ratio rules they follow.
/// @notice Redemptions lower every position's debt by the same fraction and take its collateral
/// in proportion to that debt at the oracle price (or, when the system is worth less than its
/// debt, the same fraction of collateral), so a redemption neither picks a victim nor touches
/// notes nobody minted against. Per position this is lazy: the contract keeps one affine map
/// `collateral' = a·collateral − b·debt, debt' = f·debt` composed over every redemption, and a
/// position applies the part composed since it last changed. A position stores the id of a
/// snapshot of the map, not the map: the first write after a redemption saves one, every other
/// write reuses it, so a position is three storage slots.
///
/// A par redemption takes the same zatoshi per unit of debt from every position, so a position
/// under 100% would give more than it holds: before it runs, positions under 100% are
/// redistributed (their debt and collateral spread over the others in proportion to debt, as
/// Liquity v1 does when its stability pool is empty). `SortedPositions` keeps the positions in
/// ratio order so the redemption finds those without walking them all.
///
/// Only the minter (proofs, signatures, tokens, payouts) and the redemptions contract call the
/// state changes; every position event is emitted here.
///
/// Prices come from one `PriceFeed` (two feeds and a last good price). While it is frozen (neither
/// feed can be trusted) every action that values collateral for someone who chose the moment is
/// refused with `PriceFrozen`: mints, withdrawals against debt, liquidations, redistributions and
/// redemptions. A frozen price is a price the market has left; each of those would let a minter,
/// liquidator or redeemer take the difference from position owners (a liquidation bonus from an
/// owner who is healthy at the real price, more ZEC per ZSD than the real price gives). Refusing
/// costs time, not money: ZSD and positions keep, and everything resumes as soon as a feed is
/// trusted again (or governance points at new feeds). What only returns value to its owner
/// (repayments, closes, top-ups) goes on, its recovery-mode check at the last good price.
contract PositionManager is IPositionManager, AccessControl {
    using SortedPositions for SortedPositions.Order;

    /// @dev zatoshi × (USD × 1e8 per ZEC) × 100 = USD with 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;
    uint256 private constant BPS = 10_000;
    uint256 private constant MAX_RATIO_BPS = 100_000;
    uint256 private constant MAX_BONUS_BPS = 2_000;
    uint256 private constant MAX_REDISTRIBUTION_REWARD_BPS = 500;
    /// @dev 0.1 ZEC: a floor above that would pay a keeper more than any clearing's gas costs.
    uint256 private constant MAX_KEEPER_REWARD_FLOOR_ZAT = 10_000_000;
    /// @dev The least debt of a position that owes anything (1 ZSD). A redemption settles the
    /// positions within a few zatoshi of 100% before it charges par, and gives up past 24: without a
    /// floor, 25 positions of a zatoshi each at 150% head the order, count as within the margin and
    /// block every par redemption, while `redistribute` and `liquidate` refuse them (they are at 150%).
    /// At 1 ZSD a fresh position at 150% holds 12 zatoshi or more (outside that
    /// margin) at any price under $12.5M a ZEC. Dust that redemptions leave later, `redistribute` takes.
    uint256 private constant MIN_DEBT = 1e18;
    /// @dev Fixed-point unit of the redemption map.
    uint256 private constant ONE = 1e36;
    uint32 private constant NO_SNAPSHOT = type(uint32).max;
    /// @dev Positions under 100% one redemption redistributes before it gives up.
    uint256 private constant MAX_SETTLED = 24;
    /// @dev A redemption also settles positions within this many zatoshi of
    /// 100%, so that no read's rounding leaves one it would overcharge.
    uint256 private constant SETTLE_MARGIN_ZAT = 4;
    /// @dev A frame's map starts afresh (a new epoch that keeps the debt) as
    /// soon as a factor leaves [1e27, 1e45]: positions read through the frames
    /// since their last write, and keys filed in one frame stay precise (a key
    /// only tells ratios apart while b does not dwarf f·ratio).
    uint256 private constant FRAME_FLOOR = 1e27;
    uint256 private constant FRAME_CEILING = 1e45;

    /// @dev The governed parameters, in one slot.
    struct Parameters {
        uint32 minCollateralRatioBps;
        uint32 liquidationRatioBps;
        uint32 liquidationBonusBps;
        uint32 systemFloorRatioBps;
        uint32 redistributionRewardBps;
        uint64 keeperRewardFloorZat;
    }

    /// @dev The composed map of one epoch's redemptions and redistributions:
    /// `collateral' = a·collateral − b·debt`, `debt' = f·debt`. b is zatoshi
    /// per debt wei (ONE-scaled), negative when redistributions gave more
    /// collateral per unit of debt than redemptions took. An epoch whose final
    /// map has f = 0 ended with all debt redeemed.
    struct Accumulator {
        uint256 a;
        int256 b;
        uint256 f;
    }

    struct Counters {
        uint32 snapshots;
        uint32 debtors;
        /// @dev The first epoch after the last one that ended with no debt:
        /// positions filed in it or later may hold debt.
        uint32 liveFrom;
    }

    /// @dev What every redemption and position change reads and writes, in one slot.
    struct Totals {
        uint128 totalDebt;
        uint64 backingCollateralZat;
        /// @dev Starts a new map when all debt is gone or the map's factors leave
        /// their range; positions read through every epoch since their last write.
        uint32 epoch;
        /// @dev The snapshot equal to `map`, or NO_SNAPSHOT after a redemption changed it.
        uint32 mapSnapshot;
    }

    Parameters private _params;
    address private _minter;
    address private _redemptions;
    /// @inheritdoc IPositionManager
    uint256 public positionCount;
    mapping(uint256 positionId => PositionRecord) private _positions;
    Totals private _totals;
    /// @dev The last snapshot id handed out (ids never repeat across epochs),
    /// and the positions with debt in this epoch (the filed ones).
    Counters private _counters;
    /// @inheritdoc IPositionManager
    uint256 public freeCollateralZat;
    Accumulator private _map;
    mapping(uint32 snapshot => Accumulator) private _snapshots;
    mapping(uint32 epoch => Accumulator) private _finalMap;
    SortedPositions.Order private _order;
    /// @inheritdoc IPositionManager
    /// @dev Fixed: governance re-points the feeds inside it, and its last good price must stay with it.
    IPriceFeed public immutable priceFeed;

    modifier onlyMinter() {
        if (msg.sender != _minter) revert CallerNotOperator(msg.sender, _minter);
        _;
    }

    constructor(address admin, IPriceFeed priceFeed_, uint256 minCollateralRatioBps_) {
        if (address(priceFeed_).code.length == 0) revert InvalidPriceFeed(address(priceFeed_));
        priceFeed = priceFeed_;
        _map = _identity();
        _setMinCollateralRatio(minCollateralRatioBps_);
        // Defaults a governance vote can change: liquidation at 4/5 of the
        // minimum ratio (120% for 150%) with a 5% bonus, and the recovery floor
        // at the minimum ratio (raise it to make recovery mode bite earlier).
        _setLiquidationRatio((minCollateralRatioBps_ * 12) / 15 < BPS ? BPS : (minCollateralRatioBps_ * 12) / 15);
        _setLiquidationBonus(500);
        _setSystemFloorRatio(minCollateralRatioBps_);
        _setRedistributionReward(50);
        // 250,000 gas (one clearing alone, its payout included) at 0.5 zatoshi a gas.
        _setKeeperRewardFloor(125_000);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @inheritdoc IPositionManager
    /// @dev Once: re-pointing it later would let the admin choose who changes positions. The minter
    /// must be built on this contract, and have its redemptions contract named already.
    function setMinter(address minter_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (_minter != address(0)) revert MinterAlreadySet(_minter);
        address itsPositions = minter_.code.length == 0 ? address(0) : address(IStableMinter(minter_).positions());
        if (itsPositions != address(this)) revert MinterForOtherPositions(minter_, itsPositions);
        address redemptions_ = address(IStableMinter(minter_).redemptions());
        address theirPositions =
            redemptions_ == address(0) ? address(0) : address(IRedemptions(redemptions_).positions());
        if (theirPositions != address(this)) revert RedemptionsForOtherPositions(redemptions_, theirPositions);
        _minter = minter_;
        _redemptions = redemptions_;
        emit OperatorsSet(minter_, redemptions_);
    }

    /// @notice The minter: the one caller of every position change but redemptions.
    function minter() external view returns (address) {
        return _minter;
    }

    /// @notice The redemptions contract: the one caller of `redeem`.
    function redemptions() external view returns (address) {
        return _redemptions;
    }

    // ------------------------------------------------------------ positions

    /// @inheritdoc IPositionManager
    function open(
        address owner,
        uint256 collateralZat,
        uint256 debt,
        uint256 hint
    ) external onlyMinter returns (uint256 positionId) {
        if (debt < MIN_DEBT) revert DebtBelowMinimum(debt, MIN_DEBT);
        _checkMintCollateral(collateralZat, debt, _livePrice());
        positionId = ++positionCount;
        PositionRecord storage position = _positions[positionId];
        position.owner = owner;
        position.status = PositionStatus.Open;
        _write(positionId, position, collateralZat, debt, hint);
        emit PositionOpened(positionId, owner, collateralZat, debt);
    }

    /// @inheritdoc IPositionManager
    function topUp(uint256 positionId, uint256 amountZat, uint256 nullifierHash, uint256 hint) external onlyMinter {
        PositionRecord storage position = _openOne(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        _write(positionId, position, collateral + amountZat, debt, hint);
        emit PositionToppedUp(positionId, nullifierHash, amountZat);
    }

    /// @inheritdoc IPositionManager
    function repay(uint256 positionId, uint256 amount, address payer, uint256 hint) external onlyMinter {
        PositionRecord storage position = _openOne(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        if (amount == 0 || amount > debt) revert InvalidRepayAmount(amount, debt);
        // Repaying everything takes the collateral out of the backing, as a close does. A repayment in
        // part may not make dust; one that redemptions already shrank under the minimum may still be
        // paid down (refusing it would only lock its owner in).
        if (amount == debt) {
            _checkExit(collateral, debt, BPS);
        } else if (debt - amount < MIN_DEBT && debt >= MIN_DEBT) {
            revert DebtBelowMinimum(debt - amount, MIN_DEBT);
        }
        _write(positionId, position, collateral, debt - amount, hint);
        emit PositionRepaid(positionId, payer, amount, debt - amount);
    }

    /// @inheritdoc IPositionManager
    function withdraw(
        uint256 positionId,
        uint256 amountZat,
        address caller,
        uint256 hint
    ) external onlyMinter returns (uint256 collateralLeft) {
        PositionRecord storage position = _openOne(positionId);
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (uint256 collateral, uint256 debt) = _read(position);
        if (amountZat == 0 || amountZat > collateral) revert InvalidWithdrawAmount(amountZat, collateral);
        collateralLeft = collateral - amountZat;
        if (debt != 0) {
            uint256 value = collateralLeft * _livePrice() * ZAT_PRICE_TO_USD18;
            if (value * BPS < debt * _params.minCollateralRatioBps) {
                revert PositionUndercollateralized(positionId, value, (debt * _params.minCollateralRatioBps) / BPS);
            }
            _checkExit(amountZat, 0, _params.systemFloorRatioBps);
        }
        _write(positionId, position, collateralLeft, debt, hint);
    }

    /// @inheritdoc IPositionManager
    function close(
        uint256 positionId,
        address caller
    ) external onlyMinter returns (uint256 debt, uint256 collateralZat) {
        PositionRecord storage position = _positions[positionId];
        PositionStatus status = position.status;
        if (status != PositionStatus.Open && status != PositionStatus.Liquidated) {
            revert PositionNotOpen(positionId, status);
        }
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (collateralZat, debt) = _read(position);
        if (debt != 0) _checkExit(collateralZat, debt, BPS);
        _write(positionId, position, 0, 0, 0);
        position.status = PositionStatus.Closed;
        emit PositionClosed(positionId, debt, collateralZat);
    }

    /// @inheritdoc IPositionManager
    function liquidate(
        uint256 positionId,
        address liquidator
    ) external onlyMinter returns (uint256 debt, uint256 seizedZat, uint256 surplusZat) {
        PositionRecord storage position = _openOne(positionId);
        uint256 collateral;
        (collateral, debt) = _read(position);
        uint256 price = _livePrice();
        uint256 value = collateral * price * ZAT_PRICE_TO_USD18;
        if (debt == 0 || value * BPS >= debt * _params.liquidationRatioBps) {
            revert PositionNotLiquidatable(positionId, value, (debt * _params.liquidationRatioBps) / BPS);
        }
        // The bonus, and at least the keeper's floor over the debt's worth, out of what the owner holds.
        uint256 unit = price * ZAT_PRICE_TO_USD18;
        seizedZat = Math.min(
            collateral,
            Math.max(
                (debt * (BPS + _params.liquidationBonusBps)) / BPS / unit,
                debt / unit + _params.keeperRewardFloorZat
            )
        );
        surplusZat = collateral - seizedZat;
        // The surplus leaves the backing pool: the owner claims it with close().
        _write(positionId, position, surplusZat, 0, 0);
        position.status = PositionStatus.Liquidated;
        // `price` fits in 128 bits (PriceFeed), so it casts whole.
        // forge-lint: disable-next-line(unsafe-typecast)
        emit PositionLiquidated(positionId, liquidator, debt, seizedZat, surplusZat, int256(price));
    }

    /// @inheritdoc IPositionManager
    function redistribute(uint256 positionId, address caller) external onlyMinter returns (uint256 rewardZat) {
        PositionRecord storage position = _openOne(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        uint256 price = _livePrice();
        if (!_settles(collateral, debt, price)) {
            revert PositionNotUnderwater(positionId, collateral * price * ZAT_PRICE_TO_USD18, debt);
        }
        if (!_spreadable(debt)) revert NoDebtToRedistributeTo(positionId);
        uint256 owedZat;
        (rewardZat, owedZat) = _clear(positionId, position, collateral, debt, caller);
        rewardZat += _shareKeeperCost(owedZat);
    }

    /// @inheritdoc IPositionManager
    function redistributeMany(
        uint256[] calldata positionIds,
        address caller
    ) external onlyMinter returns (uint256 rewardZat, uint256 cleared) {
        uint256 price = _livePrice();
        uint256 owedZat;
        for (uint256 i = 0; i < positionIds.length; ++i) {
            (bool done, uint256 own, uint256 owed) = _clearIfDue(positionIds[i], price, caller);
            if (!done) continue;
            (rewardZat, owedZat) = (rewardZat + own, owedZat + owed);
            ++cleared;
        }
        if (cleared == 0) revert NothingToRedistribute();
        // Once, after every one named is gone, so that the cost falls on what is left.
        rewardZat += _shareKeeperCost(owedZat);
    }

    // ---------------------------------------------------------- redemptions

    /// @inheritdoc IPositionManager
    function redeem(uint256 amount, uint256 feeBps) external returns (uint256 zatDue, uint256 feeZat, int256 price) {
        if (msg.sender != _redemptions) revert CallerNotOperator(msg.sender, _redemptions);
        uint256 latest = _livePrice();
        (zatDue, feeZat) = _redeem(amount, feeBps, latest);
        // `latest` fits in 128 bits (PriceFeed), so it casts whole.
        // forge-lint: disable-next-line(unsafe-typecast)
        price = int256(latest);
    }

    /// @inheritdoc IPositionManager
    function quoteRedemption(
        uint256 amount,
        uint256 feeBps
    ) external view returns (uint256 zatDue, uint256 feeZat, int256 price) {
        uint256 latest = _peekLivePrice();
        bool solvent;
        (zatDue, feeZat, solvent) = _quote(amount, feeBps, latest);
        if (solvent && zatDue != 0) {
            // The path `redeem` takes when the riskiest position is under 100% and nobody can take its debt.
            (uint32 id, uint256 collateral, uint256 debt) = _riskiest();
            if (id != 0 && _settles(collateral, debt, latest) && !_spreadable(debt)) {
                if (amount > debt) revert RedemptionExceedsDebt(amount, debt);
                (zatDue, feeZat) = (Math.mulDiv(collateral, amount, debt), 0);
            }
        }
        // `latest` fits in 128 bits (PriceFeed), so it casts whole.
        // forge-lint: disable-next-line(unsafe-typecast)
        price = int256(latest);
    }

    // ----------------------------------------------------------------- views

    /// @inheritdoc IPositionManager
    function getPosition(uint256 positionId) external view returns (PositionView memory) {
        PositionRecord storage position = _positions[positionId];
        (uint256 collateral, uint256 debt) = _read(position);
        return PositionView(position.owner, position.status, collateral, debt);
    }

    /// @inheritdoc IPositionManager
    function ownerOf(uint256 positionId) external view returns (address) {
        return _positions[positionId].owner;
    }

    /// @inheritdoc IPositionManager
    function totalDebt() external view returns (uint256) {
        return _totals.totalDebt;
    }

    /// @inheritdoc IPositionManager
    function backingCollateralZat() external view returns (uint256) {
        return _totals.backingCollateralZat;
    }

    /// @inheritdoc IPositionManager
    function totalPositionCollateralZat() external view returns (uint256) {
        return _totals.backingCollateralZat + freeCollateralZat;
    }

    /// @inheritdoc IPositionManager
    function epoch() external view returns (uint32) {
        return _totals.epoch;
    }

    /// @inheritdoc IPositionManager
    function redistributable(uint256 positionId) external view returns (bool) {
        PositionRecord storage position = _positions[positionId];
        if (position.status != PositionStatus.Open) return false;
        (uint256 collateral, uint256 debt) = _read(position);
        (uint256 price, , IPriceFeed.PriceSource source) = priceFeed.peekPrice();
        return
            source != IPriceFeed.PriceSource.LastGood &&
            _settles(collateral, debt, price) &&
            _spreadable(debt) &&
            !Pausable(_minter).paused();
    }

    /// @inheritdoc IPositionManager
    function findInsertHint(
        uint256 positionId,
        uint256 collateralZat,
        uint256 debt,
        uint256 from,
        uint256 maxSteps
    ) external view returns (uint256 hint, bool found) {
        if (debt == 0) return (0, true);
        return
            _order.find(
                _positions,
                _totals.epoch,
                SafeCast.toUint32(positionId),
                _key(collateralZat, debt),
                from,
                maxSteps
            );
    }

    /// @inheritdoc IPositionManager
    function minDebt() external pure returns (uint256) {
        return MIN_DEBT;
    }

    /// @inheritdoc IPositionManager
    function minCollateralRatioBps() external view returns (uint256) {
        return _params.minCollateralRatioBps;
    }

    /// @inheritdoc IPositionManager
    function liquidationRatioBps() external view returns (uint256) {
        return _params.liquidationRatioBps;
    }

    /// @inheritdoc IPositionManager
    function liquidationBonusBps() external view returns (uint256) {
        return _params.liquidationBonusBps;
    }

    /// @inheritdoc IPositionManager
    function systemFloorRatioBps() external view returns (uint256) {
        return _params.systemFloorRatioBps;
    }

    /// @inheritdoc IPositionManager
    function redistributionRewardBps() external view returns (uint256) {
        return _params.redistributionRewardBps;
    }

    /// @inheritdoc IPositionManager
    function keeperRewardFloorZat() external view returns (uint256) {
        return _params.keeperRewardFloorZat;
    }

    // ------------------------------------------------------------ governance

    /// @inheritdoc IPositionManager
    function setMinCollateralRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (ratioBps < _params.liquidationRatioBps) revert InvalidParameter("minCollateralRatioBps", ratioBps);
        _setMinCollateralRatio(ratioBps);
    }

    /// @inheritdoc IPositionManager
    function setLiquidationRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (ratioBps > _params.minCollateralRatioBps) revert InvalidParameter("liquidationRatioBps", ratioBps);
        _setLiquidationRatio(ratioBps);
    }

    /// @inheritdoc IPositionManager
    function setLiquidationBonus(uint256 bonusBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setLiquidationBonus(bonusBps);
    }

    /// @inheritdoc IPositionManager
    function setSystemFloorRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setSystemFloorRatio(ratioBps);
    }

    /// @inheritdoc IPositionManager
    function setRedistributionReward(uint256 rewardBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRedistributionReward(rewardBps);
    }

    /// @inheritdoc IPositionManager
    function setKeeperRewardFloor(uint256 floorZat) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setKeeperRewardFloor(floorZat);
    }

    // ------------------------------------------------------------ ratio rules

    function _openOne(uint256 positionId) private view returns (PositionRecord storage position) {
        position = _positions[positionId];
        if (position.status != PositionStatus.Open) revert PositionNotOpen(positionId, position.status);
    }

    /// @dev The position must meet the minimum ratio; and when the system
    /// would end under its floor, the new position must meet the floor too, so
    /// a mint in recovery mode can only raise the system ratio.
    function _checkMintCollateral(uint256 floor, uint256 mintAmount, uint256 price) private view {
        uint256 value = floor * price * ZAT_PRICE_TO_USD18;
        if (value * BPS < mintAmount * _params.minCollateralRatioBps) {
            revert InsufficientCollateralValue(value, (mintAmount * _params.minCollateralRatioBps) / BPS);
        }
        uint256 systemValue = (_totals.backingCollateralZat + floor) * price * ZAT_PRICE_TO_USD18;
        uint256 systemDebt = _totals.totalDebt + mintAmount;
        if (
            systemValue * BPS < systemDebt * _params.systemFloorRatioBps &&
            value * BPS < mintAmount * _params.systemFloorRatioBps
        ) {
            revert SystemRatioTooLow(systemValue, (systemDebt * _params.systemFloorRatioBps) / BPS);
        }
    }

    /// @dev An exit that lowers the system's ratio must leave it at `floorBps` or more. A
    /// withdrawal keeps its debt and takes backing away: in recovery mode it must leave the system
    /// at its floor. A close or a whole repayment takes its debt away with its collateral: every
    /// other position keeps its ratio and every ZSD left is backed as before, so only a system that
    /// it would leave worth less than its debt (ZSD redeemed pro rata under par) keeps it; a
    /// position healthier than the system is not locked in by recovery mode.
    function _checkExit(uint256 collateralOut, uint256 debtOut, uint256 floorBps) private view {
        uint256 backing = _totals.backingCollateralZat;
        uint256 debt = _totals.totalDebt;
        uint256 backingAfter = backing - Math.min(collateralOut, backing);
        uint256 debtAfter = debt - debtOut;
        if (debtAfter == 0 || backingAfter * debt >= backing * debtAfter) return;
        // The last good price when frozen: this check can only refuse, and refusing an owner's own
        // repayment or close for want of a price would trap them.
        (uint256 price, , ) = priceFeed.peekPrice();
        uint256 value = backingAfter * price * ZAT_PRICE_TO_USD18;
        if (value * BPS < debtAfter * floorBps) revert SystemRatioTooLow(value, (debtAfter * floorBps) / BPS);
    }

    /// @dev The price for an action that values collateral for whoever chose the moment: fetched
    /// (so the feed records it as the last good price), and refused while frozen (see the contract).
    function _livePrice() private returns (uint256 price) {
        IPriceFeed.PriceSource source;
        (price, , source) = priceFeed.fetchPrice();
        if (source == IPriceFeed.PriceSource.LastGood) revert PriceFrozen(price);
    }

    /// @dev What `_livePrice` would give now, for quotes.
    function _peekLivePrice() private view returns (uint256 price) {
        IPriceFeed.PriceSource source;
        (price, , source) = priceFeed.peekPrice();
        if (source == IPriceFeed.PriceSource.LastGood) revert PriceFrozen(price);
    }

    /// @dev Whether a par redemption settles the position (spreads it over the others) before it
    /// charges anyone: under 100%, or within 4 zatoshi and 1 ppm of it, so that no read's rounding
    /// leaves one it would overcharge. `redistribute` takes exactly these, so that whatever holds up
    /// a redemption's walk, anyone may clear.
    function _settles(uint256 collateral, uint256 debt, uint256 price) private pure returns (bool) {
        if (debt == 0) return false;
        if (collateral < SETTLE_MARGIN_ZAT) return true;
        // 1 ppm over 100%: no rounding of a later, smaller position can tip it under.
        return (collateral - SETTLE_MARGIN_ZAT) * price * ZAT_PRICE_TO_USD18 < debt + debt / 1_000_000;
    }

    /// @dev Whether a position's debt can be spread over the others: they must
    /// hold at least a millionth of it, or the rounding of their dust would be
    /// multiplied a millionfold.
    function _spreadable(uint256 debt) private view returns (bool) {
        return (_totals.totalDebt - debt) * 1_000_000 >= debt;
    }

    // ------------------------------------------------------- the redemption map

    /// @dev Lowers every position's debt by `amount` and takes its share of
    /// the collateral: par less `feeBps` while the positions are worth their
    /// debt, pro rata when they are not.
    function _redeem(uint256 amount, uint256 feeBps, uint256 latest) private returns (uint256 zatDue, uint256 feeZat) {
        uint256 debtBefore = _totals.totalDebt;
        if (amount > debtBefore) revert RedemptionExceedsDebt(amount, debtBefore);
        uint256 debtAfter = debtBefore - amount;
        // Every position with debt owes at least a wei.
        if (debtAfter != 0 && debtAfter < _counters.debtors) revert RedemptionExceedsDebt(amount, debtBefore);
        bool solvent;
        (zatDue, feeZat, solvent) = _quote(amount, feeBps, latest);
        if (zatDue == 0) return (0, feeZat);
        if (solvent) {
            // A fee-free redistribution keeps the totals, so the quote stands.
            uint32 stuck = _settleUnderwater(latest);
            if (stuck != 0) {
                // Under 100% and holding all but dust of the debt: it is the system,
                // and pays pro rata out of its own collateral, as an insolvent one would.
                (zatDue, feeZat) = (_redeemFromOne(stuck, amount), 0);
                emit RedeemedFromPositions(amount, zatDue, _totals.totalDebt, _totals.backingCollateralZat);
                return (zatDue, feeZat);
            }
        }

        uint256 backing = _totals.backingCollateralZat;
        Accumulator memory map = _map;
        if (solvent) {
            // Each position gives zatDue / totalDebt zatoshi per unit of its debt, rounded up.
            map.b += SafeCast.toInt256(Math.mulDiv(map.f, zatDue, debtBefore, Math.Rounding.Ceil));
        } else {
            // Each position gives the same fraction of its collateral: its ratio is unchanged.
            uint256 kept = backing - zatDue;
            map.a = Math.mulDiv(map.a, kept, backing);
            map.b = _scaleUp(map.b, kept, backing);
        }
        // Debt rounds up: what an owner owes never rounds in the owner's favour.
        map.f = Math.mulDiv(map.f, debtAfter, debtBefore, Math.Rounding.Ceil);
        _totals.totalDebt = SafeCast.toUint128(debtAfter);
        _totals.backingCollateralZat = SafeCast.toUint64(backing - zatDue);
        if (debtAfter == 0) _endEpoch(map);
        else _setMap(map);
        emit RedeemedFromPositions(amount, zatDue, debtAfter, _totals.backingCollateralZat);
    }

    /// @dev The position's collateral and debt now: its snapshot carried
    /// through the rest of its epoch's map and every epoch's since (none for
    /// free collateral). Collateral rounds down and debt up, in the system's favour.
    function _read(PositionRecord storage position) private view returns (uint256 collateral, uint256 debt) {
        collateral = position.collateralZat;
        debt = position.debt;
        if (debt == 0) return (collateral, 0);
        uint32 e = position.epoch;
        Accumulator memory at = _snapshot(position.snapshot);
        uint32 current = _totals.epoch;
        while (true) {
            bool isCurrent = e == current;
            Accumulator memory end = isCurrent ? _map : _finalMap[e];
            (collateral, debt) = _apply(collateral, debt, at, end);
            if (isCurrent) {
                // Every other position with debt owes at least a wei of the total.
                uint256 others = _counters.debtors - 1;
                uint256 total = _totals.totalDebt;
                uint256 cap = total > others ? total - others : 1;
                return (collateral, Math.min(Math.max(debt, 1), cap));
            }
            if (end.f == 0) return (collateral, 0);
            ++e;
            at = _identity();
        }
    }

    /// @dev (collateral, debt) carried from map `at` to map `end` of the same epoch:
    /// a_r = a/a_s, f_r = f/f_s, debt·b_r = debt·(b − a_r·b_s)/f_s.
    function _apply(
        uint256 collateral,
        uint256 debt,
        Accumulator memory at,
        Accumulator memory end
    ) private pure returns (uint256, uint256) {
        uint256 aR = Math.mulDiv(end.a, ONE, at.a);
        // Rounded up: the charge never rounds in the owner's favour.
        int256 taken = end.b - _mulDivSigned(aR, at.b, ONE, false);
        int256 left = SafeCast.toInt256(Math.mulDiv(collateral, aR, ONE)) - _mulDivSigned(debt, taken, at.f, true);
        // Only a positive `left` is cast.
        // forge-lint: disable-next-line(unsafe-typecast)
        return (left > 0 ? uint256(left) : 0, Math.mulDiv(debt, end.f, at.f, Math.Rounding.Ceil));
    }

    /// @dev Moves the position to (collateral, debt) at today's map, keeping
    /// the system totals equal to the sum over positions and the position
    /// filed by its ratio while it has debt (the walk to its place starting at `hint`).
    function _write(
        uint256 id,
        PositionRecord storage position,
        uint256 collateral,
        uint256 debt,
        uint256 hint
    ) private {
        (uint256 oldCollateral, uint256 oldDebt) = _read(position);
        // Which total holds it now: debt stored in a live epoch means backing.
        bool filed = position.debt != 0 && position.epoch >= _counters.liveFrom;
        Totals memory totals = _totals;
        if (filed) {
            totals.totalDebt -= SafeCast.toUint128(oldDebt);
            totals.backingCollateralZat -= SafeCast.toUint64(Math.min(oldCollateral, totals.backingCollateralZat));
        } else {
            freeCollateralZat -= oldCollateral;
        }
        uint32 snapshot = 0;
        if (debt != 0) {
            totals.totalDebt += SafeCast.toUint128(debt);
            totals.backingCollateralZat += SafeCast.toUint64(collateral);
            snapshot = totals.mapSnapshot;
            if (snapshot == NO_SNAPSHOT) {
                snapshot = ++_counters.snapshots;
                _snapshots[snapshot] = _map;
                totals.mapSnapshot = snapshot;
            }
            uint256 key = _key(collateral, debt);
            if (!filed || key != position.key || position.epoch != totals.epoch) {
                if (filed) _order.remove(_positions, position);
                else ++_counters.debtors;
                _order.insert(_positions, totals.epoch, SafeCast.toUint32(id), key, hint);
            }
        } else {
            freeCollateralZat += collateral;
            if (filed) {
                _order.remove(_positions, position);
                --_counters.debtors;
            }
        }
        // Free collateral moving alone leaves the totals' slot as it was: no write back.
        if (filed || debt != 0) _totals = totals;
        position.collateralZat = SafeCast.toUint64(collateral);
        position.debt = SafeCast.toUint128(debt);
        position.epoch = totals.epoch;
        position.snapshot = snapshot;
    }

    /// @dev The position's collateral per debt in its epoch's first frame:
    /// (collateral·f/debt + b)/a (ONE-scaled zatoshi per wei).
    function _key(uint256 collateral, uint256 debt) private view returns (uint256) {
        Accumulator memory map = _map;
        int256 origin = SafeCast.toInt256(Math.mulDiv(collateral, map.f, debt)) + map.b;
        return RatioBuckets.encode(_mulDivSigned(ONE, origin, map.a, false));
    }

    /// @dev Redistributes the positions a par charge would take more than
    /// they hold from, riskiest first: the riskiest of each live epoch heads
    /// its order, and the walk ends at the first one it cannot hurt, as every
    /// later one is at least as well covered. Returns a position under 100%
    /// that cannot be spread over the others (they hold under a millionth of
    /// its debt), or 0. Such a position pays alone, pro rata: only when it heads the order before
    /// anything is settled, which `quoteRedemption` sees. One that the walk's own redistributions
    /// would leave so (they would spread others onto it) is left for `redistribute` to reach first,
    /// so that what the quote says is what a redemption pays.
    function _settleUnderwater(uint256 price) private returns (uint32 stuck) {
        for (uint256 settled = 0; ; ++settled) {
            (uint32 id, uint256 collateral, uint256 debt) = _riskiest();
            if (id == 0 || !_settles(collateral, debt, price)) return 0;
            if (!_spreadable(debt)) {
                if (settled != 0) revert UnderwaterPositionsPending(settled);
                return id;
            }
            if (settled == MAX_SETTLED) revert UnderwaterPositionsPending(MAX_SETTLED);
            _redistribute(id, _positions[id], collateral, debt, 0, msg.sender);
        }
    }

    /// @dev The position with the least collateral per debt: the head of each
    /// live epoch's order, compared by their reads.
    function _riskiest() private view returns (uint32 id, uint256 collateral, uint256 debt) {
        uint32 current = _totals.epoch;
        for (uint32 e = _counters.liveFrom; e <= current; ++e) {
            uint32 head = _order.first(e);
            if (head == 0) continue;
            (uint256 c, uint256 d) = _read(_positions[head]);
            if (id == 0 || c * debt < collateral * d) (id, collateral, debt) = (head, c, d);
        }
    }

    /// @dev A redemption of `amount` out of position `id` alone, pro rata.
    function _redeemFromOne(uint32 id, uint256 amount) private returns (uint256 zatDue) {
        PositionRecord storage position = _positions[id];
        (uint256 collateral, uint256 debt) = _read(position);
        if (amount > debt) revert RedemptionExceedsDebt(amount, debt);
        zatDue = Math.mulDiv(collateral, amount, debt);
        _write(id, position, collateral - zatDue, debt - amount, 0);
        if (_totals.totalDebt == 0) _endEpoch(_map);
    }

    /// @dev `_clear`s the position if `redistribute` would take it; skips it, not refuses it, otherwise:
    /// another keeper may have cleared it a block earlier.
    function _clearIfDue(
        uint256 id,
        uint256 price,
        address caller
    ) private returns (bool done, uint256 own, uint256 owedZat) {
        PositionRecord storage position = _positions[id];
        if (position.status != PositionStatus.Open) return (false, 0, 0);
        (uint256 collateral, uint256 debt) = _read(position);
        if (!_settles(collateral, debt, price) || !_spreadable(debt)) return (false, 0, 0);
        (own, owedZat) = _clear(id, position, collateral, debt, caller);
        done = true;
    }

    /// @dev Redistributes the position, paying the keeper its share of the collateral or the floor, out
    /// of the collateral as far as it goes (a position holding under 200 zatoshi paid nothing): `own`.
    /// `owedZat` is the rest of the floor, which `_shareKeeperCost` asks of the others.
    function _clear(
        uint256 id,
        PositionRecord storage position,
        uint256 collateral,
        uint256 debt,
        address caller
    ) private returns (uint256 own, uint256 owedZat) {
        uint256 reward = Math.max((collateral * _params.redistributionRewardBps) / BPS, _params.keeperRewardFloorZat);
        own = Math.min(reward, collateral);
        _redistribute(id, position, collateral, debt, own, caller);
        owedZat = reward - own;
    }

    /// @dev Takes `owedZat` from every position with debt in proportion to it (the cost of keeping the
    /// order clear, shared by all debt as the debt it cleared is), when the riskiest holds its share;
    /// returns what it took. Its read (collateral rounded down, debt up) is at most what it holds, so
    /// no read then falls under zero and the reads still sum to the backing.
    function _shareKeeperCost(uint256 owedZat) private returns (uint256) {
        if (owedZat == 0) return 0;
        uint256 debt = _totals.totalDebt;
        (uint32 head, uint256 headCollateral, uint256 headDebt) = _riskiest();
        if (head == 0 || headCollateral < Math.mulDiv(headDebt, owedZat, debt, Math.Rounding.Ceil)) return 0;
        Accumulator memory map = _map;
        // What each gives rounds up.
        map.b += SafeCast.toInt256(Math.mulDiv(map.f, owedZat, debt, Math.Rounding.Ceil));
        _totals.backingCollateralZat -= SafeCast.toUint64(owedZat);
        _setMap(map);
        return owedZat;
    }

    /// @dev Closes the position as liquidated and spreads its debt and its
    /// collateral less `reward` over every other position in proportion to
    /// debt: one more step of the map, which keeps the order of ratios.
    function _redistribute(
        uint256 id,
        PositionRecord storage position,
        uint256 collateral,
        uint256 debt,
        uint256 reward,
        address caller
    ) private {
        uint256 total = _totals.totalDebt;
        _write(id, position, 0, 0, 0);
        position.status = PositionStatus.Liquidated;
        uint256 rest = _totals.totalDebt;
        uint256 spread = collateral - reward;
        Accumulator memory map = _map;
        // The collateral handed out rounds down and the debt up.
        map.b -= SafeCast.toInt256(Math.mulDiv(map.f, spread, rest));
        map.f = Math.mulDiv(map.f, total, rest, Math.Rounding.Ceil);
        _totals.totalDebt = SafeCast.toUint128(total);
        _totals.backingCollateralZat += SafeCast.toUint64(spread);
        _setMap(map);
        emit PositionRedistributed(id, caller, debt, collateral, reward);
    }

    /// @dev Par while the positions are worth their debt, less a fee that
    /// rounds up (never to zero); pro rata without a fee when they are not, so
    /// that every ZSD gets the same share however the redemptions are split.
    function _quote(
        uint256 amount,
        uint256 feeBps,
        uint256 price
    ) private view returns (uint256 zatDue, uint256 feeZat, bool solvent) {
        uint256 debt = _totals.totalDebt;
        uint256 backing = _totals.backingCollateralZat;
        solvent = backing * price * ZAT_PRICE_TO_USD18 >= debt;
        if (!solvent) return (Math.mulDiv(amount, backing, debt), 0, false);
        uint256 grossZat = amount / (price * ZAT_PRICE_TO_USD18);
        feeZat = Math.mulDiv(grossZat, feeBps, BPS, Math.Rounding.Ceil);
        zatDue = grossZat - feeZat;
    }

    // The two helpers below cast a signed value to its magnitude only after testing its sign, and
    // `-value` reverts at int256's minimum, so no cast truncates.
    // forge-lint: disable-start(unsafe-typecast)
    /// @dev value · num / den, rounded towards +∞ (b may only round up).
    function _scaleUp(int256 value, uint256 num, uint256 den) private pure returns (int256) {
        if (value >= 0) return SafeCast.toInt256(Math.mulDiv(uint256(value), num, den, Math.Rounding.Ceil));
        return -SafeCast.toInt256(Math.mulDiv(uint256(-value), num, den));
    }

    /// @dev x · value / den, rounded towards +∞ when `up`, else towards −∞.
    function _mulDivSigned(uint256 x, int256 value, uint256 den, bool up) private pure returns (int256) {
        if (value >= 0) {
            return
                SafeCast.toInt256(Math.mulDiv(x, uint256(value), den, up ? Math.Rounding.Ceil : Math.Rounding.Floor));
        }
        return -SafeCast.toInt256(Math.mulDiv(x, uint256(-value), den, up ? Math.Rounding.Floor : Math.Rounding.Ceil));
    }
    // forge-lint: disable-end(unsafe-typecast)

    /// @dev The new map after a step; a new frame (an epoch that keeps the
    /// debt) once a factor leaves its range, so none wears away.
    function _setMap(Accumulator memory map) private {
        _totals.mapSnapshot = NO_SNAPSHOT;
        if (map.a >= FRAME_FLOOR && map.f >= FRAME_FLOOR && map.f <= FRAME_CEILING) {
            _map = map;
            return;
        }
        _finalMap[_totals.epoch] = map;
        ++_totals.epoch;
        _map = _identity();
        _totals.mapSnapshot = 0;
    }

    function _identity() private pure returns (Accumulator memory) {
        return Accumulator(ONE, 0, ONE);
    }

    function _snapshot(uint32 id) private view returns (Accumulator memory) {
        return id == 0 ? _identity() : _snapshots[id];
    }

    /// @dev All debt was redeemed: what collateral backed it is now free, and
    /// no position filed before holds debt any more.
    function _endEpoch(Accumulator memory map) private {
        map.f = 0;
        _finalMap[_totals.epoch] = map;
        ++_totals.epoch;
        _map = _identity();
        _totals.mapSnapshot = 0;
        _counters.debtors = 0;
        _counters.liveFrom = _totals.epoch;
        freeCollateralZat += _totals.backingCollateralZat;
        _totals.backingCollateralZat = 0;
    }

    // Each setter below refuses a value over its MAX_ constant (at most 100,000 bps)
    // before it narrows it to its uint32 field.
    // forge-lint: disable-start(unsafe-typecast)
    function _setMinCollateralRatio(uint256 ratioBps) private {
        if (ratioBps < BPS || ratioBps > MAX_RATIO_BPS) revert InvalidParameter("minCollateralRatioBps", ratioBps);
        emit ParameterUpdated("minCollateralRatioBps", _params.minCollateralRatioBps, ratioBps);
        _params.minCollateralRatioBps = uint32(ratioBps);
    }

    function _setLiquidationRatio(uint256 ratioBps) private {
        if (ratioBps < BPS || ratioBps > MAX_RATIO_BPS) revert InvalidParameter("liquidationRatioBps", ratioBps);
        emit ParameterUpdated("liquidationRatioBps", _params.liquidationRatioBps, ratioBps);
        _params.liquidationRatioBps = uint32(ratioBps);
    }

    function _setLiquidationBonus(uint256 bonusBps) private {
        if (bonusBps > MAX_BONUS_BPS) revert InvalidParameter("liquidationBonusBps", bonusBps);
        emit ParameterUpdated("liquidationBonusBps", _params.liquidationBonusBps, bonusBps);
        _params.liquidationBonusBps = uint32(bonusBps);
    }

    function _setSystemFloorRatio(uint256 ratioBps) private {
        if (ratioBps < BPS || ratioBps > MAX_RATIO_BPS) revert InvalidParameter("systemFloorRatioBps", ratioBps);
        emit ParameterUpdated("systemFloorRatioBps", _params.systemFloorRatioBps, ratioBps);
        _params.systemFloorRatioBps = uint32(ratioBps);
    }

    function _setRedistributionReward(uint256 rewardBps) private {
        if (rewardBps > MAX_REDISTRIBUTION_REWARD_BPS) revert InvalidParameter("redistributionRewardBps", rewardBps);
        emit ParameterUpdated("redistributionRewardBps", _params.redistributionRewardBps, rewardBps);
        _params.redistributionRewardBps = uint32(rewardBps);
    }

    function _setKeeperRewardFloor(uint256 floorZat) private {
        if (floorZat > MAX_KEEPER_REWARD_FLOOR_ZAT) revert InvalidParameter("keeperRewardFloorZat", floorZat);
        emit ParameterUpdated("keeperRewardFloorZat", _params.keeperRewardFloorZat, floorZat);
        _params.keeperRewardFloorZat = uint64(floorZat);
    }
    // forge-lint: disable-end(unsafe-typecast)
}
