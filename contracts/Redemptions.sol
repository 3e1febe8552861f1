// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IPositionManager} from "./interfaces/IPositionManager.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";
import {SignedCalls} from "./utils/SignedCalls.sol";

/// @title Burns the stable token for ZEC paid by custody to a shielded address.
/// @notice The ZEC due is fixed at request time by the minter, out of the
/// positions' collateral only (at the oracle price, or pro rata when the
/// positions are worth less than the supply), less the redemption fee; the
/// custody then completes (paid) or fails it. A failed payout is never
/// refunded into the positions (that would move collateral between them):
/// its ZEC stays held for the owner, who redirects it to another address or
/// into a note. The minter also queues here the ZEC released from positions
/// and notes, so custody pays every shielded payout through one path. Every
/// payout names its address sealed to custody's seal key (see IRedemptions):
/// this is the one place that checks the envelope and keeps the keys.
contract Redemptions is IRedemptions, Pausable, AccessControl, SignedCalls, ReentrancyGuard {
    bytes32 public constant CUSTODY_ROLE = keccak256("CUSTODY_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    bytes32 public constant REDEEM_TYPEHASH = keccak256(
        "Redeem(address owner,uint256 amount,uint256 minZatOut,bytes sealedAddress,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant REDIRECT_TYPEHASH = keccak256(
        "Redirect(uint256 id,bytes sealedAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );
    /// @notice Envelope v1 is 65 bytes around an address of 1..512 bytes.
    uint256 public constant SEALED_ADDRESS_MIN_LENGTH = 66;
    uint256 public constant SEALED_ADDRESS_MAX_LENGTH = 577;

    uint256 private constant BPS = 10_000;
    uint256 private constant MAX_FEE_BPS = 1_000;
    uint8 private constant SEAL_VERSION = 1;
    uint256 private constant MAX_SEAL_KEY_GRACE = 90 days;

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    /// @inheritdoc IRedemptions
    address public immutable minter;
    /// @inheritdoc IRedemptions
    IPositionManager public immutable positions;

    uint256 public redemptionFeeBps;
    /// @notice ZEC owed: requested payouts and failed ones held for their owners.
    uint256 public pendingZatDue;
    /// @inheritdoc IRedemptions
    uint256 public payoutCount;
    mapping(uint256 id => Payout) private _payouts;
    /// @inheritdoc IRedemptions
    uint32 public currentSealKeyId;
    /// @inheritdoc IRedemptions
    uint256 public sealKeyGraceSeconds;
    mapping(uint32 keyId => SealKey) private _sealKeys;

    constructor(
        address admin,
        address custody,
        address pauser,
        IStableToken token_,
        ICollateralRegistry registry_,
        address minter_,
        IPositionManager positions_,
        uint256 redemptionFeeBps_,
        uint32 sealKeyId_,
        bytes32 sealPublicKey_
    ) SignedCalls("ZSD Redemptions", "1") {
        token = token_;
        registry = registry_;
        minter = minter_;
        positions = positions_;
        _setRedemptionFee(redemptionFeeBps_);
        _setSealKeyGrace(7 days);
        _setSealKey(sealKeyId_, sealPublicKey_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(CUSTODY_ROLE, custody);
        _grantRole(PAUSER_ROLE, pauser);
    }

    /// @inheritdoc IRedemptions
    function redeem(uint256 amount, bytes calldata sealedAddress) external returns (uint256) {
        return _redeem(msg.sender, amount, 0, sealedAddress);
    }

    /// @inheritdoc IRedemptions
    function redeemWithPermit(
        address owner,
        uint256 amount,
        uint256 minZatOut,
        bytes calldata sealedAddress,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external returns (uint256) {
        _checkRedeemPermit(owner, amount, minZatOut, sealedAddress, deadline, abi.encodePacked(r, s, v));
        return _redeem(owner, amount, minZatOut, sealedAddress);
    }

    /// @inheritdoc IRedemptions
    function requestPayout(
        address beneficiary,
        uint256 zatDue,
        bytes calldata sealedAddress
    ) external nonReentrant returns (uint256 id) {
        if (msg.sender != minter) revert CallerNotMinter(msg.sender);
        if (zatDue == 0 || zatDue > type(uint64).max) revert InvalidAmount(zatDue);
        _checkSealedAddress(sealedAddress);
        pendingZatDue += zatDue;
        id = _queuePayout(beneficiary, zatDue, sealedAddress);
    }

    /// @inheritdoc IRedemptions
    function completePayout(uint256 id, bytes32 zcashTxId) external onlyRole(CUSTODY_ROLE) nonReentrant {
        Payout storage payout = _pending(id);
        payout.status = Status.Completed;
        uint256 zatDue = payout.zatDue;
        pendingZatDue -= zatDue;
        registry.recordPayout(zatDue);
        emit PayoutCompleted(id, zcashTxId, zatDue);
    }

    /// @inheritdoc IRedemptions
    function failPayout(uint256 id, string calldata reason) external onlyRole(CUSTODY_ROLE) nonReentrant {
        Payout storage payout = _pending(id);
        payout.status = Status.Failed;
        emit PayoutFailed(id, payout.owner, payout.zatDue, reason);
    }

    /// @inheritdoc IRedemptions
    function redirect(
        uint256 id,
        bytes calldata sealedAddress,
        uint256 noteCommitment
    ) external nonReentrant returns (uint256) {
        return _redirect(id, sealedAddress, noteCommitment, msg.sender);
    }

    /// @inheritdoc IRedemptions
    function redirectWithSig(
        uint256 id,
        bytes calldata sealedAddress,
        uint256 noteCommitment,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant returns (uint256) {
        address owner = _payouts[id].owner;
        _checkSignature(
            owner,
            deadline,
            keccak256(
                abi.encode(REDIRECT_TYPEHASH, id, keccak256(sealedAddress), noteCommitment, _useNonce(owner), deadline)
            ),
            signature
        );
        return _redirect(id, sealedAddress, noteCommitment, owner);
    }

    /// @inheritdoc IRedemptions
    function getPayout(uint256 id) external view returns (Payout memory) {
        return _payouts[id];
    }

    /// @inheritdoc IRedemptions
    function quote(uint256 amount) public view returns (uint256 zatDue, uint256 feeZat, int256 price) {
        return positions.quoteRedemption(amount, redemptionFeeBps);
    }

    /// @inheritdoc IRedemptions
    function setRedemptionFee(uint256 feeBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRedemptionFee(feeBps);
    }

    /// @inheritdoc IRedemptions
    function setSealKey(uint32 keyId, bytes32 publicKey) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setSealKey(keyId, publicKey);
    }

    /// @inheritdoc IRedemptions
    function setSealKeyGrace(uint256 graceSeconds) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setSealKeyGrace(graceSeconds);
    }

    /// @inheritdoc IRedemptions
    function sealKey(uint32 keyId) external view returns (bytes32 publicKey, uint64 retiresAt) {
        SealKey storage key = _sealKeys[keyId];
        return (key.publicKey, key.retiresAt);
    }

    /// @inheritdoc IRedemptions
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc IRedemptions
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _checkRedeemPermit(
        address owner,
        uint256 amount,
        uint256 minZatOut,
        bytes calldata sealedAddress,
        uint256 deadline,
        bytes memory signature
    ) private {
        bytes32 structHash = keccak256(
            abi.encode(REDEEM_TYPEHASH, owner, amount, minZatOut, keccak256(sealedAddress), _useNonce(owner), deadline)
        );
        _checkSignature(owner, deadline, structHash, signature);
    }

    function _redeem(
        address owner,
        uint256 amount,
        uint256 minZatOut,
        bytes calldata sealedAddress
    ) private whenNotPaused nonReentrant returns (uint256 id) {
        if (amount == 0) revert InvalidAmount(0);
        _checkSealedAddress(sealedAddress);

        // Only positions pay: the position manager lowers their debt and collateral.
        (uint256 zatDue, uint256 feeZat, int256 price) = positions.redeem(amount, redemptionFeeBps);
        if (zatDue == 0) revert RedemptionTooSmall(amount);
        // Before the burn: a breach undoes the position manager's change too.
        _checkBounds(zatDue, minZatOut, 0, 0);

        id = ++payoutCount;
        pendingZatDue += zatDue;
        // zatDue is at most the collateral behind positions, which PositionManager holds in a uint64
        // (a mint or top-up past it reverts), so the cast keeps it whole.
        // forge-lint: disable-next-line(unsafe-typecast)
        _payouts[id] = Payout({owner: owner, status: Status.Requested, zatDue: uint64(zatDue), amount: amount});
        token.burnForRedemption(owner, amount);
        emit PayoutRequested(id, owner, amount, zatDue, feeZat, price, sealedAddress, keccak256(sealedAddress));
    }

    function _queuePayout(
        address beneficiary,
        uint256 zatDue,
        bytes calldata sealedAddress
    ) private returns (uint256 id) {
        id = ++payoutCount;
        _payouts[id] = Payout({
            owner: beneficiary,
            status: Status.Requested,
            // requestPayout refuses an amount past 64 bits, and a redirect re-queues a stored one.
            // forge-lint: disable-next-line(unsafe-typecast)
            zatDue: uint64(zatDue),
            amount: 0
        });
        emit PayoutRequested(id, beneficiary, 0, zatDue, 0, 0, sealedAddress, keccak256(sealedAddress));
    }

    /// @dev The held ZEC moves as a whole to one place the owner names; the
    /// failed record stays as it was paid nothing.
    function _redirect(
        uint256 id,
        bytes calldata sealedAddress,
        uint256 noteCommitment,
        address caller
    ) private returns (uint256 newId) {
        Payout storage payout = _payouts[id];
        if (payout.status != Status.Failed) revert PayoutNotFailed(id, payout.status);
        if (caller != payout.owner) revert NotPayoutOwner(id, caller);
        bool toAddress = sealedAddress.length != 0;
        if (toAddress == (noteCommitment != 0)) revert InvalidRedirectDestination();
        payout.status = Status.Redirected;
        uint256 zatDue = payout.zatDue;
        uint256 noteSequence;
        if (toAddress) {
            _checkSealedAddress(sealedAddress);
            newId = _queuePayout(caller, zatDue, sealedAddress);
        } else {
            pendingZatDue -= zatDue;
            noteSequence = registry.queueNote(noteCommitment, zatDue);
        }
        emit PayoutRedirected(id, newId, noteSequence);
    }

    function _pending(uint256 id) private view returns (Payout storage payout) {
        payout = _payouts[id];
        if (payout.status != Status.Requested) revert PayoutNotPending(id, payout.status);
    }

    /// @dev The envelope's shape and key only: whether it opens (and for this
    /// owner) is custody's check, which fails the payout when it does not.
    function _checkSealedAddress(bytes calldata sealedAddress) private view {
        uint256 length = sealedAddress.length;
        if (length < SEALED_ADDRESS_MIN_LENGTH || length > SEALED_ADDRESS_MAX_LENGTH) {
            revert InvalidSealedAddress(length);
        }
        uint8 version = uint8(sealedAddress[0]);
        if (version != SEAL_VERSION) revert UnsupportedSealVersion(version);
        uint32 keyId = uint32(bytes4(sealedAddress[1:5]));
        SealKey storage key = _sealKeys[keyId];
        if (key.publicKey == bytes32(0)) revert UnknownSealKey(keyId);
        uint64 retiresAt = key.retiresAt;
        // A deadline or an age: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        if (retiresAt != 0 && block.timestamp >= retiresAt) revert SealKeyRetired(keyId, retiresAt);
    }

    function _setSealKey(uint32 keyId, bytes32 publicKey) private {
        if (keyId == 0 || publicKey == bytes32(0)) revert InvalidSealKey(keyId, publicKey);
        if (_sealKeys[keyId].publicKey != bytes32(0)) revert SealKeyIdUsed(keyId);
        uint32 previousKeyId = currentSealKeyId;
        uint64 previousRetiresAt;
        if (previousKeyId != 0) {
            // The grace is at most MAX_SEAL_KEY_GRACE (90 days): the sum fits 64 bits for 5e11 years.
            // forge-lint: disable-next-line(unsafe-typecast)
            previousRetiresAt = uint64(block.timestamp + sealKeyGraceSeconds);
            _sealKeys[previousKeyId].retiresAt = previousRetiresAt;
        }
        _sealKeys[keyId] = SealKey({publicKey: publicKey, retiresAt: 0});
        currentSealKeyId = keyId;
        emit SealKeySet(keyId, publicKey, previousKeyId, previousRetiresAt);
    }

    function _setSealKeyGrace(uint256 graceSeconds) private {
        if (graceSeconds > MAX_SEAL_KEY_GRACE) revert InvalidParameter("sealKeyGraceSeconds", graceSeconds);
        emit ParameterUpdated("sealKeyGraceSeconds", sealKeyGraceSeconds, graceSeconds);
        sealKeyGraceSeconds = graceSeconds;
    }

    function _setRedemptionFee(uint256 feeBps) private {
        if (feeBps > MAX_FEE_BPS) revert InvalidParameter("redemptionFeeBps", feeBps);
        emit ParameterUpdated("redemptionFeeBps", redemptionFeeBps, feeBps);
        redemptionFeeBps = feeBps;
    }
}
