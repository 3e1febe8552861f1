// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title Positions ordered by collateral per debt: exact keys, 2^24 buckets per epoch.
/// @notice A redemption at par may only run when no position is under 100%,
/// and it must find those that are without walking every position. The order
/// of positions by collateral per unit of debt never changes under the
/// minter's proportional steps (redemptions and redistributions map every
/// ratio through the same increasing function), so each position is filed
/// once per write under its key: its collateral per debt in the epoch's first
/// frame, a signed number encoded as a monotone uint256 (sign, decimal
/// exponent, 30 significant digits). The top 24 bits of a key are its bucket;
/// a three-level bitmap finds the lowest non-empty bucket, and within a bucket
/// the minter keeps its list sorted, so the positions can be walked riskiest
/// first and the walk stops at the first healthy one. Linked (its functions
/// are external) to keep the minter under the contract size limit.
library RatioBuckets {
    /// @dev Level 0: one word per epoch, a bit per level-1 word; level 1: 256
    /// words, a bit per leaf word; leaves: 65,536 words, a bit per bucket.
    /// `heads` holds the first position of each bucket's list (the minter keeps
    /// the lists), keyed `epoch << 24 | bucket`.
    struct Bitmap {
        mapping(uint256 epoch => uint256) top;
        mapping(uint256 epochWord => uint256) middle;
        mapping(uint256 epochWord => uint256) leaves;
        mapping(uint256 epochBucket => uint32) heads;
    }

    uint256 internal constant NONE = type(uint256).max;
    uint256 private constant ZERO_KEY = 1 << 255;
    uint256 private constant DIGITS = 30;
    uint256 private constant MANTISSA_SHIFT = 139;
    uint256 private constant EXPONENT_SHIFT = 239;
    uint256 private constant EXPONENT_BIAS = 1 << 14;

    /// @notice The key of `value`: monotone in it.
    function encode(int256 value) external pure returns (uint256) {
        if (value == 0) return ZERO_KEY;
        // Sign-checked: the cast keeps a positive value whole, and `-value` reverts at int256's minimum.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint256 magnitude = value > 0 ? uint256(value) : uint256(-value);
        uint256 digits = Math.log10(magnitude);
        // 30 significant digits: ties below that are far under a zatoshi.
        uint256 mantissa =
            digits >= DIGITS - 1
                ? magnitude / 10 ** (digits - (DIGITS - 1))
                : magnitude * 10 ** ((DIGITS - 1) - digits);
        // digits ≤ 77, so the exponent fits its 16 bits.
        uint256 exponent = digits + EXPONENT_BIAS;
        uint256 body = (exponent << EXPONENT_SHIFT) | (mantissa << MANTISSA_SHIFT);
        return value > 0 ? ZERO_KEY | body : ZERO_KEY - 1 - body;
    }

    function bucketOf(uint256 key) internal pure returns (uint256) {
        return key >> 232;
    }

    // `1 << x` is the bit for x: forge's incorrect-shift lint takes the literal on the left for
    // swapped arguments.
    // forge-lint: disable-start(incorrect-shift)
    function set(Bitmap storage map, uint32 epoch, uint256 bucket) external {
        uint256 e = uint256(epoch);
        uint256 leafKey = (e << 16) | (bucket >> 8);
        uint256 leaf = map.leaves[leafKey];
        if (leaf == 0) {
            uint256 middleKey = (e << 8) | (bucket >> 16);
            uint256 middle = map.middle[middleKey];
            if (middle == 0) map.top[e] |= 1 << (bucket >> 16);
            map.middle[middleKey] = middle | (1 << ((bucket >> 8) & 0xff));
        }
        map.leaves[leafKey] = leaf | (1 << (bucket & 0xff));
    }

    function unset(Bitmap storage map, uint32 epoch, uint256 bucket) external {
        uint256 e = uint256(epoch);
        uint256 leafKey = (e << 16) | (bucket >> 8);
        uint256 leaf = map.leaves[leafKey] & ~(1 << (bucket & 0xff));
        map.leaves[leafKey] = leaf;
        if (leaf != 0) return;
        uint256 middleKey = (e << 8) | (bucket >> 16);
        uint256 middle = map.middle[middleKey] & ~(1 << ((bucket >> 8) & 0xff));
        map.middle[middleKey] = middle;
        if (middle == 0) map.top[e] &= ~(1 << (bucket >> 16));
    }
    // forge-lint: disable-end(incorrect-shift)

    /// @notice The lowest set bucket at or above `from`, or NONE.
    function nextSet(Bitmap storage map, uint32 epoch, uint256 from) external view returns (uint256) {
        if (from >= 1 << 24) return NONE;
        uint256 e = uint256(epoch);
        uint256 leaf = map.leaves[(e << 16) | (from >> 8)] & (type(uint256).max << (from & 0xff));
        if (leaf != 0) return (from & ~uint256(0xff)) | _lowestBit(leaf);
        // The next leaf word with a bucket, in this middle word or a later one.
        uint256 leafIndex = from >> 8;
        if ((leafIndex & 0xff) != 0xff) {
            uint256 middle = map.middle[(e << 8) | (leafIndex >> 8)] & (type(uint256).max << ((leafIndex & 0xff) + 1));
            if (middle != 0) return _firstIn(map, e, ((leafIndex >> 8) << 8) | _lowestBit(middle));
        }
        uint256 middleIndex = leafIndex >> 8;
        if (middleIndex == 0xff) return NONE;
        uint256 top = map.top[e] & (type(uint256).max << (middleIndex + 1));
        if (top == 0) return NONE;
        middleIndex = _lowestBit(top);
        return _firstIn(map, e, (middleIndex << 8) | _lowestBit(map.middle[(e << 8) | middleIndex]));
    }

    function _firstIn(Bitmap storage map, uint256 e, uint256 leafIndex) private view returns (uint256) {
        return (leafIndex << 8) | _lowestBit(map.leaves[(e << 16) | leafIndex]);
    }

    function _lowestBit(uint256 value) private pure returns (uint256) {
        unchecked {
            return Math.log2(value & (~value + 1));
        }
    }
}
