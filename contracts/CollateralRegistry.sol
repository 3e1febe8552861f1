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
    function recordDeposit(
        uint256 noteCommitment,
        uint256 amountZat
    ) external onlyRole(ATTESTOR_ROLE) returns (uint256 index) {
        if (amountZat == 0 || amountZat > type(uint64).max) revert InvalidDepositAmount(amountZat);
        if (noteCommitment == 0 || noteCommitment >= SNARK_SCALAR_FIELD) revert InvalidNoteCommitment(noteCommitment);
        uint256 leaf = PoseidonT3.hash([amountZat, noteCommitment]);
        uint256 newRoot;
        (index, newRoot) = _insert(leaf);
        uint256 total = totalCollateralZat + amountZat;
        totalCollateralZat = total;
        totalDepositedZat += amountZat;
        unmintedZat += amountZat;
        emit DepositRecorded(index, leaf, noteCommitment, amountZat, newRoot, total);
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
