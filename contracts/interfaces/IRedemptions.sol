// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IGovernedParameters} from "./IGovernedParameters.sol";
import {IPositionManager} from "./IPositionManager.sol";

/// @title Burns the stable token and tracks the ZEC payout to a shielded Zcash address.
/// @notice Withdraw addresses arrive sealed: the address encrypted to custody's
/// X25519 seal key (envelope v1: version 0x01 | keyId uint32 BE | ephemeral
/// public key (32) | nonce (12) | ChaCha20-Poly1305 ciphertext and tag), so
/// the chain never shows it. The contract checks the envelope's shape and key;
/// whether it opens only custody can tell (it fails the payout as
/// "unreadable_address" when it does not).
interface IRedemptions is IGovernedParameters {
    enum Status {
        None,
        Requested,
        Completed,
        /// Custody could not pay: the ZEC is held for the owner to redirect.
        Failed,
        /// The owner sent the held ZEC to another address or into a note.
        Redirected
    }

    /// @notice ZEC custody owes to a sealed Zcash address: a redemption's (`amount` burned) or
    /// collateral the minter released (`amount` 0).
    struct Payout {
        address owner;
        Status status;
        uint64 zatDue;
        uint256 amount;
    }

    /// @notice A custody seal key: `retiresAt` is 0 while it is current, else
    /// the time from which envelopes sealed to it are refused.
    struct SealKey {
        bytes32 publicKey;
        uint64 retiresAt;
    }

    error InvalidAmount(uint256 amount);
    /// @notice A sealed address is 66..577 bytes (65 of envelope around a 1..512-byte address).
    error InvalidSealedAddress(uint256 length);
    error UnsupportedSealVersion(uint8 version);
    error UnknownSealKey(uint32 keyId);
    /// @notice The envelope names a key rotated out whose grace period ended at `retiredAt`.
    error SealKeyRetired(uint32 keyId, uint64 retiredAt);
    /// @notice Key id 0 and the zero public key are refused.
    error InvalidSealKey(uint32 keyId, bytes32 publicKey);
    /// @notice A key id is used once, so an envelope's key id names one key forever.
    error SealKeyIdUsed(uint32 keyId);
    error RedemptionTooSmall(uint256 amount);
    error PayoutNotPending(uint256 id, Status status);
    error CallerNotMinter(address caller);
    error NotPayoutOwner(uint256 id, address caller);
    /// @notice Only a failed payout (held for its owner) can be redirected.
    error PayoutNotFailed(uint256 id, Status status);
    /// @notice A redirect names exactly one of a Zcash address and a note commitment.
    error InvalidRedirectDestination();

    /// @notice Custody owes `zatDue` to the address sealed in `sealedAddress` (its keccak256 in
    /// `sealedAddressHash`, for custody's replay check): for a redemption that burned `amount`, or
    /// (`amount` 0) for collateral the minter released.
    event PayoutRequested(
        uint256 indexed id,
        address indexed owner,
        uint256 amount,
        uint256 zatDue,
        uint256 feeZat,
        int256 price,
        bytes sealedAddress,
        bytes32 sealedAddressHash
    );
    /// @notice Custody paid the payout in Zcash transaction `zcashTxId`.
    event PayoutCompleted(uint256 indexed id, bytes32 zcashTxId, uint256 zatPaid);
    /// @notice Custody could not pay: `zatHeld` stays owed to `owner`, who may redirect it.
    /// Nothing goes back into the positions, so no one's collateral moves.
    event PayoutFailed(uint256 indexed id, address indexed owner, uint256 zatHeld, string reason);
    /// @notice The owner redirected failed payout `id`: to new payout `newId`, or (`newId` 0) into a
    /// note queued as the registry's `noteSequence`-th leaf (`LeafQueued`; spendable once inserted).
    event PayoutRedirected(uint256 indexed id, uint256 newId, uint256 noteSequence);
    /// @notice `keyId` became custody's current seal key; `previousKeyId` keeps
    /// being accepted until `previousRetiresAt` (both 0 for the first key).
    event SealKeySet(uint32 indexed keyId, bytes32 publicKey, uint32 previousKeyId, uint64 previousRetiresAt);

