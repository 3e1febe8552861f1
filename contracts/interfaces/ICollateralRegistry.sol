// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Attested ZEC deposits in a Poseidon LeanIMT, and the ZEC collateral total.
/// @notice Leaf of a deposit: `Poseidon(amountZat, noteCommitment)` where
/// `noteCommitment = Poseidon(secret, nullifierSecret)` travelled in the Zcash memo.
interface ICollateralRegistry {
    /// @notice A note's amount is positive and below 2^64 zatoshi (the circuit's range).
    error InvalidDepositAmount(uint256 amountZat);
    /// @notice A note commitment must be a non-zero field element.
    error InvalidNoteCommitment(uint256 noteCommitment);
    /// @notice The same (amount, commitment) leaf is already in the tree: recording it twice would double-count collateral.
    error DepositAlreadyRecorded(uint256 leaf);
    /// @notice The tree holds as many leaves as the circuit can prove membership for.
    error TreeFull(uint256 capacity);
    /// @notice A payout larger than the recorded collateral.
    error PayoutExceedsCollateral(uint256 amountZat, uint256 totalCollateralZat);
    /// @notice A batch of leaves must hold at least one leaf.
    error EmptyLeafBatch(uint256 count);
    /// @notice A leaf must be a non-zero field element.
    error InvalidLeaf(uint256 leaf);
    /// @notice A batch of `count` deposits totals at least one zatoshi each and below 2^64 zatoshi each.
    error InvalidDepositTotal(uint256 totalZat, uint256 count);
    /// @notice The queue of leaves waiting for the tree holds `capacity` already: insert some first.
    error PendingQueueFull(uint256 capacity);
    /// @notice The `count` leaves given are not the ones queued with sequences `from`, `from + 1`, ….
    error PendingLeavesMismatch(uint256 from, uint256 count);
    /// @notice Leaves `from` to `from + count - 1` of the queue must reach past its head (`insertedCount`),
    /// stay within it (`queuedCount`) and within its last MAX_PENDING leaves.
    error InvalidPendingRange(uint256 from, uint256 count, uint256 insertedCount, uint256 queuedCount);

    /// @notice An attestor set holds 1 to MAX_ATTESTORS members and a threshold of at least 2 and at most
    /// its size: no single key may record a deposit.
    error InvalidAttestorSet(uint256 size, uint256 threshold);
    /// @notice An attestor set's member must be a non-zero address, listed once.
    error InvalidAttestor(address attestor);
    /// @notice A deposit batch carries `count` signatures; the attestor set asks for `threshold`.
    error AttestorQuorumNotMet(uint256 count, uint256 threshold);
    /// @notice Signature `index` is not a well-formed ECDSA signature (65 bytes, low s).
    error InvalidAttestorSignature(uint256 index);
    /// @notice Signature `index` recovers to `signer`, not above the signer before it (`previous`):
    /// signatures come ordered by signer address, each signer once.
    error AttestorsOutOfOrder(uint256 index, address signer, address previous);
    /// @notice `signer` is not in the current attestor set: a removed attestor, or a signature over
    /// another batch, chain or registry (which recovers to an unrelated address).
    error NotAttestor(address signer);
    /// @notice Governance set the attestors: `threshold` of `attestors` must sign each deposit batch.
    event AttestorsSet(address[] members, uint256 threshold, uint256 indexed setId);
    /// @notice ZEC left custody for a completed redemption.
    event CollateralPaidOut(uint256 amountZat, uint256 totalCollateralZat);
    /// @notice The attestor recorded `leaves.length` deposits as leaves
    /// `firstIndex`, `firstIndex + 1`, … holding `totalZat` together: no single
    /// deposit's amount is published. `root` is the root after the whole batch.
    event DepositsRecorded(
        uint256 indexed firstIndex,
        uint256[] leaves,
        uint256 totalZat,
        uint256 root,
        uint256 totalCollateralZat
    );
    /// @notice `leaf` was queued as the `sequence`-th leaf ever queued; it is
    /// spendable once inserted (`PendingLeavesInserted`). `amountZat` is 0 for the
    /// change of a spent note (amount private, already in the unminted total), and
    /// the note's amount for collateral released into a new note (public: the
    /// release published it; it joined the unminted total now).
    event LeafQueued(uint256 indexed sequence, uint256 leaf, uint256 amountZat);
    /// @notice The next `consumed` queued leaves left the queue: `leaves` entered
    /// the tree as leaves `firstIndex`, `firstIndex + 1`, … in the order queued,
    /// with one new root `root`; a consumed leaf the tree already held is not
    /// among them (`PendingLeafDropped`).
    event PendingLeavesInserted(uint256 indexed firstIndex, uint256[] leaves, uint256 consumed, uint256 root);
    /// @notice A queued leaf equal to one the tree already held was not inserted
    /// again. Equal leaves are one note (same amount, commitment and nullifier):
    /// only its owner can make one, and the note stays spendable once.
    event PendingLeafDropped(uint256 indexed leaf);
    /// @notice A spend took `amountZat` out of the unminted notes (the rest of the note became change).
    event NoteSpent(uint256 amountZat, uint256 unmintedZat);

