// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title Positions ordered by collateral per debt, in 65,536 buckets per epoch.
/// @notice A redemption at par may only run when no position is under 100%,
/// and it must find those that are without walking every position. The order
/// of positions by collateral per unit of debt never changes under the
/// minter's proportional steps (redemptions and redistributions map every
/// ratio through the same increasing function), so each position is filed
/// once per write under a key in the epoch's first frame, and the lowest keys
/// are the riskiest positions. Buckets are 1/256 of an octave wide (0.27%);
/// a two-level bitmap finds the lowest non-empty bucket in two reads.
library RatioBuckets {
    /// @dev Bit w of `summary[epoch]`: word w of the epoch has a bucket set.
    struct Bitmap {
        mapping(uint256 epoch => uint256) summary;
        mapping(uint256 epochWord => uint256) words;
    }

    uint256 internal constant NONE = type(uint256).max;

    /// @notice The bucket of `key`: its octave (most significant bit) and
    /// the next 8 bits below it, so buckets are monotone in the key.
    function bucketOf(uint256 key) internal pure returns (uint16) {
        if (key == 0) return 0;
        uint256 msb = Math.log2(key);
        uint256 mantissa = msb >= 8 ? (key >> (msb - 8)) & 0xff : (key << (8 - msb)) & 0xff;
        return uint16((msb << 8) | mantissa);
    }

    function set(Bitmap storage map, uint32 epoch, uint16 bucket) internal {
        uint256 wordKey = (uint256(epoch) << 8) | (bucket >> 8);
        uint256 word = map.words[wordKey];
        if (word == 0) map.summary[epoch] |= 1 << (bucket >> 8);
        map.words[wordKey] = word | (1 << (bucket & 0xff));
    }

    function unset(Bitmap storage map, uint32 epoch, uint16 bucket) internal {
        uint256 wordKey = (uint256(epoch) << 8) | (bucket >> 8);
        uint256 word = map.words[wordKey] & ~(1 << (bucket & 0xff));
        map.words[wordKey] = word;
        if (word == 0) map.summary[epoch] &= ~(1 << (bucket >> 8));
    }

    /// @notice The lowest set bucket at or above `from`, or NONE.
    function nextSet(Bitmap storage map, uint32 epoch, uint256 from) internal view returns (uint256) {
        if (from > type(uint16).max) return NONE;
        uint256 wordIndex = from >> 8;
        uint256 word = map.words[(uint256(epoch) << 8) | wordIndex] & (type(uint256).max << (from & 0xff));
        if (word != 0) return (wordIndex << 8) | _lowestBit(word);
        if (wordIndex == 0xff) return NONE;
        uint256 summary = map.summary[epoch] & (type(uint256).max << (wordIndex + 1));
        if (summary == 0) return NONE;
        wordIndex = _lowestBit(summary);
        return (wordIndex << 8) | _lowestBit(map.words[(uint256(epoch) << 8) | wordIndex]);
    }

    function _lowestBit(uint256 value) private pure returns (uint256) {
        unchecked {
            return Math.log2(value & (~value + 1));
        }
    }
}
