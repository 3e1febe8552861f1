// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPositionManager} from "../interfaces/IPositionManager.sol";
import {RatioBuckets} from "./RatioBuckets.sol";

/// @notice A position as `PositionManager` stores it: debt and backing collateral as of map
/// snapshot `snapshot` of epoch `epoch` (see PositionManager), and, while it has debt in a live
/// epoch, its place in the ratio order (`key`, and its neighbours `prev` and `next` in its
/// bucket's list). The links share the amounts' slot, so a write that refiles a position pays
/// for no slot of its own but the key.
struct PositionRecord {
    address owner;
    IPositionManager.PositionStatus status;
    uint32 epoch;
    uint32 snapshot;
    uint64 collateralZat;
    uint128 debt;
    uint32 prev;
    uint32 next;
    uint256 key;
}

/// @title The positions with debt, ordered by collateral per debt, riskiest first.
/// @notice A par redemption may only run when no position is under 100%, and must find those
/// that are without walking every position. Redemptions and redistributions map every ratio
/// through the same increasing function, so a position is filed once per write under its key
/// (RatioBuckets.encode) and keeps its place. Each epoch has 2^24 buckets (the key's top bits);
/// a bitmap finds the lowest non-empty one, and each bucket's list is kept sorted, so the
/// riskiest position of an epoch is the head of its lowest bucket.
library SortedPositions {
    using RatioBuckets for RatioBuckets.Bitmap;

    struct Order {
        RatioBuckets.Bitmap buckets;
    }

    /// @dev Files `id` under `key` in `epoch`'s order. The walk to its place starts at `hint` when
    /// that is another position filed in the same bucket, going whichever way the keys say, and at
    /// the bucket's head otherwise. A hint is checked, never trusted: a wrong or stale one costs its
    /// caller gas and files the position where the keys put it all the same. The walk has no cap: a
    /// cap that reverted would let anyone who files positions between a hint and its place block
    /// an owner's top-up or repayment.
    function insert(
        Order storage order,
        mapping(uint256 => PositionRecord) storage positions,
        uint32 epoch,
        uint32 id,
        uint256 key,
        uint256 hint
    ) internal {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint256 headKey = (uint256(epoch) << 24) | bucket;
        (uint32 prev, uint32 next) = _place(order, positions, epoch, id, key, hint);
        if (prev == 0) {
            if (next == 0) order.buckets.set(epoch, bucket);
            order.buckets.heads[headKey] = id;
        } else {
            positions[prev].next = id;
        }
        if (next != 0) positions[next].prev = id;
        PositionRecord storage position = positions[id];
        position.prev = prev;
        position.next = next;
        position.key = key;
    }

    /// @dev The neighbours `key` goes between: after every key under it, before the first at or
    /// above it (so among equal keys the newest is first).
    function _place(
        Order storage order,
        mapping(uint256 => PositionRecord) storage positions,
        uint32 epoch,
        uint32 id,
        uint256 key,
        uint256 hint
    ) private view returns (uint32 prev, uint32 next) {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint32 at = _filedBeside(positions, epoch, id, bucket, hint);
        if (at != 0) {
            PositionRecord storage near = positions[at];
            if (near.key >= key) {
                (prev, next) = (near.prev, at);
                while (prev != 0 && positions[prev].key >= key) (prev, next) = (positions[prev].prev, prev);
                return (prev, next);
            }
            (prev, next) = (at, near.next);
        }
        if (prev == 0) next = order.buckets.heads[(uint256(epoch) << 24) | bucket];
        while (next != 0 && positions[next].key < key) (prev, next) = (next, positions[next].next);
    }

    /// @dev Where `key` would be filed in `epoch`'s order were `id` not in it, walking from `from`
    /// (a position id, or 0 for the bucket's head) for at most `steps` positions: the riskier
    /// neighbour to pass as a hint (0: the bucket's head), and whether the walk got there. A view
    /// for callers to find their hint off chain, a bounded part at a time however crowded the bucket.
    function find(
        Order storage order,
        mapping(uint256 => PositionRecord) storage positions,
        uint32 epoch,
        uint32 id,
        uint256 key,
        uint256 from,
        uint256 steps
    ) internal view returns (uint32 prev, bool found) {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint32 next;
        uint32 at = _filedBeside(positions, epoch, id, bucket, from);
        if (at != 0 && positions[at].key < key) (prev, next) = (at, positions[at].next);
        if (prev == 0) next = order.buckets.heads[(uint256(epoch) << 24) | bucket];
        for (uint256 walked = 0; next != 0; ++walked) {
            if (next == id) {
                next = positions[id].next;
                continue;
            }
            if (positions[next].key >= key) return (prev, true);
            if (walked == steps) return (prev, false);
            (prev, next) = (next, positions[next].next);
        }
        return (prev, true);
    }

    /// @dev `hint` as a position id when it is another position than `id` filed in `bucket` of `epoch`'s
    /// order, else 0. Debt stored in the current epoch means filed in its order; `id` itself is left
    /// out, as a write has just taken it out of the order while its record still reads so.
    function _filedBeside(
        mapping(uint256 => PositionRecord) storage positions,
        uint32 epoch,
        uint32 id,
        uint256 bucket,
        uint256 hint
    ) private view returns (uint32) {
        if (hint == 0 || hint == id || hint > type(uint32).max) return 0;
        PositionRecord storage near = positions[hint];
        if (near.debt == 0 || near.epoch != epoch || RatioBuckets.bucketOf(near.key) != bucket) return 0;
        // Checked above: a uint32 position id.
        // forge-lint: disable-next-line(unsafe-typecast)
        return uint32(hint);
    }

    /// @dev Takes `position` out of the order of the epoch it was filed in.
    function remove(
        Order storage order,
        mapping(uint256 => PositionRecord) storage positions,
        PositionRecord storage position
    ) internal {
        (uint32 prev, uint32 next) = (position.prev, position.next);
        if (next != 0) positions[next].prev = prev;
        if (prev != 0) {
            positions[prev].next = next;
        } else {
            uint32 e = position.epoch;
            uint256 bucket = RatioBuckets.bucketOf(position.key);
            order.buckets.heads[(uint256(e) << 24) | bucket] = next;
            if (next == 0) order.buckets.unset(e, bucket);
        }
    }

    /// @dev The riskiest position filed in `epoch`, or 0 when none is.
    function first(Order storage order, uint32 epoch) internal view returns (uint32) {
        uint256 bucket = order.buckets.nextSet(epoch, 0);
        if (bucket == RatioBuckets.NONE) return 0;
        return order.buckets.heads[(uint256(epoch) << 24) | bucket];
    }
}
