// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IGroth16BatchVerifier} from "./interfaces/IGroth16BatchVerifier.sol";
import {IGroth16Verifier} from "./interfaces/IGroth16Verifier.sol";
import {IPositionManager} from "./interfaces/IPositionManager.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";
import {SignedCalls} from "./utils/SignedCalls.sol";

/// @title Spends private ZEC notes with a proof, and takes the owners' position operations.
/// @notice Like Liquity's BorrowerOperations: this contract checks proofs and signatures, spends
/// nullifiers, mints and burns the token and pays released collateral out (to a Zcash address
/// through Redemptions, or into a new note through the registry); `PositionManager` keeps the
/// positions and decides every change to them.
contract StableMinter is IStableMinter, Pausable, AccessControl, SignedCalls, ReentrancyGuard {
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice Stops and resumes new mints only (owners' position operations go on): the key that
    /// watches custody's reserves against the chain holds it.
    bytes32 public constant GUARDIAN_ROLE = keccak256("GUARDIAN_ROLE");

    bytes32 public constant REPAY_TYPEHASH = keccak256(
        "Repay(uint256 positionId,uint256 maxAmount,address payer,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant WITHDRAW_TYPEHASH = keccak256(
        "WithdrawCollateral(uint256 positionId,uint256 amountZat,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant CLOSE_TYPEHASH = keccak256(
        "Close(uint256 positionId,uint256 maxDebt,uint256 minZatOut,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant LIQUIDATE_TYPEHASH = keccak256(
        "Liquidate(uint256 positionId,uint256 maxDebt,uint256 minSeizedZat,uint256 minSeizedValue,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );

    uint256 private constant MAX_ROOT_AGE = 30 days;
    /// @dev Mints one `mintBatch` takes at most.
    uint256 private constant MAX_BATCH = 32;
    /// @dev A zatoshi (1e-8 ZEC) at a price of 8 decimals is worth `zat * price * 100` in 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    IGroth16Verifier public immutable verifier;
    /// @notice Checks the proofs of a `mintBatch` with one pairing product.
    IGroth16BatchVerifier public immutable batchVerifier;
    /// @inheritdoc IStableMinter
    IPositionManager public immutable positions;
    /// @notice Pays released collateral and takes redemptions; set once by the admin after deployment.
    IRedemptions public redemptions;
    /// @inheritdoc IStableMinter
    bool public mintsPaused;
    /// @inheritdoc IStableMinter
    uint256 public maxRootAge;

    mapping(uint256 nullifierHash => bool) private _spent;

    constructor(
        address admin,
        address pauser,
        address guardian,
        IStableToken token_,
        ICollateralRegistry registry_,
        IGroth16Verifier verifier_,
        IGroth16BatchVerifier batchVerifier_,
        IPositionManager positions_,
        uint256 maxRootAge_
    ) SignedCalls("ZSD Minter", "1") {
        token = token_;
        registry = registry_;
        verifier = verifier_;
        batchVerifier = batchVerifier_;
        positions = positions_;
        _setMaxRootAge(maxRootAge_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(PAUSER_ROLE, pauser);
        _grantRole(GUARDIAN_ROLE, guardian);
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
        _checkMintsOpen();
        _checkRequest(request);
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
        _checkMintsOpen();
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
        positionIds = new uint256[](count);
        uint256[] memory changeLeaves = new uint256[](changes);
        uint256 changed = 0;
        for (uint256 i = 0; i < count; ++i) {
            MintRequest calldata request = requests[i];
            registry.spendNote(request.collateralFloorZat);
            if (request.changeLeaf != 0) {
                changeLeaves[changed] = request.changeLeaf;
                ++changed;
            }
            // In order, as N single mints: each sees the totals the earlier ones left.
            positionIds[i] = _openPosition(request);
        }
        // Queued together: spendable once inserted (`insertPendingLeaves`), as with mint.
        if (changes != 0) registry.queueLeaves(changeLeaves);
    }

    /// @inheritdoc IStableMinter
    function topUp(
        Proof calldata proof,
        NoteSpend calldata spend,
        uint256 positionId,
        uint256 hint
    ) external whenNotPaused nonReentrant {
        _spend(proof, spend, topUpBinding(positionId));
        positions.topUp(positionId, spend.collateralFloorZat, spend.nullifierHash, hint);
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
            if (item.positionId != 0) {
                positions.topUp(item.positionId, item.spend.collateralFloorZat, item.spend.nullifierHash, item.hint);
            } else {
                payoutIds[i] = _withdrawn(item.spend, item.sealedAddress, item.owner);
            }
        }
        if (changes != 0) registry.queueLeaves(changeLeaves);
    }

    // ------------------------------------------------------------ positions

    /// @inheritdoc IStableMinter
    function repay(uint256 positionId, uint256 amount, uint256 hint) external nonReentrant {
        _repay(positionId, amount, msg.sender, hint);
    }

    /// @inheritdoc IStableMinter
    function repayWithSig(
        uint256 positionId,
        uint256 maxAmount,
        address payer,
        uint256 deadline,
        bytes calldata signature,
        uint256 hint
    ) external nonReentrant {
        _checkSignature(
            payer,
            deadline,
            keccak256(abi.encode(REPAY_TYPEHASH, positionId, maxAmount, payer, _useNonce(payer), deadline)),
            signature
        );
        // A redemption or another repayment may have shrunk the debt since the payer signed: the payer
        // meant at most `maxAmount`, and a debt now below it is repaid whole (never more than is owed).
        uint256 debt = positions.getPosition(positionId).debt;
        _repay(positionId, maxAmount < debt ? maxAmount : debt, payer, hint);
    }

    /// @inheritdoc IStableMinter
    function withdrawCollateral(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        uint256 hint
    ) external whenNotPaused nonReentrant {
        _withdrawCollateral(positionId, amountZat, to, msg.sender, hint);
    }

    /// @inheritdoc IStableMinter
    function withdrawCollateralWithSig(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature,
        uint256 hint
    ) external whenNotPaused nonReentrant {
        address owner = positions.ownerOf(positionId);
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
        _withdrawCollateral(positionId, amountZat, to, owner, hint);
    }

    /// @inheritdoc IStableMinter
    function close(uint256 positionId, Destination calldata to) external nonReentrant {
        _close(positionId, type(uint256).max, 0, to, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function closeWithSig(
        uint256 positionId,
        uint256 maxDebt,
        uint256 minZatOut,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant {
        address owner = positions.ownerOf(positionId);
        _checkSignature(
            owner,
            deadline,
            _boundedHash(CLOSE_TYPEHASH, positionId, maxDebt, minZatOut, to, owner, deadline),
            signature
        );
        _close(positionId, maxDebt, minZatOut, to, owner);
    }

    /// @inheritdoc IStableMinter
    /// @dev Paused with the note spends: an owner cannot top up while the minter is paused (a top-up
    /// spends a note, which the pause stops), so no keeper may take the collateral then either.
    function liquidate(
        uint256 positionId,
        LiquidationBounds calldata bounds,
        Destination calldata to
    ) external whenNotPaused nonReentrant {
        _liquidate(positionId, bounds, to, msg.sender);
    }

    /// @inheritdoc IStableMinter
    function liquidateWithSig(
        uint256 positionId,
        address liquidator,
        LiquidationBounds calldata bounds,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        bytes32 structHash = keccak256(
            abi.encode(
                LIQUIDATE_TYPEHASH,
                positionId,
                bounds.maxDebt,
                bounds.minSeizedZat,
                bounds.minSeizedValue,
                keccak256(to.sealedAddress),
                to.noteCommitment,
                _useNonce(liquidator),
                deadline
            )
        );
        _checkSignature(liquidator, deadline, structHash, signature);
        _liquidate(positionId, bounds, to, liquidator);
    }

    /// @inheritdoc IStableMinter
    function redistribute(uint256 positionId, Destination calldata to) external whenNotPaused nonReentrant {
        uint256 reward = positions.redistribute(positionId, msg.sender);
        if (reward != 0) _release(positionId, msg.sender, reward, to, 0);
    }

    /// @inheritdoc IStableMinter
    function redistributeMany(
        uint256[] calldata positionIds,
        Destination calldata to
    ) external whenNotPaused nonReentrant returns (uint256 cleared) {
        uint256 reward;
        (reward, cleared) = positions.redistributeMany(positionIds, msg.sender);
        // One payout for the batch: position 0 in its release names no single position.
        if (reward != 0) _release(0, msg.sender, reward, to, 0);
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
    function isSpent(uint256 nullifierHash) external view returns (bool) {
        return _spent[nullifierHash];
    }

    // ------------------------------------------------------------ governance

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

    /// @inheritdoc IStableMinter
    function setMintsPaused(bool paused, string calldata reason) external onlyRole(GUARDIAN_ROLE) {
        mintsPaused = paused;
        emit MintsPausedSet(paused, msg.sender, reason);
    }

    // -------------------------------------------------------------- internal

    function _checkMintsOpen() private view {
        if (mintsPaused) revert MintsArePaused();
    }

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

    /// @dev What the request says alone, checked before the proof; the least debt and the ratios
    /// are the position manager's, checked when it opens the position.
    function _checkRequest(MintRequest calldata request) private pure {
        uint256 mintAmount = request.mintAmount;
        if (mintAmount == 0 || mintAmount > type(uint128).max) revert InvalidMintAmount(mintAmount);
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
        positionId = positions.open(request.owner, request.collateralFloorZat, mintAmount, request.hint);
        token.mint(request.recipient, mintAmount - request.fee);
        if (request.fee != 0) token.mint(request.relayer, request.fee);
        emit Minted(
            request.nullifierHash,
            request.recipient,
            request.relayer,
            mintAmount,
            request.fee,
            request.collateralFloorZat,
            request.root
        );
    }

    function _repay(uint256 positionId, uint256 amount, address payer, uint256 hint) private {
        positions.repay(positionId, amount, payer, hint);
        token.burnForRedemption(payer, amount);
    }

    function _withdrawCollateral(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        address caller,
        uint256 hint
    ) private {
        uint256 left = positions.withdraw(positionId, amountZat, caller, hint);
        _release(positionId, caller, amountZat, to, left);
    }

    function _close(
        uint256 positionId,
        uint256 maxDebt,
        uint256 minZatOut,
        Destination calldata to,
        address caller
    ) private {
        (uint256 debt, uint256 collateral) = positions.close(positionId, caller);
        // A redistribution onto the position since it was signed raises the debt burned; a redemption
        // lowers the ZEC released. Checked before anything moves: a breach undoes the close too.
        _checkBounds(collateral, minZatOut, debt, maxDebt);
        if (debt != 0) token.burnForRedemption(caller, debt);
        if (collateral != 0) _release(positionId, caller, collateral, to, 0);
    }

    function _liquidate(
        uint256 positionId,
        LiquidationBounds calldata bounds,
        Destination calldata to,
        address liquidator
    ) private {
        (uint256 debt, uint256 seized, uint256 surplus) = positions.liquidate(positionId, liquidator);
        // Checked before anything is burned or paid: a breach undoes the position manager's change too.
        _checkBounds(seized, bounds.minSeizedZat, debt, bounds.maxDebt);
        uint256 minValue = bounds.minSeizedValue;
        if (minValue != 0) {
            // More ZEC at a lower price can still be worth less than the debt burned (all the collateral
            // is taken once it covers less than the bonus): only the value at the price used tells.
            (uint256 price, , ) = positions.priceFeed().lastGoodPrice();
            uint256 value = seized * price * ZAT_PRICE_TO_USD18;
            if (value < minValue) revert SeizedValueBelowMinimum(value, minValue);
        }
        token.burnForRedemption(liquidator, debt);
        // The surplus stays in the position, counted as free collateral until its owner closes it.
        if (seized != 0) _release(positionId, liquidator, seized, to, surplus);
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

    /// @dev The struct hash of a `Close`.
    function _boundedHash(
        bytes32 typehash,
        uint256 positionId,
        uint256 maxDebt,
        uint256 minZatOut,
        Destination calldata to,
        address signer,
        uint256 deadline
    ) private returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    typehash,
                    positionId,
                    maxDebt,
                    minZatOut,
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
        uint256 maxAge = maxRootAge;
        if (registry.isValidRoot(root, maxAge)) return;
        uint256 supersededAt = registry.rootSupersededAt(root);
        if (supersededAt == 0) revert UnknownRoot(root);
        revert RootExpired(root, supersededAt, maxAge);
    }

    function _setMaxRootAge(uint256 newMaxRootAge) private {
        if (newMaxRootAge == 0 || newMaxRootAge > MAX_ROOT_AGE) revert InvalidParameter("maxRootAge", newMaxRootAge);
        emit ParameterUpdated("maxRootAge", maxRootAge, newMaxRootAge);
        maxRootAge = newMaxRootAge;
    }
}
