// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IGroth16Verifier} from "./interfaces/IGroth16Verifier.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";
import {PriceConsumer} from "./PriceConsumer.sol";
import {RatioBuckets} from "./libraries/RatioBuckets.sol";

/// @title Spends private ZEC notes with a proof and keeps the positions they open.
/// @notice Redemptions lower every position's debt by the same fraction and
/// take its collateral in proportion to that debt at the oracle price (or, when
/// the system is worth less than its debt, the same fraction of collateral), so
/// a redemption neither picks a victim nor touches notes nobody minted against.
/// Per position this is lazy: the system keeps one affine map
/// `collateral' = a·collateral − b·debt, debt' = f·debt` composed over every
/// redemption, and a position applies the part composed since it last changed.
/// A position stores the id of a snapshot of the map, not the map: the first
/// write after a redemption saves one, every other write reuses it, so a
/// position is two storage slots.
///
/// A par redemption takes the same zatoshi per unit of debt from every
/// position, so a position under 100% would give more than it holds: before
/// it runs, positions under 100% are redistributed (their debt and collateral
/// spread over the others in proportion to debt, as Liquity v1 does when its
/// stability pool is empty). The positions are filed by collateral per debt
/// (`RatioBuckets`) so the redemption finds those without walking them all.
contract StableMinter is IStableMinter, Pausable, PriceConsumer, EIP712, Nonces, ReentrancyGuard {
    using RatioBuckets for RatioBuckets.Bitmap;

    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    bytes32 public constant REPAY_TYPEHASH = keccak256(
        "Repay(uint256 positionId,uint256 amount,address payer,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant WITHDRAW_TYPEHASH = keccak256(
        "WithdrawCollateral(uint256 positionId,uint256 amountZat,string zcashAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant CLOSE_TYPEHASH = keccak256(
        "Close(uint256 positionId,string zcashAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant LIQUIDATE_TYPEHASH = keccak256(
        "Liquidate(uint256 positionId,string zcashAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );

    uint256 private constant BPS = 10_000;
    /// @dev zatoshi × (USD × 1e8 per ZEC) × 100 = USD with 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;
    uint256 private constant MAX_RATIO_BPS = 100_000;
    uint256 private constant MAX_BONUS_BPS = 2_000;
    uint256 private constant MAX_ROOT_AGE = 30 days;
    uint256 private constant MAX_ADDRESS_LENGTH = 512;
    /// @dev Fixed-point unit of the redemption map.
    uint256 private constant ONE = 1e36;
    uint32 private constant NO_SNAPSHOT = type(uint32).max;
    /// @dev Positions under 100% one redemption redistributes before it gives up.
    uint256 private constant MAX_SETTLED = 24;
    /// @dev A redemption also settles positions within this many zatoshi of
    /// 100%, so that no read's rounding leaves one it would overcharge.
    uint256 private constant SETTLE_MARGIN_ZAT = 4;
    uint256 private constant MAX_REDISTRIBUTION_REWARD_BPS = 500;
    /// @dev A frame's map starts afresh (a new epoch that keeps the debt) as
    /// soon as a factor leaves [1e27, 1e45]: positions read through the frames
    /// since their last write, and keys filed in one frame stay precise (a key
    /// only tells ratios apart while b does not dwarf f·ratio).
    uint256 private constant FRAME_FLOOR = 1e27;
    uint256 private constant FRAME_CEILING = 1e45;

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

    /// @dev The governed parameters, in one slot.
    struct Parameters {
        uint32 minCollateralRatioBps;
        uint32 maxRootAge;
        uint32 liquidationRatioBps;
        uint32 liquidationBonusBps;
        uint32 systemFloorRatioBps;
        uint32 redistributionRewardBps;
    }

    /// @dev Debt and backing collateral as of map snapshot `snapshot` of its
    /// epoch (0: the identity map an epoch starts with). A position with no
    /// debt holds free collateral that redemptions never touch. A position
    /// with debt in the current epoch is filed under `key` (RatioBuckets), in
    /// its bucket's sorted list (prev, next).
    struct Position {
        address owner;
        PositionStatus status;
        uint32 epoch;
        uint32 snapshot;
        uint64 collateralZat;
        uint128 debt;
        uint32 prev;
        uint32 next;
        uint256 key;
    }

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    IGroth16Verifier public immutable verifier;
    /// @notice Pays released collateral and takes redemptions; set once by the admin after deployment.
    IRedemptions public redemptions;

    Parameters private _params;

    mapping(uint256 nullifierHash => bool) private _spent;
    mapping(uint256 positionId => Position) private _positions;
    uint256 public positionCount;

    // What every redemption and position change reads and writes share one slot.
    uint128 private _totalDebt;
    uint64 private _backingCollateralZat;
    /// @dev Starts a new map when all debt is gone or the map's factors leave
    /// their range; positions read through every epoch since their last write.
    uint32 public epoch;
    /// @dev The snapshot equal to `_map`, or NO_SNAPSHOT after a redemption changed it.
    uint32 private _mapSnapshot;
    /// @dev The last snapshot id handed out (ids never repeat across epochs),
    /// and the positions with debt in this epoch (the filed ones).
    Counters private _counters;
    /// @notice Collateral of positions without debt (repaid or liquidated): the owner's to take.
    uint256 public freeCollateralZat;
    Accumulator private _map;
    mapping(uint32 snapshot => Accumulator) private _snapshots;
    mapping(uint32 epoch => Accumulator) private _finalMap;
    RatioBuckets.Bitmap private _buckets;

    event RedemptionsSet(address redemptions);

    modifier onlyRedemptions() {
        if (msg.sender != address(redemptions)) revert CallerNotRedemptions(msg.sender);
        _;
    }

    constructor(
        address admin,
        address pauser,
        IStableToken token_,
        ICollateralRegistry registry_,
        IGroth16Verifier verifier_,
        address oracle_,
        uint256 maxPriceAge_,
        uint256 minCollateralRatioBps_,
        uint256 maxRootAge_
    ) PriceConsumer(oracle_, maxPriceAge_) EIP712("ZSD Minter", "1") {
        token = token_;
        registry = registry_;
        verifier = verifier_;
        _map = _identity();
        _setMinCollateralRatio(minCollateralRatioBps_);
        // Defaults a governance vote can change: liquidation at 4/5 of the
        // minimum ratio (120% for 150%) with a 5% bonus, and the recovery floor
        // at the minimum ratio (raise it to make recovery mode bite earlier).
        _setLiquidationRatio((minCollateralRatioBps_ * 12) / 15 < BPS ? BPS : (minCollateralRatioBps_ * 12) / 15);
        _setLiquidationBonus(500);
        _setSystemFloorRatio(minCollateralRatioBps_);
        _setRedistributionReward(50);
        _setMaxRootAge(maxRootAge_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(PAUSER_ROLE, pauser);
    }

    /// @notice Names the redemptions contract. Admin only.
    function setRedemptions(IRedemptions redemptions_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        redemptions = redemptions_;
        emit RedemptionsSet(address(redemptions_));
    }

    // ---------------------------------------------------------------- notes

    /// @inheritdoc IStableMinter
    function mint(
        Proof calldata proof,
        MintRequest calldata request
    ) external whenNotPaused nonReentrant returns (uint256 positionId) {
        uint256 mintAmount = request.mintAmount;
        if (mintAmount == 0 || mintAmount > type(uint128).max) revert InvalidMintAmount(mintAmount);
        if (request.recipient == address(0)) revert InvalidRecipient(address(0));
        if (request.owner == address(0)) revert InvalidOwner(address(0));
        if (request.fee > mintAmount) revert FeeExceedsAmount(request.fee, mintAmount);
        if (request.fee != 0 && request.relayer == address(0)) revert MissingRelayer(request.fee);

        uint256 floor = request.collateralFloorZat;
        uint256 price = _latestPrice();
        _checkMintCollateral(floor, mintAmount, price);

        uint256 binding = mintBinding(request.recipient, request.relayer, request.fee, mintAmount, request.owner);
        _spend(proof, NoteSpend(request.root, request.nullifierHash, floor, request.changeLeaf), binding);

        positionId = ++positionCount;
        Position storage position = _positions[positionId];
        position.owner = request.owner;
        position.status = PositionStatus.Open;
        _write(positionId, position, floor, mintAmount);
        token.mint(request.recipient, mintAmount - request.fee);
        if (request.fee != 0) token.mint(request.relayer, request.fee);
        emit Minted(
            request.nullifierHash,
            request.recipient,
            request.relayer,
            mintAmount,
            request.fee,
            floor,
            request.root
        );
        emit PositionOpened(positionId, request.owner, floor, mintAmount);
    }

    /// @inheritdoc IStableMinter
    function topUp(
        Proof calldata proof,
        NoteSpend calldata spend,
        uint256 positionId
    ) external whenNotPaused nonReentrant {
        Position storage position = _open(positionId);
        _spend(proof, spend, topUpBinding(positionId));
        (uint256 collateral, uint256 debt) = _read(position);
        _write(positionId, position, collateral + spend.collateralFloorZat, debt);
        emit PositionToppedUp(positionId, spend.nullifierHash, spend.collateralFloorZat);
    }

    /// @inheritdoc IStableMinter
    function withdrawNote(
        Proof calldata proof,
        NoteSpend calldata spend,
        string calldata zcashAddress,
        address owner
    ) external whenNotPaused nonReentrant returns (uint256 payoutId) {
        _checkAddress(zcashAddress);
        if (owner == address(0)) revert InvalidOwner(address(0));
        _spend(proof, spend, withdrawBinding(zcashAddress, owner));
        payoutId = redemptions.requestPayout(owner, spend.collateralFloorZat, zcashAddress);
        emit NoteWithdrawn(spend.nullifierHash, spend.collateralFloorZat, payoutId);
    }

    // ------------------------------------------------------------ positions

    /// @inheritdoc IStableMinter
    function repay(uint256 positionId, uint256 amount) external nonReentrant {
        _repay(positionId, amount, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function repayWithSig(
        uint256 positionId,
        uint256 amount,
        address payer,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant {
        _checkSignature(
            payer,
            deadline,
            keccak256(abi.encode(REPAY_TYPEHASH, positionId, amount, payer, _useNonce(payer), deadline)),
            signature
        );
        _repay(positionId, amount, payer);
    }

    /// @inheritdoc IStableMinter
    function withdrawCollateral(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to
    ) external whenNotPaused nonReentrant {
        _withdrawCollateral(positionId, amountZat, to, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function withdrawCollateralWithSig(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        address owner = _positions[positionId].owner;
        _checkSignature(
            owner,
            deadline,
            keccak256(
                abi.encode(
                    WITHDRAW_TYPEHASH,
                    positionId,
                    amountZat,
                    keccak256(bytes(to.zcashAddress)),
                    to.noteCommitment,
                    _useNonce(owner),
                    deadline
                )
            ),
            signature
        );
        _withdrawCollateral(positionId, amountZat, to, owner);
    }

    /// @inheritdoc IStableMinter
    function close(uint256 positionId, Destination calldata to) external nonReentrant {
        _close(positionId, to, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function closeWithSig(
        uint256 positionId,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant {
        address owner = _positions[positionId].owner;
        _checkSignature(owner, deadline, _destinationHash(CLOSE_TYPEHASH, positionId, to, owner, deadline), signature);
        _close(positionId, to, owner);
    }

    /// @inheritdoc IStableMinter
    function liquidate(uint256 positionId, Destination calldata to) external nonReentrant {
        _liquidate(positionId, to, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function liquidateWithSig(
        uint256 positionId,
        address liquidator,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant {
        _checkSignature(
            liquidator,
            deadline,
            _destinationHash(LIQUIDATE_TYPEHASH, positionId, to, liquidator, deadline),
            signature
        );
        _liquidate(positionId, to, liquidator);
    }

    /// @inheritdoc IStableMinter
    function redistribute(uint256 positionId, Destination calldata to) external nonReentrant {
        Position storage position = _open(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        uint256 value = collateral * _latestPrice() * ZAT_PRICE_TO_USD18;
        if (debt == 0 || value >= debt) revert PositionNotUnderwater(positionId, value, debt);
        if (!_spreadable(debt)) revert NoDebtToRedistributeTo(positionId);
        uint256 reward = (collateral * _params.redistributionRewardBps) / BPS;
        _redistribute(positionId, position, collateral, debt, reward);
        if (reward != 0) _release(positionId, msg.sender, reward, to, 0);
    }

    // ---------------------------------------------------------- redemptions

    /// @inheritdoc IStableMinter
    function redeemFromPositions(
        uint256 amount,
        uint256 feeBps
    ) external onlyRedemptions returns (uint256 zatDue, uint256 feeZat, int256 price) {
        uint256 debtBefore = _totalDebt;
        if (amount > debtBefore) revert RedemptionExceedsDebt(amount, debtBefore);
        uint256 debtAfter = debtBefore - amount;
        // Every position with debt owes at least a wei.
        if (debtAfter != 0 && debtAfter < _counters.debtors) revert RedemptionExceedsDebt(amount, debtBefore);
        uint256 latest = _latestPrice();
        bool solvent;
        (zatDue, feeZat, solvent) = _quote(amount, feeBps, latest);
        price = int256(latest);
        if (zatDue == 0) return (0, feeZat, price);
        if (solvent) {
            // A fee-free redistribution keeps the totals, so the quote stands.
            uint32 stuck = _settleUnderwater(latest);
            if (stuck != 0) {
                // Under 100% and holding all but dust of the debt: it is the system,
                // and pays pro rata out of its own collateral, as an insolvent one would.
                (zatDue, feeZat) = (_redeemFromOne(stuck, amount), 0);
                emit RedeemedFromPositions(amount, zatDue, _totalDebt, _backingCollateralZat);
                return (zatDue, feeZat, price);
            }
        }

        uint256 backing = _backingCollateralZat;
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
        _totalDebt = SafeCast.toUint128(debtAfter);
        _backingCollateralZat = SafeCast.toUint64(backing - zatDue);
        if (debtAfter == 0) _endEpoch(map);
        else _setMap(map);
        emit RedeemedFromPositions(amount, zatDue, debtAfter, _backingCollateralZat);
    }

    /// @inheritdoc IStableMinter
    function quoteRedemption(
        uint256 amount,
        uint256 feeBps
    ) public view returns (uint256 zatDue, uint256 feeZat, int256 price) {
        uint256 latest = _latestPrice();
        (zatDue, feeZat, ) = _quote(amount, feeBps, latest);
        price = int256(latest);
    }

    // ----------------------------------------------------------------- views

    /// @inheritdoc IStableMinter
    function mintBinding(
        address recipient,
        address relayer,
        uint256 fee,
        uint256 mintAmount,
        address owner
    ) public view returns (uint256) {
        return
            uint256(
                keccak256(abi.encode(block.chainid, address(this), "mint", recipient, relayer, fee, mintAmount, owner))
            ) % SNARK_SCALAR_FIELD;
    }

    /// @inheritdoc IStableMinter
    function topUpBinding(uint256 positionId) public view returns (uint256) {
        return uint256(keccak256(abi.encode(block.chainid, address(this), "topUp", positionId))) % SNARK_SCALAR_FIELD;
    }

    /// @inheritdoc IStableMinter
    function withdrawBinding(string calldata zcashAddress, address owner) public view returns (uint256) {
        return
            uint256(
                keccak256(abi.encode(block.chainid, address(this), "withdraw", keccak256(bytes(zcashAddress)), owner))
            ) % SNARK_SCALAR_FIELD;
    }

    /// @inheritdoc IStableMinter
    function getPosition(uint256 positionId) external view returns (PositionView memory) {
        Position storage position = _positions[positionId];
        (uint256 collateral, uint256 debt) = _read(position);
        return PositionView(position.owner, position.status, collateral, debt);
    }

    /// @inheritdoc IStableMinter
    function totalDebt() external view returns (uint256) {
        return _totalDebt;
    }

    /// @notice Collateral backing debt (the part redemptions draw on).
    function backingCollateralZat() external view returns (uint256) {
        return _backingCollateralZat;
    }

    /// @inheritdoc IStableMinter
    function totalPositionCollateralZat() external view returns (uint256) {
        return _backingCollateralZat + freeCollateralZat;
    }

    /// @inheritdoc IStableMinter
    function isSpent(uint256 nullifierHash) external view returns (bool) {
        return _spent[nullifierHash];
    }

    /// @inheritdoc IStableMinter
    function nonces(address signer) public view override(IStableMinter, Nonces) returns (uint256) {
        return super.nonces(signer);
    }

    /// @inheritdoc IStableMinter
    function minCollateralRatioBps() external view returns (uint256) {
        return _params.minCollateralRatioBps;
    }

    /// @inheritdoc IStableMinter
    function liquidationRatioBps() external view returns (uint256) {
        return _params.liquidationRatioBps;
    }

    /// @inheritdoc IStableMinter
    function liquidationBonusBps() external view returns (uint256) {
        return _params.liquidationBonusBps;
    }

    /// @inheritdoc IStableMinter
    function systemFloorRatioBps() external view returns (uint256) {
        return _params.systemFloorRatioBps;
    }

    /// @inheritdoc IStableMinter
    function redistributionRewardBps() external view returns (uint256) {
        return _params.redistributionRewardBps;
    }

    /// @inheritdoc IStableMinter
    function maxRootAge() external view returns (uint256) {
        return _params.maxRootAge;
    }

    // ------------------------------------------------------------ governance

    /// @inheritdoc IStableMinter
    function setMinCollateralRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (ratioBps < _params.liquidationRatioBps) revert InvalidParameter("minCollateralRatioBps", ratioBps);
        _setMinCollateralRatio(ratioBps);
    }

    /// @inheritdoc IStableMinter
    function setLiquidationRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (ratioBps > _params.minCollateralRatioBps) revert InvalidParameter("liquidationRatioBps", ratioBps);
        _setLiquidationRatio(ratioBps);
    }

    /// @inheritdoc IStableMinter
    function setLiquidationBonus(uint256 bonusBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setLiquidationBonus(bonusBps);
    }

    /// @inheritdoc IStableMinter
    function setSystemFloorRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setSystemFloorRatio(ratioBps);
    }

    /// @inheritdoc IStableMinter
    function setRedistributionReward(uint256 rewardBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRedistributionReward(rewardBps);
    }

    /// @inheritdoc IStableMinter
    function setMaxRootAge(uint256 newMaxRootAge) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxRootAge(newMaxRootAge);
    }

    /// @inheritdoc IStableMinter
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc IStableMinter
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    // -------------------------------------------------------------- internal

    /// @dev Checks the root and the proof, spends the nullifier, takes the floor
    /// out of the unminted notes and inserts the change leaf.
    function _spend(Proof calldata proof, NoteSpend memory spend, uint256 binding) private {
        uint256 floor = spend.collateralFloorZat;
        if (floor == 0 || floor > type(uint64).max) revert InvalidSpendAmount(floor);
        if (_spent[spend.nullifierHash]) revert NullifierAlreadySpent(spend.nullifierHash);
        _checkRoot(spend.root);
        bool valid = verifier.verifyProof(
            proof.a,
            proof.b,
            proof.c,
            [spend.changeLeaf, spend.root, spend.nullifierHash, floor, binding]
        );
        if (!valid) revert InvalidProof();
        _spent[spend.nullifierHash] = true;
        registry.spendNote(floor);
        if (spend.changeLeaf != 0) registry.insertChangeLeaf(spend.changeLeaf);
    }

    function _repay(uint256 positionId, uint256 amount, address payer) private {
        Position storage position = _open(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        if (amount == 0 || amount > debt) revert InvalidRepayAmount(amount, debt);
        // Repaying everything takes the collateral out of the backing, as a close does.
        if (amount == debt) _checkExit(collateral, debt);
        token.burnForRedemption(payer, amount);
        _write(positionId, position, collateral, debt - amount);
        emit PositionRepaid(positionId, payer, amount, debt - amount);
    }

    function _withdrawCollateral(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        address caller
    ) private {
        Position storage position = _open(positionId);
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (uint256 collateral, uint256 debt) = _read(position);
        if (amountZat == 0 || amountZat > collateral) revert InvalidWithdrawAmount(amountZat, collateral);
        uint256 left = collateral - amountZat;
        if (debt != 0) {
            uint256 value = left * _latestPrice() * ZAT_PRICE_TO_USD18;
            if (value * BPS < debt * _params.minCollateralRatioBps) {
                revert PositionUndercollateralized(positionId, value, (debt * _params.minCollateralRatioBps) / BPS);
            }
            _checkExit(amountZat, 0);
        }
        _write(positionId, position, left, debt);
        _release(positionId, position.owner, amountZat, to, left);
    }

    function _close(uint256 positionId, Destination calldata to, address caller) private {
        Position storage position = _positions[positionId];
        PositionStatus status = position.status;
        if (status != PositionStatus.Open && status != PositionStatus.Liquidated) {
            revert PositionNotOpen(positionId, status);
        }
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (uint256 collateral, uint256 debt) = _read(position);
        if (debt != 0) {
            _checkExit(collateral, debt);
            token.burnForRedemption(caller, debt);
        }
        _write(positionId, position, 0, 0);
        position.status = PositionStatus.Closed;
        emit PositionClosed(positionId, debt, collateral);
        if (collateral != 0) _release(positionId, caller, collateral, to, 0);
    }

    function _liquidate(uint256 positionId, Destination calldata to, address liquidator) private {
        Position storage position = _open(positionId);
        (uint256 collateral, uint256 debt) = _read(position);
        uint256 price = _latestPrice();
        uint256 value = collateral * price * ZAT_PRICE_TO_USD18;
        if (debt == 0 || value * BPS >= debt * _params.liquidationRatioBps) {
            revert PositionNotLiquidatable(positionId, value, (debt * _params.liquidationRatioBps) / BPS);
        }
        token.burnForRedemption(liquidator, debt);
        uint256 seized = Math.min(
            collateral,
            (debt * (BPS + _params.liquidationBonusBps)) / BPS / (price * ZAT_PRICE_TO_USD18)
        );
        uint256 surplus = collateral - seized;
        // The surplus leaves the backing pool: the owner claims it with close().
        _write(positionId, position, surplus, 0);
        position.status = PositionStatus.Liquidated;
        emit PositionLiquidated(positionId, liquidator, debt, seized, surplus, int256(price));
        if (seized != 0) {
            // A free position's collateral is counted in freeCollateralZat until released.
            _release(positionId, liquidator, seized, to, surplus);
        }
    }

    /// @dev Pays `amountZat` of the position's (already removed) collateral out.
    function _release(
        uint256 positionId,
        address beneficiary,
        uint256 amountZat,
        Destination calldata to,
        uint256 collateralLeft
    ) private {
        bool toAddress = bytes(to.zcashAddress).length != 0;
        if (toAddress == (to.noteCommitment != 0)) revert InvalidDestination();
        uint256 payoutId;
        uint256 noteIndex;
        if (toAddress) {
            _checkAddress(to.zcashAddress);
            payoutId = redemptions.requestPayout(beneficiary, amountZat, to.zcashAddress);
        } else {
            noteIndex = registry.insertNote(to.noteCommitment, amountZat);
        }
        emit CollateralReleased(positionId, amountZat, payoutId, noteIndex, collateralLeft);
    }

    function _open(uint256 positionId) private view returns (Position storage position) {
        position = _positions[positionId];
        if (position.status != PositionStatus.Open) revert PositionNotOpen(positionId, position.status);
    }

    /// @dev The position's collateral and debt now: its snapshot carried
    /// through the rest of its epoch's map and every epoch's since (none for
    /// free collateral). Collateral rounds down and debt up, in the system's favour.
    function _read(Position storage position) private view returns (uint256 collateral, uint256 debt) {
        collateral = position.collateralZat;
        debt = position.debt;
        if (debt == 0) return (collateral, 0);
        uint32 e = position.epoch;
        Accumulator memory at = _snapshot(position.snapshot);
        while (true) {
            bool current = e == epoch;
            Accumulator memory end = current ? _map : _finalMap[e];
            (collateral, debt) = _apply(collateral, debt, at, end);
            if (current) {
                // Every other position with debt owes at least a wei of the total.
                uint256 others = _counters.debtors - 1;
                uint256 cap = _totalDebt > others ? _totalDebt - others : 1;
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
        return (left > 0 ? uint256(left) : 0, Math.mulDiv(debt, end.f, at.f, Math.Rounding.Ceil));
    }

    /// @dev Moves the position to (collateral, debt) at today's map, keeping
    /// the system totals equal to the sum over positions and the position
    /// filed by its ratio while it has debt.
    function _write(uint256 id, Position storage position, uint256 collateral, uint256 debt) private {
        (uint256 oldCollateral, uint256 oldDebt) = _read(position);
        // Which total holds it now: debt stored in a live epoch means backing.
        bool filed = position.debt != 0 && position.epoch >= _counters.liveFrom;
        if (filed) {
            _totalDebt -= SafeCast.toUint128(oldDebt);
            _backingCollateralZat -= SafeCast.toUint64(Math.min(oldCollateral, _backingCollateralZat));
        } else {
            freeCollateralZat -= oldCollateral;
        }
        uint32 snapshot = 0;
        if (debt != 0) {
            _totalDebt += SafeCast.toUint128(debt);
            _backingCollateralZat += SafeCast.toUint64(collateral);
            snapshot = _mapSnapshot;
            if (snapshot == NO_SNAPSHOT) {
                snapshot = ++_counters.snapshots;
                _snapshots[snapshot] = _map;
                _mapSnapshot = snapshot;
            }
            uint256 key = _key(collateral, debt);
            if (!filed || key != position.key || position.epoch != epoch) {
                if (filed) _unfile(position);
                else ++_counters.debtors;
                _file(SafeCast.toUint32(id), position, key);
            }
        } else {
            freeCollateralZat += collateral;
            if (filed) {
                _unfile(position);
                --_counters.debtors;
            }
        }
        position.collateralZat = SafeCast.toUint64(collateral);
        position.debt = SafeCast.toUint128(debt);
        position.epoch = epoch;
        position.snapshot = snapshot;
    }

    /// @dev The position's collateral per debt in its epoch's first frame:
    /// (collateral·f/debt + b)/a (ONE-scaled zatoshi per wei).
    function _key(uint256 collateral, uint256 debt) private view returns (uint256) {
        Accumulator memory map = _map;
        int256 origin = SafeCast.toInt256(Math.mulDiv(collateral, map.f, debt)) + map.b;
        return RatioBuckets.encode(_mulDivSigned(ONE, origin, map.a, false));
    }

    /// @dev Files the position in its bucket's list of the current epoch, in key order.
    function _file(uint32 id, Position storage position, uint256 key) private {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint256 headKey = (uint256(epoch) << 24) | bucket;
        uint32 prev;
        uint32 next = _buckets.heads[headKey];
        while (next != 0 && _positions[next].key < key) {
            prev = next;
            next = _positions[next].next;
        }
        if (prev == 0) {
            if (next == 0) _buckets.set(epoch, bucket);
            _buckets.heads[headKey] = id;
        } else {
            _positions[prev].next = id;
        }
        if (next != 0) _positions[next].prev = id;
        position.prev = prev;
        position.next = next;
        position.key = key;
    }

    function _unfile(Position storage position) private {
        (uint32 prev, uint32 next) = (position.prev, position.next);
        if (next != 0) _positions[next].prev = prev;
        if (prev != 0) {
            _positions[prev].next = next;
        } else {
            uint32 e = position.epoch;
            uint256 bucket = RatioBuckets.bucketOf(position.key);
            _buckets.heads[(uint256(e) << 24) | bucket] = next;
            if (next == 0) _buckets.unset(e, bucket);
        }
    }

    /// @dev Redistributes the positions a par charge would take more than
    /// they hold from, riskiest first: the riskiest of each live epoch heads
    /// its order, and the walk ends at the first one it cannot hurt, as every
    /// later one is at least as well covered. Returns a position under 100%
    /// that cannot be spread over the others (they hold under a millionth of
    /// its debt), or 0.
    function _settleUnderwater(uint256 price) private returns (uint32 stuck) {
        for (uint256 settled = 0; ; ++settled) {
            (uint32 id, uint256 collateral, uint256 debt) = _riskiest();
            if (id == 0) return 0;
            if (collateral >= SETTLE_MARGIN_ZAT) {
                uint256 value = (collateral - SETTLE_MARGIN_ZAT) * price * ZAT_PRICE_TO_USD18;
                // 1 ppm over 100%: no rounding of a later, smaller position can tip it under.
                if (value >= debt + debt / 1_000_000) return 0;
            }
            if (!_spreadable(debt)) return id;
            if (settled == MAX_SETTLED) revert UnderwaterPositionsPending(MAX_SETTLED);
            _redistribute(id, _positions[id], collateral, debt, 0);
        }
    }

    /// @dev The position with the least collateral per debt: the head of each
    /// live epoch's order, compared by their reads.
    function _riskiest() private view returns (uint32 id, uint256 collateral, uint256 debt) {
        for (uint32 e = _counters.liveFrom; e <= epoch; ++e) {
            uint256 bucket = _buckets.nextSet(e, 0);
            if (bucket == RatioBuckets.NONE) continue;
            uint32 head = _buckets.heads[(uint256(e) << 24) | bucket];
            (uint256 c, uint256 d) = _read(_positions[head]);
            if (id == 0 || c * debt < collateral * d) (id, collateral, debt) = (head, c, d);
        }
    }

    /// @dev Whether a position's debt can be spread over the others: they must
    /// hold at least a millionth of it, or the rounding of their dust would be
    /// multiplied a millionfold.
    function _spreadable(uint256 debt) private view returns (bool) {
        return (_totalDebt - debt) * 1_000_000 >= debt;
    }

    /// @dev A redemption of `amount` out of position `id` alone, pro rata.
    function _redeemFromOne(uint32 id, uint256 amount) private returns (uint256 zatDue) {
        Position storage position = _positions[id];
        (uint256 collateral, uint256 debt) = _read(position);
        if (amount > debt) revert RedemptionExceedsDebt(amount, debt);
        zatDue = Math.mulDiv(collateral, amount, debt);
        _write(id, position, collateral - zatDue, debt - amount);
        if (_totalDebt == 0) _endEpoch(_map);
    }

    /// @dev Closes the position as liquidated and spreads its debt and its
    /// collateral less `reward` over every other position in proportion to
    /// debt: one more step of the map, which keeps the order of ratios.
    function _redistribute(
        uint256 id,
        Position storage position,
        uint256 collateral,
        uint256 debt,
        uint256 reward
    ) private {
        uint256 total = _totalDebt;
        _write(id, position, 0, 0);
        position.status = PositionStatus.Liquidated;
        uint256 rest = _totalDebt;
        uint256 spread = collateral - reward;
        Accumulator memory map = _map;
        // The collateral handed out rounds down and the debt up.
        map.b -= SafeCast.toInt256(Math.mulDiv(map.f, spread, rest));
        map.f = Math.mulDiv(map.f, total, rest, Math.Rounding.Ceil);
        _totalDebt = SafeCast.toUint128(total);
        _backingCollateralZat += SafeCast.toUint64(spread);
        _setMap(map);
        emit PositionRedistributed(id, msg.sender, debt, collateral, reward);
    }

    /// @dev Par while the positions are worth their debt, less a fee that
    /// rounds up (never to zero); pro rata without a fee when they are not, so
    /// that every ZSD gets the same share however the redemptions are split.
    function _quote(
        uint256 amount,
        uint256 feeBps,
        uint256 price
    ) private view returns (uint256 zatDue, uint256 feeZat, bool solvent) {
        uint256 debt = _totalDebt;
        uint256 backing = _backingCollateralZat;
        solvent = backing * price * ZAT_PRICE_TO_USD18 >= debt;
        if (!solvent) return (Math.mulDiv(amount, backing, debt), 0, false);
        uint256 grossZat = amount / (price * ZAT_PRICE_TO_USD18);
        feeZat = Math.mulDiv(grossZat, feeBps, BPS, Math.Rounding.Ceil);
        zatDue = grossZat - feeZat;
    }

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

    /// @dev The new map after a step; a new frame (an epoch that keeps the
    /// debt) once a factor leaves its range, so none wears away.
    function _setMap(Accumulator memory map) private {
        _mapSnapshot = NO_SNAPSHOT;
        if (map.a >= FRAME_FLOOR && map.f >= FRAME_FLOOR && map.f <= FRAME_CEILING) {
            _map = map;
            return;
        }
        _finalMap[epoch] = map;
        ++epoch;
        _map = _identity();
        _mapSnapshot = 0;
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
        _finalMap[epoch] = map;
        ++epoch;
        _map = _identity();
        _mapSnapshot = 0;
        _counters.debtors = 0;
        _counters.liveFrom = epoch;
        freeCollateralZat += _backingCollateralZat;
        _backingCollateralZat = 0;
    }

    function _checkSignature(
        address signer,
        uint256 deadline,
        bytes32 structHash,
        bytes calldata signature
    ) private view {
        if (block.timestamp > deadline) revert AuthorizationExpired(deadline);
        // SignatureChecker also accepts ERC-1271 smart-contract wallets.
        if (!SignatureChecker.isValidSignatureNow(signer, _hashTypedDataV4(structHash), signature)) {
            revert InvalidAuthorization(signer);
        }
    }

    function _destinationHash(
        bytes32 typehash,
        uint256 positionId,
        Destination calldata to,
        address signer,
        uint256 deadline
    ) private returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    typehash,
                    positionId,
                    keccak256(bytes(to.zcashAddress)),
                    to.noteCommitment,
                    _useNonce(signer),
                    deadline
                )
            );
    }

    function _checkAddress(string calldata zcashAddress) private pure {
        uint256 length = bytes(zcashAddress).length;
        if (length == 0 || length > MAX_ADDRESS_LENGTH) revert IRedemptions.InvalidWithdrawAddress(length);
    }

    /// @dev The freshness rule is the registry's (isValidRoot), also asked by
    /// the relay API; the second read only tells the two refusals apart.
    function _checkRoot(uint256 root) private view {
        if (registry.isValidRoot(root, _params.maxRootAge)) return;
        uint256 supersededAt = registry.rootSupersededAt(root);
        if (supersededAt == 0) revert UnknownRoot(root);
        revert RootExpired(root, supersededAt, _params.maxRootAge);
    }

    /// @dev The position must meet the minimum ratio; and when the system
    /// would end under its floor, the new position must meet the floor too, so
    /// a mint in recovery mode can only raise the system ratio.
    function _checkMintCollateral(uint256 floor, uint256 mintAmount, uint256 price) private view {
        uint256 value = floor * price * ZAT_PRICE_TO_USD18;
        if (value * BPS < mintAmount * _params.minCollateralRatioBps) {
            revert InsufficientCollateralValue(value, (mintAmount * _params.minCollateralRatioBps) / BPS);
        }
        uint256 systemValue = (_backingCollateralZat + floor) * price * ZAT_PRICE_TO_USD18;
        uint256 systemDebt = _totalDebt + mintAmount;
        if (
            systemValue * BPS < systemDebt * _params.systemFloorRatioBps &&
            value * BPS < mintAmount * _params.systemFloorRatioBps
        ) {
            revert SystemRatioTooLow(systemValue, (systemDebt * _params.systemFloorRatioBps) / BPS);
        }
    }

    /// @dev Recovery mode for exits (a close, a full repay, a withdrawal): one
    /// that leaves the system under its floor must not lower its ratio.
    function _checkExit(uint256 collateralOut, uint256 debtOut) private view {
        uint256 backing = _backingCollateralZat;
        uint256 debt = _totalDebt;
        uint256 backingAfter = backing - Math.min(collateralOut, backing);
        uint256 debtAfter = debt - debtOut;
        if (debtAfter == 0 || backingAfter * debt >= backing * debtAfter) return;
        uint256 value = backingAfter * _latestPrice() * ZAT_PRICE_TO_USD18;
        if (value * BPS < debtAfter * _params.systemFloorRatioBps) {
            revert SystemRatioTooLow(value, (debtAfter * _params.systemFloorRatioBps) / BPS);
        }
    }

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

    function _setMaxRootAge(uint256 newMaxRootAge) private {
        if (newMaxRootAge == 0 || newMaxRootAge > MAX_ROOT_AGE) revert InvalidParameter("maxRootAge", newMaxRootAge);
        emit ParameterUpdated("maxRootAge", _params.maxRootAge, newMaxRootAge);
        _params.maxRootAge = uint32(newMaxRootAge);
    }
}
