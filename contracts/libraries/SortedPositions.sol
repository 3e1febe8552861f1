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

    /// @dev Files `id` under `key` in `epoch`'s order: it walks the bucket's list to its place.
    function insert(
        Order storage order,
        mapping(uint256 => PositionRecord) storage positions,
        uint32 epoch,
        uint32 id,
        uint256 key
    ) internal {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint256 headKey = (uint256(epoch) << 24) | bucket;
        uint32 prev;
        uint32 next = order.buckets.heads[headKey];
        while (next != 0 && positions[next].key < key) {
            prev = next;
            next = positions[next].next;
        }
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
