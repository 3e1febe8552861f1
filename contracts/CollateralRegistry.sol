// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {InternalLeanIMT, LeanIMTData} from "@zk-kit/lean-imt.sol/InternalLeanIMT.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {PoseidonT3} from "poseidon-solidity/PoseidonT3.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";

/// @title Attested ZEC deposits and the ZEC collateral total.
/// @notice The attestor records each custody deposit as a LeanIMT leaf; a mint
/// proves membership of one leaf without saying which.
contract CollateralRegistry is ICollateralRegistry, AccessControl {
    using InternalLeanIMT for LeanIMTData;

    bytes32 public constant ATTESTOR_ROLE = keccak256("ATTESTOR_ROLE");
    bytes32 public constant PAYOUT_ROLE = keccak256("PAYOUT_ROLE");
    bytes32 public constant NOTE_ROLE = keccak256("NOTE_ROLE");

    /// @notice The circuit proves paths of at most 20 levels.
    uint256 public constant MAX_DEPTH = 20;
    uint256 public constant CAPACITY = 1 << MAX_DEPTH;
    uint256 private constant CURRENT_ROOT = type(uint256).max;

    LeanIMTData private _tree;
    mapping(uint256 root => uint256) private _rootSupersededAt;

    uint256 public totalCollateralZat;
    uint256 public totalDepositedZat;
    uint256 public totalPaidOutZat;
    /// @inheritdoc ICollateralRegistry
    uint256 public unmintedZat;

    constructor(address admin, address attestor) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(ATTESTOR_ROLE, attestor);
    }

    /// @inheritdoc ICollateralRegistry
    function recordDeposits(
        uint256[] calldata leaves,
        uint256 totalZat
    ) external onlyRole(ATTESTOR_ROLE) returns (uint256 firstIndex) {
        uint256 count = leaves.length;
        if (count == 0) revert EmptyLeafBatch(0);
        // Each deposit holds 1 to 2^64 - 1 zatoshi, so the total does too, times the count.
        if (totalZat < count || totalZat > count * type(uint64).max) revert InvalidDepositTotal(totalZat, count);
        uint256 newRoot;
        (firstIndex, newRoot) = _insertMany(leaves);
        uint256 total = totalCollateralZat + totalZat;
        totalCollateralZat = total;
        totalDepositedZat += totalZat;
        unmintedZat += totalZat;
        emit DepositsRecorded(firstIndex, leaves, totalZat, newRoot, total);
    }

    /// @inheritdoc ICollateralRegistry
    function insertChangeLeaves(uint256[] calldata leaves) external onlyRole(NOTE_ROLE) returns (uint256 firstIndex) {
        uint256 newRoot;
        (firstIndex, newRoot) = _insertMany(leaves);
        emit ChangeLeavesInserted(firstIndex, leaves, newRoot);
    }

    /// @inheritdoc ICollateralRegistry
    function insertChangeLeaf(uint256 leaf) external onlyRole(NOTE_ROLE) returns (uint256 index) {
        uint256 newRoot;
        (index, newRoot) = _insert(leaf);
        emit NoteInserted(index, leaf, 0, newRoot);
    }

    /// @inheritdoc ICollateralRegistry
    function insertNote(
        uint256 noteCommitment,
        uint256 amountZat
    ) external onlyRole(NOTE_ROLE) returns (uint256 index) {
        if (amountZat == 0 || amountZat > type(uint64).max) revert InvalidDepositAmount(amountZat);
        if (noteCommitment == 0 || noteCommitment >= SNARK_SCALAR_FIELD) revert InvalidNoteCommitment(noteCommitment);
        uint256 leaf = PoseidonT3.hash([amountZat, noteCommitment]);
        uint256 newRoot;
        (index, newRoot) = _insert(leaf);
        unmintedZat += amountZat;
        emit NoteInserted(index, leaf, amountZat, newRoot);
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

    /// @dev Leaves are unique: a repeated one would be a second claim on the same ZEC.
    function _insert(uint256 leaf) private returns (uint256 index, uint256 newRoot) {
        index = _tree.size;
        if (index >= CAPACITY) revert TreeFull(CAPACITY);
        if (_tree._has(leaf)) revert DepositAlreadyRecorded(leaf);
        uint256 previousRoot = _tree._root();
        newRoot = _tree._insert(leaf);
        if (previousRoot != 0) _rootSupersededAt[previousRoot] = block.timestamp;
        _rootSupersededAt[newRoot] = CURRENT_ROOT;
    }

    /// @dev Appends `leaves` with one walk up the tree: each level hashes only
    /// the pairs the new leaves changed, so N leaves cost about N hashes plus one
    /// path, where N single inserts cost N paths. One root enters the history
    /// (the batch's intermediate roots were never the registry's root).
    /// The LeanIMT layout is zk-kit's (InternalLeanIMT: `sideNodes[level]` holds
    /// the level's last node at an even position, `sideNodes[depth]` the root),
    /// so `_insert` and this agree; its `_insertMany` is not used because it
    /// refuses a repeated leaf without naming it.
    function _insertMany(uint256[] calldata leaves) private returns (uint256 firstIndex, uint256 newRoot) {
        uint256 count = leaves.length;
        if (count == 0) revert EmptyLeafBatch(0);
        firstIndex = _tree.size;
        uint256 end = firstIndex + count;
        if (end > CAPACITY) revert TreeFull(CAPACITY);
        uint256[] memory nodes = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            uint256 leaf = leaves[i];
            if (leaf == 0 || leaf >= SNARK_SCALAR_FIELD) revert InvalidLeaf(leaf);
            // Marked as it goes, so a leaf twice in the batch is refused as one already in the tree.
            if (_tree.leaves[leaf] != 0) revert DepositAlreadyRecorded(leaf);
            _tree.leaves[leaf] = firstIndex + i + 1;
            nodes[i] = leaf;
        }
        uint256 previousRoot = _tree._root();
        uint256 treeDepth = _tree.depth;
        while ((1 << treeDepth) < end) ++treeDepth;
        _tree.depth = treeDepth;
        // At each level the new nodes are positions start..end-1, held in nodes[0..end-start-1].
        uint256 start = firstIndex;
        for (uint256 level = 0; level < treeDepth; ++level) {
            // An odd start: the first new node's left sibling is an old node, the level's side node.
            uint256 left = start & 1 == 1 ? _tree.sideNodes[level] : 0;
            uint256 lastEven = end & 1 == 1 ? end - 1 : end - 2;
            if (lastEven >= start) _tree.sideNodes[level] = nodes[lastEven - start];
            uint256 parentStart = start >> 1;
            uint256 parentEnd = ((end - 1) >> 1) + 1;
            // Parent j reads children at 2j - (start & 1) and the one after, never below j: in place is safe.
            for (uint256 p = parentStart; p < parentEnd; ++p) {
                uint256 child = p << 1;
                uint256 leftNode = child < start ? left : nodes[child - start];
                nodes[p - parentStart] =
                    child + 1 < end ? PoseidonT3.hash([leftNode, nodes[child + 1 - start]]) : leftNode;
            }
            start = parentStart;
            end = parentEnd;
        }
        newRoot = nodes[0];
        _tree.sideNodes[treeDepth] = newRoot;
        _tree.size = firstIndex + count;
        if (previousRoot != 0) _rootSupersededAt[previousRoot] = block.timestamp;
        _rootSupersededAt[newRoot] = CURRENT_ROOT;
    }

    /// @inheritdoc ICollateralRegistry
    function isValidRoot(uint256 root_, uint256 maxAge) external view returns (bool) {
        uint256 supersededAt = _rootSupersededAt[root_];
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