    /// @notice Burns `amount` of the caller's tokens and records a payout of what the positions
    /// give for them to the address sealed in `sealedAddress` (for the caller as owner).
    /// @return id The payout's id.
    function redeem(uint256 amount, bytes calldata sealedAddress) external returns (uint256 id);

    /// @notice Same as `redeem` for `owner`, authorised by the owner's EIP-712
    /// `Redeem(owner, amount, minZatOut, sealedAddress, nonce, deadline)` signature, so a
    /// relayer can submit it. The signature covers the sealed address's hash: a
    /// plain EIP-2612 permit would not, and a relayer could redirect the ZEC.
    /// @param minZatOut The least ZEC (zatoshi, after the fee) the owner accepts: a relayer holding the
    /// permit until the price falls or the system turns insolvent (pro-rata payouts) meets
    /// `ZatOutBelowMinimum`, and nothing is burned.
    function redeemWithPermit(
        address owner,
        uint256 amount,
        uint256 minZatOut,
        bytes calldata sealedAddress,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external returns (uint256 id);

    /// @notice Queues a payout of `zatDue` released from a position or a note
    /// (no tokens burned: `amount` is 0 in the record and event). Minter only.
    function requestPayout(
        address beneficiary,
        uint256 zatDue,
        bytes calldata sealedAddress
    ) external returns (uint256 id);

    /// @notice Marks a payout paid with the Zcash transaction id. Attestor role only.
    function completePayout(uint256 id, bytes32 zcashTxId) external;

    /// @notice Marks a payout custody cannot make failed: its ZEC stays held for
    /// the owner (no tokens are minted back, no position changes). Attestor role only.
    function failPayout(uint256 id, string calldata reason) external;

    /// @notice Sends a failed payout's ZEC, as the owner chooses, to another
    /// sealed Zcash address (a new payout) or into a new note `Poseidon(zatDue, noteCommitment)`
    /// (exactly one of the two; `sealedAddress` empty for a note). Owner only.
    /// @return newId The new payout, or 0 for a note.
    function redirect(
        uint256 id,
        bytes calldata sealedAddress,
        uint256 noteCommitment
    ) external returns (uint256 newId);

    /// @notice `redirect` authorised by the owner's EIP-712
    /// `Redirect(id, sealedAddress, noteCommitment, nonce, deadline)` signature.
    function redirectWithSig(
        uint256 id,
        bytes calldata sealedAddress,
        uint256 noteCommitment,
        uint256 deadline,
        bytes calldata signature
    ) external returns (uint256 newId);

    /// @notice Payout `id`.
    function getPayout(uint256 id) external view returns (Payout memory);

    /// @notice Payouts recorded so far (ids run from 1).
    function payoutCount() external view returns (uint256);

    /// @notice ZEC (zatoshi) a redemption of `amount` would pay now, and the fee kept.
    function quote(uint256 amount) external view returns (uint256 zatDue, uint256 feeZat, int256 price);

    /// @notice The minter whose released collateral this contract pays out.
    function minter() external view returns (address);

    /// @notice The positions redemptions are taken from.
    function positions() external view returns (IPositionManager);

    /// @notice Sets the redemption fee in basis points (at most 1000). Admin (timelock) only.
    function setRedemptionFee(uint256 feeBps) external;

    /// @notice Makes `publicKey` (X25519) custody's current seal key under `keyId`;
    /// the previous key keeps being accepted for `sealKeyGraceSeconds`, so requests
    /// sealed just before the rotation still land. Admin (timelock) only.
    function setSealKey(uint32 keyId, bytes32 publicKey) external;

    /// @notice Sets how long a rotated-out seal key stays accepted (at most 90 days). Admin (timelock) only.
    function setSealKeyGrace(uint256 graceSeconds) external;

    /// @notice The key id new envelopes should name.
    function currentSealKeyId() external view returns (uint32);

    /// @notice Seconds a rotated-out seal key stays accepted.
    function sealKeyGraceSeconds() external view returns (uint256);

    /// @notice A seal key by id (`publicKey` 0 if unknown; `retiresAt` 0 while current).
    function sealKey(uint32 keyId) external view returns (bytes32 publicKey, uint64 retiresAt);

    /// @notice Stops new redemptions. Pause-guardian role.
    function pause() external;

    /// @notice Resumes redemptions. Pause-guardian role.
    function unpause() external;
}