    /// @notice Records shielded ZEC deposits seen by custody, one or many, as one
    /// tree update: the only way a deposit enters the tree. Each leaf is
    /// `Poseidon(amountZat, noteCommitment)` of its deposit; only their total is
    /// published, never one deposit's amount as such, so the attestors vouch
    /// that the leaves' amounts add up to `totalZat` (as they vouch for every
    /// deposit). Anyone may submit a batch; what records it is `signatures`: EIP-712
    /// signatures of at least `attestorThreshold()` members of the attestor set over
    /// `DepositBatch(uint256 batch,bytes32 leavesHash,uint256 totalZat)`, where `batch` is
    /// `depositBatchCount()` (this batch's turn) and `leavesHash` is `keccak256(abi.encodePacked(leaves))`,
    /// ordered by signer address.
    /// @return firstIndex The leaf index of the batch's first deposit.
    function recordDeposits(
        uint256[] calldata leaves,
        uint256 totalZat,
        bytes[] calldata signatures
    ) external returns (uint256 firstIndex);
    /// @notice Replaces the attestor set and its threshold (at least 2). Governance only (the timelock).
    /// Signatures of members who stay count for batches not yet recorded; a removed member's do not.
    function setAttestors(address[] calldata members, uint256 threshold) external;
    /// @notice The current attestor set.
    function attestors() external view returns (address[] memory);
    /// @notice How many of the attestor set must sign a deposit batch.
    function attestorThreshold() external view returns (uint256);
    /// @notice The current attestor set's id: 1 at deployment, one more at each `setAttestors`.
    function attestorSetId() external view returns (uint256);
    /// @notice Whether `account` is in the current attestor set.
    function isAttestor(address account) external view returns (bool);
    /// @notice Deposit batches recorded so far: the `batch` the next batch's signatures must name.
    function depositBatchCount() external view returns (uint256);

    /// @notice Lowers the collateral total after custody paid a redemption. Payout role only (the redemptions contract).
    function recordPayout(uint256 amountZat) external;

    /// @notice Queues the change leaf of a spent note (its amount is private and
    /// already counted in the unminted total) for a later batched insertion:
    /// a mint pays a hash and two storage writes instead of a walk up the tree.
    /// Refused when the tree already holds the leaf. Note role only (the minter).
    function queueLeaf(uint256 leaf) external;

    /// @notice Queues the change leaves of a batch of spends, in order. Note role only (the minter).
    function queueLeaves(uint256[] calldata leaves) external;

    /// @notice Inserts queued leaves into the tree with one walk and one new root.
    /// Anyone may call it at any time and pays its gas: no one can hold a queued
    /// note out of the tree. `leaves` are the queued leaves with sequences `from`,
    /// `from + 1`, … (as `LeafQueued` gave them); the queue's checkpoints vouch for
    /// them. Those below the head (`insertedCount`), inserted meanwhile by someone
    /// else, are skipped, and leaves queued meanwhile stay queued: neither voids the call.
    /// @return firstIndex The leaf index the first inserted leaf got.
    function insertPendingLeaves(uint256 from, uint256[] calldata leaves) external returns (uint256 firstIndex);

    /// @notice How many queued leaves wait for the tree.
    function pendingCount() external view returns (uint256);

    /// @notice How many leaves were ever queued (the next `LeafQueued` sequence).
    function queuedCount() external view returns (uint256);

    /// @notice How many queued leaves ever left the queue: the head's sequence.
    function insertedCount() external view returns (uint256);

    /// @notice The hash chain over the leaves with sequences below `sequence`: from
    /// `bytes32(uint256(1))`, each link the low 192 bits of `keccak256(abi.encode(chain, leaf))`.
    /// Kept for the last MAX_PENDING sequences and `queuedCount()` itself.
    function chainAt(uint256 sequence) external view returns (bytes32);

    /// @notice Queues a new note leaf `Poseidon(amountZat, noteCommitment)` for
    /// collateral released from a position or a failed payout redirected into a
    /// note, and adds `amountZat` to the unminted total. Like change, it is
    /// spendable once inserted. Note role only (the minter and redemptions).
    /// @return sequence The leaf's place in the queue (its `LeafQueued` sequence).
    function queueNote(uint256 noteCommitment, uint256 amountZat) external returns (uint256 sequence);

    /// @notice Takes `amountZat` out of the unminted notes when a proof spends it. Note role only (the minter).
    function spendNote(uint256 amountZat) external;

    /// @notice ZEC (zatoshi) in notes that back no position: deposits and change
    /// not yet spent. Redemptions never pay out of it.
    function unmintedZat() external view returns (uint256);

    /// @notice Whether `root` is the current root or was replaced at most `maxAge` seconds ago.
    function isValidRoot(uint256 root, uint256 maxAge) external view returns (bool);

    /// @notice When `root` stopped being the current root: 0 if never a root, `type(uint256).max` if current.
    function rootSupersededAt(uint256 root) external view returns (uint256);

    /// @notice The current tree root (0 while the tree is empty).
    function root() external view returns (uint256);

    /// @notice Number of leaves.
    function size() external view returns (uint256);

    /// @notice Current depth of the LeanIMT.
    function depth() external view returns (uint256);

    /// @notice ZEC held as collateral: deposits minus completed redemptions, in zatoshi.
    function totalCollateralZat() external view returns (uint256);

    /// @notice All ZEC ever recorded as deposited, in zatoshi.
    function totalDepositedZat() external view returns (uint256);

    /// @notice All ZEC ever paid out for redemptions, in zatoshi.
    function totalPaidOutZat() external view returns (uint256);
}
