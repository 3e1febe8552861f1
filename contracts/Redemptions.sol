// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IRedemptions} from "./interfaces/IRedemptions.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";

/// @title Burns the stable token for ZEC paid by custody to a shielded address.
/// @notice The ZEC due is fixed at request time by the minter, out of the
/// positions' collateral only (at the oracle price, or pro rata when the
/// positions are worth less than the supply), less the redemption fee; the
/// attestor then completes (paid) or fails it. A failed payout is never
/// refunded into the positions (that would move collateral between them):
/// its ZEC stays held for the owner, who redirects it to another address or
/// into a note. The minter also queues here the ZEC released from positions
/// and notes, so custody pays every shielded payout through one path.
contract Redemptions is IRedemptions, Pausable, AccessControl, EIP712, Nonces, ReentrancyGuard {
    bytes32 public constant ATTESTOR_ROLE = keccak256("ATTESTOR_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    bytes32 public constant REDEEM_TYPEHASH = keccak256(
        "Redeem(address owner,uint256 amount,string withdrawAddress,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant REDIRECT_TYPEHASH = keccak256(
        "Redirect(uint256 id,string withdrawAddress,uint256 noteCommitment,uint256 nonce,uint256 deadline)"
    );

    uint256 private constant BPS = 10_000;
    uint256 private constant MAX_FEE_BPS = 1_000;
    /// @dev Unified addresses with several receivers stay well below this.
    uint256 private constant MAX_ADDRESS_LENGTH = 512;

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    IStableMinter public immutable minter;

    uint256 public redemptionFeeBps;
    /// @notice ZEC owed: requested payouts and failed ones held for their owners.
    uint256 public pendingZatDue;
    uint256 public redemptionCount;
    mapping(uint256 id => Redemption) private _redemptions;

    constructor(
        address admin,
        address attestor,
        address pauser,
        IStableToken token_,
        ICollateralRegistry registry_,
        IStableMinter minter_,
        uint256 redemptionFeeBps_
    ) EIP712("ZSD Redemptions", "1") {
        token = token_;
        registry = registry_;
        minter = minter_;
        _setRedemptionFee(redemptionFeeBps_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(ATTESTOR_ROLE, attestor);
        _grantRole(PAUSER_ROLE, pauser);
    }

    /// @inheritdoc IRedemptions
    function redeem(uint256 amount, string calldata withdrawAddress) external returns (uint256) {
        return _redeem(msg.sender, amount, withdrawAddress);
    }

    /// @inheritdoc IRedemptions
    function redeemWithPermit(
        address owner,
        uint256 amount,
        string calldata withdrawAddress,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external returns (uint256) {
        if (block.timestamp > deadline) revert ExpiredSignature(deadline);
        bytes32 structHash = keccak256(
            abi.encode(REDEEM_TYPEHASH, owner, amount, keccak256(bytes(withdrawAddress)), _useNonce(owner), deadline)
        );
        bytes32 digest = _hashTypedDataV4(structHash);
        // SignatureChecker also accepts ERC-1271 smart-contract wallets.
        if (!SignatureChecker.isValidSignatureNow(owner, digest, abi.encodePacked(r, s, v))) {
            revert InvalidSignature(owner);
        }
        return _redeem(owner, amount, withdrawAddress);
    }

    /// @inheritdoc IRedemptions
    function requestPayout(
        address beneficiary,
        uint256 zatDue,
        string calldata withdrawAddress
    ) external nonReentrant returns (uint256 id) {
        if (msg.sender != address(minter)) revert CallerNotMinter(msg.sender);
        if (zatDue == 0 || zatDue > type(uint64).max) revert InvalidAmount(zatDue);
        pendingZatDue += zatDue;
        id = _queuePayout(beneficiary, zatDue, withdrawAddress);
    }

    /// @inheritdoc IRedemptions
    function completeRedemption(uint256 id, bytes32 zcashTxId) external onlyRole(ATTESTOR_ROLE) nonReentrant {
        Redemption storage redemption = _pending(id);
        redemption.status = Status.Completed;
        uint256 zatDue = redemption.zatDue;
        pendingZatDue -= zatDue;
        registry.recordPayout(zatDue);
        emit RedemptionCompleted(id, zcashTxId, zatDue);
    }

    /// @inheritdoc IRedemptions
    function failRedemption(uint256 id, string calldata reason) external onlyRole(ATTESTOR_ROLE) nonReentrant {
        Redemption storage redemption = _pending(id);
        redemption.status = Status.Failed;
        emit RedemptionFailed(id, redemption.owner, redemption.zatDue, reason);
    }

    /// @inheritdoc IRedemptions
    function redirect(
        uint256 id,
        string calldata withdrawAddress,
        uint256 noteCommitment
    ) external nonReentrant returns (uint256) {
        return _redirect(id, withdrawAddress, noteCommitment, msg.sender);
    }

    /// @inheritdoc IRedemptions
    function redirectWithSig(
        uint256 id,
        string calldata withdrawAddress,
        uint256 noteCommitment,
        uint256 deadline,
        bytes calldata signature
    ) external nonReentrant returns (uint256) {
        if (block.timestamp > deadline) revert RedirectSignatureExpired(deadline);
        address owner = _redemptions[id].owner;
        bytes32 structHash = keccak256(
            abi.encode(
                REDIRECT_TYPEHASH,
                id,
                keccak256(bytes(withdrawAddress)),
                noteCommitment,
                _useNonce(owner),
                deadline
            )
        );
        if (!SignatureChecker.isValidSignatureNow(owner, _hashTypedDataV4(structHash), signature)) {
            revert InvalidRedirectSignature(owner);
        }
        return _redirect(id, withdrawAddress, noteCommitment, owner);
    }

    /// @inheritdoc IRedemptions
    function getRedemption(uint256 id) external view returns (Redemption memory) {
        return _redemptions[id];
    }

    /// @inheritdoc IRedemptions
    function quote(uint256 amount) public view returns (uint256 zatDue, uint256 feeZat, int256 price) {
        return minter.quoteRedemption(amount, redemptionFeeBps);
    }

    /// @inheritdoc IRedemptions
    function nonces(address owner) public view override(IRedemptions, Nonces) returns (uint256) {
        return super.nonces(owner);
    }

    /// @inheritdoc IRedemptions
    function setRedemptionFee(uint256 feeBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRedemptionFee(feeBps);
    }

    /// @inheritdoc IRedemptions
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc IRedemptions
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _redeem(
        address owner,
        uint256 amount,
        string calldata withdrawAddress
    ) private whenNotPaused nonReentrant returns (uint256 id) {
        if (amount == 0) revert InvalidAmount(0);
        uint256 length = bytes(withdrawAddress).length;
        if (length == 0 || length > MAX_ADDRESS_LENGTH) revert InvalidWithdrawAddress(length);

        // Only positions pay: the minter lowers their debt and collateral.
        (uint256 zatDue, uint256 feeZat, int256 price) = minter.redeemFromPositions(amount, redemptionFeeBps);
        if (zatDue == 0) revert RedemptionTooSmall(amount);

        id = ++redemptionCount;
        pendingZatDue += zatDue;
        _redemptions[id] = Redemption({owner: owner, status: Status.Requested, zatDue: uint64(zatDue), amount: amount});
        token.burnForRedemption(owner, amount);
        emit RedemptionRequested(id, owner, amount, zatDue, feeZat, price, withdrawAddress);
    }

    function _queuePayout(
        address beneficiary,
        uint256 zatDue,
        string calldata withdrawAddress
    ) private returns (uint256 id) {
        id = ++redemptionCount;
        _redemptions[id] = Redemption({
            owner: beneficiary,
            status: Status.Requested,
            zatDue: uint64(zatDue),
            amount: 0
        });
        emit RedemptionRequested(id, beneficiary, 0, zatDue, 0, 0, withdrawAddress);
    }

    /// @dev The held ZEC moves as a whole to one place the owner names; the
    /// failed record stays as it was paid nothing.
    function _redirect(
        uint256 id,
        string calldata withdrawAddress,
        uint256 noteCommitment,
        address caller
    ) private returns (uint256 newId) {
        Redemption storage redemption = _redemptions[id];
        if (redemption.status != Status.Failed) revert PayoutNotFailed(id, redemption.status);
        if (caller != redemption.owner) revert NotPayoutOwner(id, caller);
        uint256 length = bytes(withdrawAddress).length;
        if ((length != 0) == (noteCommitment != 0)) revert InvalidRedirectDestination();
        redemption.status = Status.Redirected;
        uint256 zatDue = redemption.zatDue;
        uint256 noteIndex;
        if (length != 0) {
            if (length > MAX_ADDRESS_LENGTH) revert InvalidWithdrawAddress(length);
            newId = _queuePayout(caller, zatDue, withdrawAddress);
        } else {
            pendingZatDue -= zatDue;
            noteIndex = registry.insertNote(noteCommitment, zatDue);
        }
        emit PayoutRedirected(id, newId, noteIndex);
    }

    function _pending(uint256 id) private view returns (Redemption storage redemption) {
        redemption = _redemptions[id];
        if (redemption.status != Status.Requested) revert RedemptionNotPending(id, redemption.status);
    }

    function _setRedemptionFee(uint256 feeBps) private {
        if (feeBps > MAX_FEE_BPS) revert InvalidParameter("redemptionFeeBps", feeBps);
        emit ParameterUpdated("redemptionFeeBps", redemptionFeeBps, feeBps);
        redemptionFeeBps = feeBps;
    }
}
