// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {InternalLeanIMT, LeanIMTData} from "@zk-kit/lean-imt.sol/InternalLeanIMT.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {PoseidonT3} from "poseidon-solidity/PoseidonT3.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";

/// @title Attested ZEC deposits and the ZEC collateral total.
/// @notice A quorum of attestors records each custody deposit as a LeanIMT leaf; a mint
/// proves membership of one leaf without saying which.
contract CollateralRegistry is ICollateralRegistry, AccessControl, EIP712 {
    using InternalLeanIMT for LeanIMTData;

    bytes32 public constant PAYOUT_ROLE = keccak256("PAYOUT_ROLE");
    bytes32 public constant NOTE_ROLE = keccak256("NOTE_ROLE");

    /// @notice The circuit proves paths of at most 20 levels.
    uint256 public constant MAX_DEPTH = 20;
    // 2^MAX_DEPTH: forge's incorrect-shift lint takes the literal on the left for swapped arguments.
    // forge-lint: disable-next-line(incorrect-shift)
    uint256 public constant CAPACITY = 1 << MAX_DEPTH;
    uint256 private constant CURRENT_ROOT = type(uint256).max;
    /// @dev Held in the tree's leaf index for a released note while it is queued: its commitment
    /// and amount are public, so anyone could queue the same note first (a copied release) and
    /// make the owner's own copy the one dropped. Marked, a later release, deposit or change of
    /// the same leaf is refused, as insertNote refused it. Change is not marked (a mint does not
    /// pay for the slot), so a copy queued as change before the release goes in first and the
    /// release is dropped: the leaf is in the tree once, still the owner's to spend, and the
    /// copier's own ZEC behind the copy is what no one can spend.
    uint256 private constant QUEUED_NOTE = type(uint256).max;
    /// @notice Leaves the queue holds at most: a mint that would queue more reverts until some are inserted.
    uint256 public constant MAX_PENDING = 1024;
    /// @dev Checkpoints kept: one per queued leaf and the head's.
    uint256 private constant RING = MAX_PENDING + 1;

    LeanIMTData private _tree;
    mapping(uint256 root => uint256) private _rootSupersededAt;

    /// @notice An attestor set holds at most this many: each signature costs an ecrecover.
    uint256 public constant MAX_ATTESTORS = 16;
    /// @dev What a quorum signs: the batch's place (how many batches were recorded before it), its
    /// leaves and its total. The place is the registry state the batch extends, so a signed batch
    /// is recorded once, in its turn, or never; the EIP-712 domain binds the chain and the registry.
    bytes32 private constant DEPOSIT_BATCH_TYPEHASH = keccak256(
        "DepositBatch(uint256 batch,bytes32 leavesHash,uint256 totalZat)"
    );

    /// @dev The current set's id, threshold and size share one slot: a batch reads them once.
    struct AttestorSet {
        uint64 id;
        uint8 threshold;
        uint8 size;
    }

    /// @dev A batch writes the deposited total anyway: its count rides in the same slot.
    struct DepositTally {
        uint192 totalZat;
        uint64 batches;
    }

    AttestorSet private _set;
    address[] private _attestors;
    /// @dev The id of the set an address was last made a member of: a member of the current set
    /// iff equal to its id, so a rotation need not clear the old members.
    mapping(address attestor => uint64 setId) private _memberOf;
    DepositTally private _deposits;

    uint256 public totalCollateralZat;
    uint256 public totalPaidOutZat;
    /// @inheritdoc ICollateralRegistry
    uint256 public unmintedZat;

    /// @notice The hash chain over no leaf: `chainAt(0)`.
    bytes32 public constant EMPTY_QUEUE = bytes32(uint256(1));

    /// @dev The queue is kept as a hash chain over every leaf ever queued, with
    /// its value after each leaf checkpointed in a ring of RING slots (the chain's
    /// low 192 bits and the sequence, one slot each): an inserter brings the
    /// leaves of any stretch of the queue and the checkpoints at both ends vouch
    /// for them, so leaves queued or inserted meanwhile do not void its call.
    /// After the ring's first round a leaf costs one slot's update, not a new slot.
    mapping(uint256 slot => uint256 checkpoint) private _checkpoints;
    uint64 private _queuedCount;
    uint64 private _insertedCount;

    constructor(address admin, address[] memory members, uint256 threshold) EIP712("ZSD CollateralRegistry", "1") {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _setAttestors(members, threshold);
    }

    /// @inheritdoc ICollateralRegistry
    function recordDeposits(
        uint256[] calldata leaves,
        uint256 totalZat,
        bytes[] calldata signatures
    ) external returns (uint256 firstIndex) {
        uint256 count = leaves.length;
        if (count == 0) revert EmptyLeafBatch(0);
        // Each deposit holds 1 to 2^64 - 1 zatoshi, so the total does too, times the count.
        if (totalZat < count || totalZat > count * type(uint64).max) revert InvalidDepositTotal(totalZat, count);
        DepositTally memory tally = _deposits;
        _checkQuorum(
            _hashTypedDataV4(
                keccak256(
                    abi.encode(DEPOSIT_BATCH_TYPEHASH, tally.batches, keccak256(abi.encodePacked(leaves)), totalZat)
                )
            ),
            signatures
        );
        uint256 newRoot;
        (firstIndex, newRoot) = _insertMany(leaves);
        uint256 total = totalCollateralZat + totalZat;
        totalCollateralZat = total;
        // Below 2^64 zatoshi a deposit and 2^20 deposits (CAPACITY): the sum stays far below 2^192; a
        // batch count past 2^64 would take as many transactions.
        // forge-lint: disable-next-line(unsafe-typecast)
        _deposits = DepositTally(uint192(tally.totalZat + totalZat), tally.batches + 1);
        unmintedZat += totalZat;
        emit DepositsRecorded(firstIndex, leaves, totalZat, newRoot, total);
    }

    /// @inheritdoc ICollateralRegistry
    function setAttestors(address[] calldata members, uint256 threshold) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setAttestors(members, threshold);
    }

    /// @inheritdoc ICollateralRegistry
    function attestors() external view returns (address[] memory) {
        return _attestors;
    }

    /// @inheritdoc ICollateralRegistry
    function attestorThreshold() external view returns (uint256) {
        return _set.threshold;
    }

    /// @inheritdoc ICollateralRegistry
    function attestorSetId() external view returns (uint256) {
        return _set.id;
    }

    /// @inheritdoc ICollateralRegistry
    function isAttestor(address account) external view returns (bool) {
        return account != address(0) && _memberOf[account] == _set.id;
    }

    /// @inheritdoc ICollateralRegistry
    function depositBatchCount() external view returns (uint256) {
        return _deposits.batches;
    }

    /// @inheritdoc ICollateralRegistry
    function totalDepositedZat() external view returns (uint256) {
        return _deposits.totalZat;
    }

    /// @dev Signers must be strictly ascending (a signer twice is refused as out of order), each a
    /// member of the current set, at least `threshold` of them.
    function _checkQuorum(bytes32 digest, bytes[] calldata signatures) private view {
        AttestorSet memory set = _set;
        uint256 count = signatures.length;
        if (count < set.threshold) revert AttestorQuorumNotMet(count, set.threshold);
        address previous = address(0);
        for (uint256 i = 0; i < count; ++i) {
            (address signer, ECDSA.RecoverError failure, ) = ECDSA.tryRecoverCalldata(digest, signatures[i]);
            if (failure != ECDSA.RecoverError.NoError) revert InvalidAttestorSignature(i);
            if (signer <= previous) revert AttestorsOutOfOrder(i, signer, previous);
            if (_memberOf[signer] != set.id) revert NotAttestor(signer);
            previous = signer;
        }
    }

    /// @dev At least two signers, so that no single key records a deposit; the old members leave by
    /// the id moving on.
    function _setAttestors(address[] memory members, uint256 threshold) private {
        uint256 size_ = members.length;
        if (size_ > MAX_ATTESTORS || threshold < 2 || threshold > size_) {
            revert InvalidAttestorSet(size_, threshold);
        }
        uint64 id = _set.id + 1;
        delete _attestors;
        for (uint256 i = 0; i < size_; ++i) {
            address attestor = members[i];
            if (attestor == address(0) || _memberOf[attestor] == id) revert InvalidAttestor(attestor);
            _memberOf[attestor] = id;
            _attestors.push(attestor);
        }
        // At most MAX_ATTESTORS (16), checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _set = AttestorSet(id, uint8(threshold), uint8(size_));
        emit AttestorsSet(members, threshold, id);
    }

    /// @inheritdoc ICollateralRegistry
    function queueLeaf(uint256 leaf) external onlyRole(NOTE_ROLE) {
        _queue(leaf, 0);
    }

    /// @inheritdoc ICollateralRegistry
    function queueLeaves(uint256[] calldata leaves) external onlyRole(NOTE_ROLE) {
        uint256 n = leaves.length;
        if (n == 0) revert EmptyLeafBatch(0);
        uint256 queued = _reserve(n);
        bytes32 chain = _chainAt(queued);
        for (uint256 i = 0; i < n; ++i) {
            uint256 leaf = leaves[i];
            chain = _chain(chain, _checkQueued(leaf));
            _checkpoint(queued + i + 1, chain);
            emit LeafQueued(queued + i, leaf, 0);
        }
        // A count grows only as leaves are queued, at most MAX_PENDING a call: 2^64 is 1.8e16 transactions
        // away. (Not CAPACITY: a leaf queued twice is inserted once, yet counted.)
        // forge-lint: disable-next-line(unsafe-typecast)
        _queuedCount = uint64(queued + n);
    }

    /// @inheritdoc ICollateralRegistry
    function insertPendingLeaves(uint256 from, uint256[] calldata leaves) external returns (uint256 firstIndex) {
        uint256 head = _insertedCount;
        uint256 end = from + leaves.length;
        // Reaching past the head, within the queue and its kept checkpoints.
        if (from > head || end <= head || end > _queuedCount) {
            revert InvalidPendingRange(from, leaves.length, head, _queuedCount);
        }
        bytes32 chain = _chainAt(from);
        for (uint256 i = 0; i < leaves.length; ++i) chain = _chain(chain, leaves[i]);
        if (chain != _chainAt(end)) revert PendingLeavesMismatch(from, leaves.length);
        // Those below the head went in meanwhile (another inserter was first): the rest go in now.
        uint256 skip = head - from;
        uint256 count = end - head;
        // A count grows only as leaves are queued, at most MAX_PENDING a call: 2^64 is 1.8e16 transactions
        // away. (Not CAPACITY: a leaf queued twice is inserted once, yet counted.)
        // forge-lint: disable-next-line(unsafe-typecast)
        _insertedCount = uint64(end);

        // A leaf the tree holds already (a deposit of the same note recorded since,
        // or the same change queued twice) is dropped, not refused: refusing would
        // let one owner's duplicate keep everyone else's change out of the tree.
        // A queued note's mark (QUEUED_NOTE) is its own place being kept, not a holding.
        firstIndex = _tree.size;
        uint256[] memory nodes = new uint256[](count);
        uint256 kept = 0;
        for (uint256 i = 0; i < count; ++i) {
            uint256 leaf = leaves[skip + i];
            uint256 mark = _tree.leaves[leaf];
            if (mark != 0 && mark != QUEUED_NOTE) {
                emit PendingLeafDropped(leaf);
                continue;
            }
            _tree.leaves[leaf] = firstIndex + kept + 1;
            nodes[kept] = leaf;
            ++kept;
        }
        // The leaves kept, for the event, and a copy for the walk, which overwrites its array.
        uint256[] memory inserted = new uint256[](kept);
        uint256[] memory walk = new uint256[](kept);
        for (uint256 i = 0; i < kept; ++i) (inserted[i], walk[i]) = (nodes[i], nodes[i]);
        uint256 newRoot = kept == 0 ? _tree._root() : _append(walk, firstIndex);
        emit PendingLeavesInserted(firstIndex, inserted, count, newRoot);
    }

    /// @inheritdoc ICollateralRegistry
    function queueNote(
        uint256 noteCommitment,
        uint256 amountZat
    ) external onlyRole(NOTE_ROLE) returns (uint256 sequence) {
        if (amountZat == 0 || amountZat > type(uint64).max) revert InvalidDepositAmount(amountZat);
        if (noteCommitment == 0 || noteCommitment >= SNARK_SCALAR_FIELD) revert InvalidNoteCommitment(noteCommitment);
        uint256 leaf = PoseidonT3.hash([amountZat, noteCommitment]);
        sequence = _queue(leaf, amountZat);
        _tree.leaves[leaf] = QUEUED_NOTE;
        unmintedZat += amountZat;
    }

    /// @inheritdoc ICollateralRegistry
    function spendNote(uint256 amountZat) external onlyRole(NOTE_ROLE) {
        // Cannot underflow for a sound proof: a spend takes at most the note's amount.
        uint256 left = unmintedZat - amountZat;
        unmintedZat = left;
        emit NoteSpent(amountZat, left);
    }

    /// @inheritdoc ICollateralRegistry
    function recordPayout(uint256 amountZat) external onlyRole(PAYOUT_ROLE) {
        uint256 total = totalCollateralZat;
        if (amountZat > total) revert PayoutExceedsCollateral(amountZat, total);
        total -= amountZat;
        totalCollateralZat = total;
        totalPaidOutZat += amountZat;
        emit CollateralPaidOut(amountZat, total);
    }

    /// @dev Appends `leaves` with one walk up the tree: each level hashes only
    /// the pairs the new leaves changed, so N leaves cost about N hashes plus one
    /// path, where N single inserts cost N paths. One root enters the history
    /// (the batch's intermediate roots were never the registry's root).
    /// The LeanIMT layout is zk-kit's (InternalLeanIMT: `sideNodes[level]` holds
    /// the level's last node at an even position, `sideNodes[depth]` the root),
    /// so InternalLeanIMT's views read the tree it builds; its `_insertMany` is not used because it
    /// refuses a repeated leaf without naming it.
    function _insertMany(uint256[] calldata leaves) private returns (uint256 firstIndex, uint256 newRoot) {
        uint256 count = leaves.length;
        if (count == 0) revert EmptyLeafBatch(0);
        firstIndex = _tree.size;
        if (firstIndex + count + _queuedCount - _insertedCount > CAPACITY) revert TreeFull(CAPACITY);
        uint256[] memory nodes = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            uint256 leaf = leaves[i];
            if (leaf == 0 || leaf >= SNARK_SCALAR_FIELD) revert InvalidLeaf(leaf);
            // Marked as it goes, so a leaf twice in the batch is refused as one already in the tree.
            if (_tree.leaves[leaf] != 0) revert DepositAlreadyRecorded(leaf);
            _tree.leaves[leaf] = firstIndex + i + 1;
            nodes[i] = leaf;
        }
        newRoot = _append(nodes, firstIndex);
    }

    /// @dev The walk of `_insertMany` over leaves already checked and marked in
    /// `_tree.leaves` as leaves `start`, `start + 1`, …; `nodes` is overwritten level by level.
    function _append(uint256[] memory nodes, uint256 start) private returns (uint256 newRoot) {
        uint256 end = start + nodes.length;
        if (end > CAPACITY) revert TreeFull(CAPACITY);
        uint256 previousRoot = _tree._root();
        _tree.size = end;
        uint256 treeDepth = _tree.depth;
        // 2^treeDepth, not a swapped shift (forge's incorrect-shift lint).
        // forge-lint: disable-next-line(incorrect-shift)
        while ((1 << treeDepth) < end) ++treeDepth;
        _tree.depth = treeDepth;
        // At each level the new nodes are positions start..end-1, held in nodes[0..end-start-1].
        for (uint256 level = 0; level < treeDepth; ++level) {
            // An odd start: the first new node's left sibling is an old node, the level's side node.
            uint256 left = start & 1 == 1 ? _tree.sideNodes[level] : 0;
            uint256 lastEven = end & 1 == 1 ? end - 1 : end - 2;
            if (lastEven >= start) _tree.sideNodes[level] = nodes[lastEven - start];
            _hashLevel(nodes, start, end, left);
            start >>= 1;
            end = ((end - 1) >> 1) + 1;
        }
        newRoot = nodes[0];
        _tree.sideNodes[treeDepth] = newRoot;
        if (previousRoot != 0) _rootSupersededAt[previousRoot] = block.timestamp;
        _rootSupersededAt[newRoot] = CURRENT_ROOT;
    }

    /// @dev Queues one leaf after the last, its checkpoint written; `amountZat` as `LeafQueued` publishes it.
    function _queue(uint256 leaf, uint256 amountZat) private returns (uint256 sequence) {
        sequence = _reserve(1);
        _checkpoint(sequence + 1, _chain(_chainAt(sequence), _checkQueued(leaf)));
        // A count grows only as leaves are queued, at most MAX_PENDING a call: 2^64 is 1.8e16 transactions
        // away. (Not CAPACITY: a leaf queued twice is inserted once, yet counted.)
        // forge-lint: disable-next-line(unsafe-typecast)
        _queuedCount = uint64(sequence + 1);
        emit LeafQueued(sequence, leaf, amountZat);
    }

    /// @dev Room for `n` more queued leaves: in the queue, and in the tree once every queued leaf is in.
    function _reserve(uint256 n) private view returns (uint256 queued) {
        queued = _queuedCount;
        uint256 pending = queued - _insertedCount;
        if (pending + n > MAX_PENDING) revert PendingQueueFull(MAX_PENDING);
        if (_tree.size + pending + n > CAPACITY) revert TreeFull(CAPACITY);
    }

    /// @dev A queued leaf is a field element the tree does not hold yet.
    function _checkQueued(uint256 leaf) private view returns (uint256) {
        if (leaf == 0 || leaf >= SNARK_SCALAR_FIELD) revert InvalidLeaf(leaf);
        if (_tree.leaves[leaf] != 0) revert DepositAlreadyRecorded(leaf);
        return leaf;
    }

    /// @dev The next link: the low 192 bits of keccak256(chain, leaf), so that a checkpoint holds its sequence too.
    function _chain(bytes32 chain, uint256 leaf) private pure returns (bytes32) {
        return bytes32(uint256(uint192(uint256(keccak256(abi.encode(chain, leaf))))));
    }

    function _checkpoint(uint256 sequence, bytes32 chain) private {
        _checkpoints[sequence % RING] = (uint256(chain) << 64) | sequence;
    }

    /// @dev The chain over leaves [0, sequence), while its checkpoint is kept (the last RING).
    function _chainAt(uint256 sequence) private view returns (bytes32) {
        if (sequence == 0) return EMPTY_QUEUE;
        uint256 checkpoint = _checkpoints[sequence % RING];
        // The low 64 bits are the sequence the slot was written for (see _checkpoint): cut on purpose.
        // forge-lint: disable-next-line(unsafe-typecast)
        if (uint64(checkpoint) != sequence) {
            revert InvalidPendingRange(sequence, 0, _insertedCount, _queuedCount);
        }
        return bytes32(checkpoint >> 64);
    }

    /// @inheritdoc ICollateralRegistry
    function pendingCount() external view returns (uint256) {
        return _queuedCount - _insertedCount;
    }

    /// @inheritdoc ICollateralRegistry
    function insertedCount() external view returns (uint256) {
        return _insertedCount;
    }

    /// @inheritdoc ICollateralRegistry
    function queuedCount() external view returns (uint256) {
        return _queuedCount;
    }

    /// @inheritdoc ICollateralRegistry
    function chainAt(uint256 sequence) external view returns (bytes32) {
        uint256 queued = _queuedCount;
        if (sequence > queued || queued - sequence > MAX_PENDING) {
            revert InvalidPendingRange(sequence, 0, _insertedCount, queued);
        }
        return _chainAt(sequence);
    }

    /// @dev One level of `_append`: the parents of nodes start..end-1 (`left` the
    /// old left sibling of an odd start), written over `nodes` from index 0.
    function _hashLevel(uint256[] memory nodes, uint256 start, uint256 end, uint256 left) private pure {
        uint256 parentStart = start >> 1;
        uint256 parentEnd = ((end - 1) >> 1) + 1;
        // Parent j reads children at 2j - (start & 1) and the one after, never below j: in place is safe.
        for (uint256 p = parentStart; p < parentEnd; ++p) {
            uint256 child = p << 1;
            uint256 leftNode = child < start ? left : nodes[child - start];
            nodes[p - parentStart] = child + 1 < end ? PoseidonT3.hash([leftNode, nodes[child + 1 - start]]) : leftNode;
        }
    }

    /// @inheritdoc ICollateralRegistry
    function isValidRoot(uint256 root_, uint256 maxAge) external view returns (bool) {
        uint256 supersededAt = _rootSupersededAt[root_];
        // A root's age: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        return supersededAt == CURRENT_ROOT || (supersededAt != 0 && block.timestamp <= supersededAt + maxAge);
    }

    /// @inheritdoc ICollateralRegistry
    function rootSupersededAt(uint256 root_) external view returns (uint256) {
        return _rootSupersededAt[root_];
    }

    /// @inheritdoc ICollateralRegistry
    function root() external view returns (uint256) {
        return _tree._root();
    }

    /// @inheritdoc ICollateralRegistry
    function size() external view returns (uint256) {
        return _tree.size;
    }

    /// @inheritdoc ICollateralRegistry
    function depth() external view returns (uint256) {
        return _tree.depth;
    }
}
