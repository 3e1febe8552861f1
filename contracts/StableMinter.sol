// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IGroth16BatchVerifier} from "./interfaces/IGroth16BatchVerifier.sol";
import {IGroth16Verifier} from "./interfaces/IGroth16Verifier.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";
import {PriceConsumer} from "./PriceConsumer.sol";
import {PositionBook} from "./libraries/PositionBook.sol";

/// @title Spends private ZEC notes with a proof and keeps the positions they open.
/// @notice The positions' accounting (the lazy redemption map, the ratio
/// buckets, redistribution of positions under 100%) is `PositionBook`, a
/// linked library that runs on this contract's storage: this contract checks
/// proofs, signatures, ratios and parameters, and moves tokens and notes.
contract StableMinter is IStableMinter, Pausable, PriceConsumer, EIP712, Nonces, ReentrancyGuard {
    using PositionBook for PositionBook.Book;

    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    bytes32 public constant REPAY_TYPEHASH = keccak256(
        "Repay(uint256 positionId,uint256 amount,address payer,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant WITHDRAW_TYPEHASH = keccak256(
        "WithdrawCollateral(uint256 positionId,uint256 amountZat,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant CLOSE_TYPEHASH = keccak256(
        "Close(uint256 positionId,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant LIQUIDATE_TYPEHASH = keccak256(
        "Liquidate(uint256 positionId,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );

    uint256 private constant BPS = 10_000;
    /// @dev zatoshi × (USD × 1e8 per ZEC) × 100 = USD with 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;
    uint256 private constant MAX_RATIO_BPS = 100_000;
    uint256 private constant MAX_BONUS_BPS = 2_000;
    uint256 private constant MAX_ROOT_AGE = 30 days;
    /// @dev Mints one `mintBatch` takes at most.
    uint256 private constant MAX_BATCH = 32;
    uint256 private constant MAX_REDISTRIBUTION_REWARD_BPS = 500;
    /// @dev The least debt of a position that owes anything (1 ZSD). A redemption settles the
    /// positions within a few zatoshi of 100% before it charges par, and gives up past 24: without a
    /// floor, 25 positions of a zatoshi each at 150% head the order, count as within the margin and
    /// block every par redemption, while `redistribute` and `liquidate` refuse them (they are at 150%).
    /// At 1 ZSD a fresh position at 150% holds 12 zatoshi or more (outside that
    /// margin) at any price under $12.5M a ZEC. Dust that redemptions leave later, `redistribute` takes.
    uint256 private constant MIN_DEBT = 1e18;
    /// @dev The governed parameters, in one slot.
    struct Parameters {
        uint32 minCollateralRatioBps;
        uint32 maxRootAge;
        uint32 liquidationRatioBps;
        uint32 liquidationBonusBps;
        uint32 systemFloorRatioBps;
        uint32 redistributionRewardBps;
    }

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    IGroth16Verifier public immutable verifier;
    /// @notice Checks the proofs of a `mintBatch` with one pairing product.
    IGroth16BatchVerifier public immutable batchVerifier;
    /// @notice Pays released collateral and takes redemptions; set once by the admin after deployment.
    IRedemptions public redemptions;

    Parameters private _params;

    mapping(uint256 nullifierHash => bool) private _spent;
    uint256 public positionCount;
    PositionBook.Book private _book;

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
        IGroth16BatchVerifier batchVerifier_,
        address oracle_,
        uint256 maxPriceAge_,
        uint256 minCollateralRatioBps_,
        uint256 maxRootAge_
    ) PriceConsumer(oracle_, maxPriceAge_) EIP712("ZSD Minter", "1") {
        token = token_;
        registry = registry_;
        verifier = verifier_;
        batchVerifier = batchVerifier_;
        _book.init();
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

    /// @notice Names the redemptions contract, once. Admin only.
    /// @dev Pending payouts and redirects live in that contract: pointing the minter elsewhere later
    /// would strand them, and let the admin choose who may draw on the positions.
    function setRedemptions(IRedemptions redemptions_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (address(redemptions) != address(0)) revert RedemptionsAlreadySet(address(redemptions));
        // One built for another minter (or none) would queue this minter's payouts where custody does not pay
        // them, and could not be replaced.
        address itsMinter = address(redemptions_) == address(0) ? address(0) : address(redemptions_.minter());
        if (itsMinter != address(this)) revert RedemptionsForAnotherMinter(address(redemptions_), itsMinter);
        redemptions = redemptions_;
        emit RedemptionsSet(address(redemptions_));
    }

    // ---------------------------------------------------------------- notes

    /// @inheritdoc IStableMinter
    function mint(
        Proof calldata proof,
        MintRequest calldata request
    ) external whenNotPaused nonReentrant returns (uint256 positionId) {
        _checkRequest(request);
        _checkMintCollateral(request.collateralFloorZat, request.mintAmount, _latestPrice());
        NoteSpend memory spend = _noteOf(request);
        uint256[5] memory signals = _checkSpend(spend, _mintBinding(request));
        if (!verifier.verifyProof(proof.a, proof.b, proof.c, signals)) revert InvalidProof();
        _settleSpend(spend);
        positionId = _openPosition(request);
    }

    /// @inheritdoc IStableMinter
    function mintBatch(
        Proof[] calldata proofs,
        MintRequest[] calldata requests
    ) external whenNotPaused nonReentrant returns (uint256[] memory positionIds) {
        uint256 count = _batchSize(proofs.length, requests.length);
        uint256[8][] memory flat = new uint256[8][](count);
        uint256[5][] memory signals = new uint256[5][](count);
        uint256 changes = 0;
        for (uint256 i = 0; i < count; ++i) {
            MintRequest calldata request = requests[i];
            _checkRequest(request);
            if (request.changeLeaf != 0) ++changes;
            // Spends each nullifier in turn: a nullifier twice in one batch is refused.
            signals[i] = _checkSpend(_noteOf(request), _mintBinding(request));
            flat[i] = _flat(proofs[i]);
        }
        if (!batchVerifier.verifyProofs(flat, signals)) revert InvalidProof();
        uint256 price = _latestPrice();
        positionIds = new uint256[](count);
        uint256[] memory changeLeaves = new uint256[](changes);
        uint256 changed = 0;
        for (uint256 i = 0; i < count; ++i) {
            MintRequest calldata request = requests[i];
            // In order, as N single mints: each sees the totals the earlier ones left.
            _checkMintCollateral(request.collateralFloorZat, request.mintAmount, price);
            registry.spendNote(request.collateralFloorZat);
            if (request.changeLeaf != 0) {
                changeLeaves[changed] = request.changeLeaf;
                ++changed;
            }
            positionIds[i] = _openPosition(request);
        }
        // Queued together: spendable once inserted (`insertPendingLeaves`), as with mint.
        if (changes != 0) registry.queueLeaves(changeLeaves);
    }

    /// @inheritdoc IStableMinter
    function topUp(
        Proof calldata proof,
        NoteSpend calldata spend,
        uint256 positionId
    ) external whenNotPaused nonReentrant {
        _open(positionId);
        _spend(proof, spend, topUpBinding(positionId));
        _toppedUp(positionId, spend);
    }

    /// @inheritdoc IStableMinter
    function withdrawNote(
        Proof calldata proof,
        NoteSpend calldata spend,
        bytes calldata sealedAddress,
        address owner
    ) external whenNotPaused nonReentrant returns (uint256 payoutId) {
        if (owner == address(0)) revert InvalidOwner(address(0));
        _spend(proof, spend, withdrawBinding(sealedAddress, owner));
        payoutId = _withdrawn(spend, sealedAddress, owner);
    }

    /// @inheritdoc IStableMinter
    function spendBatch(
        Proof[] calldata proofs,
        SpendItem[] calldata items
    ) external whenNotPaused nonReentrant returns (uint256[] memory payoutIds) {
        uint256 count = _batchSize(proofs.length, items.length);
        uint256[8][] memory flat = new uint256[8][](count);
        uint256[5][] memory signals = new uint256[5][](count);
        uint256 changes = 0;
        for (uint256 i = 0; i < count; ++i) {
            SpendItem calldata item = items[i];
            uint256 binding;
            if (item.positionId != 0) {
                _open(item.positionId);
                binding = topUpBinding(item.positionId);
            } else {
                if (item.owner == address(0)) revert InvalidOwner(address(0));
                binding = withdrawBinding(item.sealedAddress, item.owner);
            }
            if (item.spend.changeLeaf != 0) ++changes;
            // Spends each nullifier in turn: a nullifier twice in one batch is refused.
            signals[i] = _checkSpend(item.spend, binding);
            flat[i] = _flat(proofs[i]);
        }
        if (!batchVerifier.verifyProofs(flat, signals)) revert InvalidProof();
        payoutIds = new uint256[](count);
        uint256[] memory changeLeaves = new uint256[](changes);
        uint256 changed = 0;
        for (uint256 i = 0; i < count; ++i) {
            SpendItem calldata item = items[i];
            registry.spendNote(item.spend.collateralFloorZat);
            if (item.spend.changeLeaf != 0) {
                changeLeaves[changed] = item.spend.changeLeaf;
                ++changed;
            }
            if (item.positionId != 0) _toppedUp(item.positionId, item.spend);
            else payoutIds[i] = _withdrawn(item.spend, item.sealedAddress, item.owner);
        }
        if (changes != 0) registry.queueLeaves(changeLeaves);
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
        address owner = _book.positions[positionId].owner;
        _checkSignature(
            owner,
            deadline,
            keccak256(
                abi.encode(
                    WITHDRAW_TYPEHASH,
                    positionId,
                    amountZat,
                    keccak256(to.sealedAddress),
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
        address owner = _book.positions[positionId].owner;
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
        _open(positionId);
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        uint256 price = _latestPrice();
        if (!PositionBook.settles(collateral, debt, price)) {
            revert PositionNotUnderwater(positionId, collateral * price * ZAT_PRICE_TO_USD18, debt);
        }
        if (!_book.spreadable(debt)) revert NoDebtToRedistributeTo(positionId);
        uint256 reward = (collateral * _params.redistributionRewardBps) / BPS;
        _book.redistribute(positionId, collateral, debt, reward);
        if (reward != 0) _release(positionId, msg.sender, reward, to, 0);
    }

    // ---------------------------------------------------------- redemptions

    /// @inheritdoc IStableMinter
    function redeemFromPositions(
        uint256 amount,
        uint256 feeBps
    ) external onlyRedemptions returns (uint256 zatDue, uint256 feeZat, int256 price) {
        uint256 latest = _latestPrice();
        (zatDue, feeZat) = _book.redeem(amount, feeBps, latest);
        // `latest` was a positive int256 answer (PriceConsumer), so it casts back whole.
        // forge-lint: disable-next-line(unsafe-typecast)
        price = int256(latest);
    }

    /// @inheritdoc IStableMinter
    function quoteRedemption(
        uint256 amount,
        uint256 feeBps
    ) public view returns (uint256 zatDue, uint256 feeZat, int256 price) {
        uint256 latest = _latestPrice();
        (zatDue, feeZat) = _book.quote(amount, feeBps, latest);
        // `latest` was a positive int256 answer (PriceConsumer), so it casts back whole.
        // forge-lint: disable-next-line(unsafe-typecast)
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
    function withdrawBinding(bytes calldata sealedAddress, address owner) public view returns (uint256) {
        return
            uint256(keccak256(abi.encode(block.chainid, address(this), "withdraw", keccak256(sealedAddress), owner))) %
            SNARK_SCALAR_FIELD;
    }

    /// @inheritdoc IStableMinter
    function getPosition(uint256 positionId) external view returns (PositionView memory) {
        PositionBook.Position storage position = _book.positions[positionId];
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        return PositionView(position.owner, position.status, collateral, debt);
    }

    /// @inheritdoc IStableMinter
    function totalDebt() external view returns (uint256) {
        return _book.totalDebt;
    }

    /// @notice Starts a new map when all debt is gone or the map's factors
    /// leave their range; positions read through every epoch since their last write.
    function epoch() external view returns (uint32) {
        return _book.epoch;
    }

    /// @notice Collateral of positions without debt (repaid or liquidated): the owner's to take.
    function freeCollateralZat() external view returns (uint256) {
        return _book.freeCollateralZat;
    }

    /// @notice Collateral backing debt (the part redemptions draw on).
    function backingCollateralZat() external view returns (uint256) {
        return _book.backingCollateralZat;
    }

    /// @inheritdoc IStableMinter
    function totalPositionCollateralZat() external view returns (uint256) {
        return _book.backingCollateralZat + _book.freeCollateralZat;
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
    function redistributable(uint256 positionId) external view returns (bool) {
        PositionBook.Position storage position = _book.positions[positionId];
        if (position.status != PositionStatus.Open) return false;
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        return PositionBook.settles(collateral, debt, _latestPrice());
    }

    /// @inheritdoc IStableMinter
    function minDebt() external pure returns (uint256) {
        return MIN_DEBT;
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
    /// out of the unminted notes and queues the change leaf.
    function _spend(Proof calldata proof, NoteSpend memory spend, uint256 binding) private {
        uint256[5] memory signals = _checkSpend(spend, binding);
        if (!verifier.verifyProof(proof.a, proof.b, proof.c, signals)) revert InvalidProof();
        _settleSpend(spend);
    }

    /// @dev Checks the amount and the root, spends the nullifier, and returns
    /// the public signals the spend's proof must hold for.
    function _checkSpend(NoteSpend memory spend, uint256 binding) private returns (uint256[5] memory) {
        uint256 floor = spend.collateralFloorZat;
        if (floor == 0 || floor > type(uint64).max) revert InvalidSpendAmount(floor);
        if (_spent[spend.nullifierHash]) revert NullifierAlreadySpent(spend.nullifierHash);
        _checkRoot(spend.root);
        _spent[spend.nullifierHash] = true;
        return [spend.changeLeaf, spend.root, spend.nullifierHash, floor, binding];
    }

    /// @dev After the proof: takes the floor out of the unminted notes and queues the
    /// change leaf (its walk up the tree is paid once per batch of leaves, by the inserter).
    function _settleSpend(NoteSpend memory spend) private {
        registry.spendNote(spend.collateralFloorZat);
        if (spend.changeLeaf != 0) registry.queueLeaf(spend.changeLeaf);
    }

    function _toppedUp(uint256 positionId, NoteSpend memory spend) private {
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        _book.write(positionId, collateral + spend.collateralFloorZat, debt);
        emit PositionToppedUp(positionId, spend.nullifierHash, spend.collateralFloorZat);
    }

    function _withdrawn(
        NoteSpend memory spend,
        bytes calldata sealedAddress,
        address owner
    ) private returns (uint256 payoutId) {
        // Redemptions checks the envelope (an empty one included) for every payout.
        payoutId = redemptions.requestPayout(owner, spend.collateralFloorZat, sealedAddress);
        emit NoteWithdrawn(spend.nullifierHash, spend.collateralFloorZat, payoutId);
    }

    /// @dev A batch holds one proof per item, and 1 to MAX_BATCH items.
    function _batchSize(uint256 proofs, uint256 items) private pure returns (uint256) {
        if (items != proofs) revert BatchLengthMismatch(proofs, items);
        if (items == 0 || items > MAX_BATCH) revert InvalidBatchSize(items, MAX_BATCH);
        return items;
    }

    /// @dev A proof in the flat layout Groth16BatchVerifier takes.
    function _flat(Proof calldata proof) private pure returns (uint256[8] memory) {
        return
            [
                proof.a[0],
                proof.a[1],
                proof.b[0][0],
                proof.b[0][1],
                proof.b[1][0],
                proof.b[1][1],
                proof.c[0],
                proof.c[1]
            ];
    }

    function _checkRequest(MintRequest calldata request) private pure {
        uint256 mintAmount = request.mintAmount;
        if (mintAmount == 0 || mintAmount > type(uint128).max) revert InvalidMintAmount(mintAmount);
        if (mintAmount < MIN_DEBT) revert DebtBelowMinimum(mintAmount, MIN_DEBT);
        if (request.recipient == address(0)) revert InvalidRecipient(address(0));
        if (request.owner == address(0)) revert InvalidOwner(address(0));
        if (request.fee > mintAmount) revert FeeExceedsAmount(request.fee, mintAmount);
        if (request.fee != 0 && request.relayer == address(0)) revert MissingRelayer(request.fee);
    }

    function _noteOf(MintRequest calldata request) private pure returns (NoteSpend memory) {
        return NoteSpend(request.root, request.nullifierHash, request.collateralFloorZat, request.changeLeaf);
    }

    function _mintBinding(MintRequest calldata request) private view returns (uint256) {
        return mintBinding(request.recipient, request.relayer, request.fee, request.mintAmount, request.owner);
    }

    /// @dev Opens the position a checked mint pays for and mints its ZSD.
    function _openPosition(MintRequest calldata request) private returns (uint256 positionId) {
        uint256 mintAmount = request.mintAmount;
        uint256 floor = request.collateralFloorZat;
        positionId = ++positionCount;
        PositionBook.Position storage position = _book.positions[positionId];
        position.owner = request.owner;
        position.status = PositionStatus.Open;
        _book.write(positionId, floor, mintAmount);
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

    function _repay(uint256 positionId, uint256 amount, address payer) private {
        _open(positionId);
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        if (amount == 0 || amount > debt) revert InvalidRepayAmount(amount, debt);
        // Repaying everything takes the collateral out of the backing, as a close does.
        if (amount == debt) _checkExit(collateral, debt);
        else if (debt - amount < MIN_DEBT) revert DebtBelowMinimum(debt - amount, MIN_DEBT);
        token.burnForRedemption(payer, amount);
        _book.write(positionId, collateral, debt - amount);
        emit PositionRepaid(positionId, payer, amount, debt - amount);
    }

    function _withdrawCollateral(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        address caller
    ) private {
        PositionBook.Position storage position = _open(positionId);
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        if (amountZat == 0 || amountZat > collateral) revert InvalidWithdrawAmount(amountZat, collateral);
        uint256 left = collateral - amountZat;
        if (debt != 0) {
            uint256 value = left * _latestPrice() * ZAT_PRICE_TO_USD18;
            if (value * BPS < debt * _params.minCollateralRatioBps) {
                revert PositionUndercollateralized(positionId, value, (debt * _params.minCollateralRatioBps) / BPS);
            }
            _checkExit(amountZat, 0);
        }
        _book.write(positionId, left, debt);
        _release(positionId, position.owner, amountZat, to, left);
    }

    function _close(uint256 positionId, Destination calldata to, address caller) private {
        PositionBook.Position storage position = _book.positions[positionId];
        PositionStatus status = position.status;
        if (status != PositionStatus.Open && status != PositionStatus.Liquidated) {
            revert PositionNotOpen(positionId, status);
        }
        if (caller != position.owner) revert NotPositionOwner(positionId, caller);
        (uint256 collateral, uint256 debt) = _book.read(positionId);
        if (debt != 0) {
            _checkExit(collateral, debt);
            token.burnForRedemption(caller, debt);
        }
        _book.write(positionId, 0, 0);
        position.status = PositionStatus.Closed;
        emit PositionClosed(positionId, debt, collateral);
        if (collateral != 0) _release(positionId, caller, collateral, to, 0);
    }

    function _liquidate(uint256 positionId, Destination calldata to, address liquidator) private {
        PositionBook.Position storage position = _open(positionId);
        (uint256 collateral, uint256 debt) = _book.read(positionId);
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
        _book.write(positionId, surplus, 0);
        position.status = PositionStatus.Liquidated;
        // `price` was a positive int256 answer (PriceConsumer), so it casts back whole.
        // forge-lint: disable-next-line(unsafe-typecast)
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
        bool toAddress = to.sealedAddress.length != 0;
        if (toAddress == (to.noteCommitment != 0)) revert InvalidDestination();
        uint256 payoutId;
        uint256 noteSequence;
        if (toAddress) {
            payoutId = redemptions.requestPayout(beneficiary, amountZat, to.sealedAddress);
        } else {
            noteSequence = registry.queueNote(to.noteCommitment, amountZat);
        }
        emit CollateralReleased(positionId, amountZat, payoutId, noteSequence, collateralLeft);
    }

    function _open(uint256 positionId) private view returns (PositionBook.Position storage position) {
        position = _book.positions[positionId];
        if (position.status != PositionStatus.Open) revert PositionNotOpen(positionId, position.status);
    }

    function _checkSignature(
        address signer,
        uint256 deadline,
        bytes32 structHash,
        bytes calldata signature
    ) private view {
        // A deadline or an age: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
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
                    keccak256(to.sealedAddress),
                    to.noteCommitment,
                    _useNonce(signer),
                    deadline
                )
            );
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
        uint256 systemValue = (_book.backingCollateralZat + floor) * price * ZAT_PRICE_TO_USD18;
        uint256 systemDebt = _book.totalDebt + mintAmount;
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
        uint256 backing = _book.backingCollateralZat;
        uint256 debt = _book.totalDebt;
        uint256 backingAfter = backing - Math.min(collateralOut, backing);
        uint256 debtAfter = debt - debtOut;
        if (debtAfter == 0 || backingAfter * debt >= backing * debtAfter) return;
        uint256 value = backingAfter * _latestPrice() * ZAT_PRICE_TO_USD18;
        if (value * BPS < debtAfter * _params.systemFloorRatioBps) {
            revert SystemRatioTooLow(value, (debtAfter * _params.systemFloorRatioBps) / BPS);
        }
    }

    // Each setter below refuses a value over its MAX_ constant (at most 100,000 bps or 30 days)
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

    function _setMaxRootAge(uint256 newMaxRootAge) private {
        if (newMaxRootAge == 0 || newMaxRootAge > MAX_ROOT_AGE) revert InvalidParameter("maxRootAge", newMaxRootAge);
        emit ParameterUpdated("maxRootAge", _params.maxRootAge, newMaxRootAge);
        _params.maxRootAge = uint32(newMaxRootAge);
    }
    // forge-lint: disable-end(unsafe-typecast)
}
