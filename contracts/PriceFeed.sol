// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {AggregatorV3Interface} from "./interfaces/AggregatorV3Interface.sol";
import {IPriceFeed} from "./interfaces/IPriceFeed.sol";

/// @title ZEC/USD from two independent feeds, with a last good price for when neither can be trusted.
/// @notice Shaped like Liquity v1's PriceFeed (Chainlink falling back to Tellor). Three differences,
/// each on purpose:
/// - The decision is made afresh on every read from what the feeds say now and the last good price;
///   no status machine is kept. A primary coming back is trusted only if its round does not jump
///   from the one before (the last it gave before it broke, or, when that round cannot be read, the
///   last good price), so a primary that returns with a different price needs the second's word.
/// - A suspect primary (a jump) is confirmed, not replaced: the second must agree with it. If two
///   independent feeds disagree after one of them jumped, nothing says which is right, and acting
///   on either lets whoever controls one of them choose the price.
/// - A broken primary falls back to a healthy second only if the second is within a jump of the
///   last good price: a second feed that is silently wrong (another pair, another scale) is caught
///   the moment it would take over, not after it has priced the system.
/// Feeds are read with a bare staticcall, so a feed that reverts or returns malformed data counts
/// as broken instead of reverting every caller. A feed that burns all gas still reverts the caller.
contract PriceFeed is IPriceFeed, AccessControl {
    uint8 private constant PRICE_DECIMALS = 8;
    uint256 private constant BPS = 10_000;
    uint256 private constant MIN_PRICE_AGE = 1 minutes;
    uint256 private constant MAX_PRICE_AGE = 7 days;
    uint256 private constant MIN_JUMP_BPS = 100;
    uint256 private constant MAX_JUMP_BPS = 100_000;
    uint256 private constant MIN_DEVIATION_BPS = 10;
    uint256 private constant MAX_DEVIATION_BPS = 2_000;
    /// @dev latestRoundData and getRoundData answer five words.
    uint256 private constant ROUND_BYTES = 160;

    /// @dev What every read needs, in one slot: the primary and the three bounds.
    struct Config {
        AggregatorV3Interface primary;
        uint32 maxPriceAge;
        uint32 maxJumpBps;
        uint32 maxDeviationBps;
    }

    /// @dev The last good price and the source recorded last, in one slot, written only when one changes.
    struct Last {
        uint128 price;
        uint64 updatedAt;
        PriceSource source;
    }

    /// @dev One feed's latest round as judged now. `answer` is 0 unless positive and within 128 bits.
    struct Reading {
        FeedCondition condition;
        uint256 answer;
        uint256 updatedAt;
    }

    Config private _config;
    /// @dev Apart from the config: read only when the primary is not healthy.
    AggregatorV3Interface private _secondary;
    Last private _last;

    /// @param admin Holds DEFAULT_ADMIN_ROLE (governance's timelock once deployment hands it over).
    /// @param maxJumpBps_ Liquity v1 uses 50% between Chainlink rounds; ZEC moves more than ETH, so
    /// deployments pick their own.
    constructor(
        address admin,
        address primary,
        address secondary,
        uint256 maxPriceAge_,
        uint256 maxJumpBps_,
        uint256 maxDeviationBps_
    ) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _setFeeds(primary, secondary);
        _setMaxPriceAge(maxPriceAge_);
        _setMaxJump(maxJumpBps_);
        _setMaxDeviation(maxDeviationBps_);
        (, , PriceSource source) = _fetch();
        // Frozen from the start would mean a last good price of zero: no price at all.
        if (source == PriceSource.LastGood) {
            Reading memory p = _read(_config.primary, 0);
            revert NoTrustedPrice(p.condition, _read(_secondary, 0).condition);
        }
    }

    // ---------------------------------------------------------------- price

    /// @inheritdoc IPriceFeed
    function fetchPrice() external returns (uint256 price, uint256 updatedAt, PriceSource source) {
        return _fetch();
    }

    /// @inheritdoc IPriceFeed
    function peekPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source) {
        Last memory last = _last;
        (price, updatedAt, source, , ) = _decide(last.price, last.updatedAt);
    }

    /// @inheritdoc IPriceFeed
    function feedCondition(AggregatorV3Interface feed) external view returns (FeedCondition, uint256 answer) {
        Reading memory r = _read(feed, _last.price);
        return (r.condition, r.answer);
    }

    /// @inheritdoc IPriceFeed
    function lastGoodPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source) {
        Last memory last = _last;
        return (last.price, last.updatedAt, last.source);
    }

    /// @inheritdoc IPriceFeed
    function primaryFeed() external view returns (AggregatorV3Interface) {
        return _config.primary;
    }

    /// @inheritdoc IPriceFeed
    function secondaryFeed() external view returns (AggregatorV3Interface) {
        return _secondary;
    }

    /// @inheritdoc IPriceFeed
    function maxPriceAge() external view returns (uint256) {
        return _config.maxPriceAge;
    }

    /// @inheritdoc IPriceFeed
    function maxJumpBps() external view returns (uint256) {
        return _config.maxJumpBps;
    }

    /// @inheritdoc IPriceFeed
    function maxDeviationBps() external view returns (uint256) {
        return _config.maxDeviationBps;
    }

    // ----------------------------------------------------------- governance

    /// @inheritdoc IPriceFeed
    /// @dev The last good price stays: the new feeds are judged against it like the old ones.
    function setFeeds(address primary, address secondary) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setFeeds(primary, secondary);
    }

    /// @inheritdoc IPriceFeed
    function setMaxPriceAge(uint256 newMaxPriceAge) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxPriceAge(newMaxPriceAge);
    }

    /// @inheritdoc IPriceFeed
    function setMaxJump(uint256 newMaxJumpBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxJump(newMaxJumpBps);
    }

    /// @inheritdoc IPriceFeed
    function setMaxDeviation(uint256 newMaxDeviationBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxDeviation(newMaxDeviationBps);
    }

    // ------------------------------------------------------------- internal

    function _fetch() private returns (uint256 price, uint256 updatedAt, PriceSource source) {
        Last memory last = _last;
        FeedCondition primary;
        FeedCondition secondary;
        (price, updatedAt, source, primary, secondary) = _decide(last.price, last.updatedAt);
        if (source != last.source) emit PriceSourceChanged(last.source, source, primary, secondary);
        if (price != last.price || updatedAt != last.updatedAt || source != last.source) {
            // A price is a feed's answer within 128 bits, and its date at most this block's (_read).
            // forge-lint: disable-next-line(unsafe-typecast)
            _last = Last(uint128(price), uint64(updatedAt), source);
        }
    }

    /// @dev The decision table (see the contract's notice). Frozen, it returns the last good price.
    function _decide(
        uint256 lastPrice,
        uint256 lastUpdatedAt
    )
        private
        view
        returns (uint256 price, uint256 updatedAt, PriceSource source, FeedCondition primary, FeedCondition secondary)
    {
        Config memory config = _config;
        Reading memory p = _read(config.primary, lastPrice);
        if (p.condition == FeedCondition.Healthy) {
            return (p.answer, p.updatedAt, PriceSource.Primary, FeedCondition.Healthy, FeedCondition.Unread);
        }
        Reading memory q = _read(_secondary, lastPrice);
        bool second =
            p.condition == FeedCondition.Suspect
                ? (q.condition == FeedCondition.Healthy || q.condition == FeedCondition.Suspect) &&
                    _within(p.answer, q.answer, config.maxDeviationBps)
                : q.condition == FeedCondition.Healthy &&
                    (lastPrice == 0 || _within(q.answer, lastPrice, config.maxJumpBps));
        if (second) return (q.answer, q.updatedAt, PriceSource.Secondary, p.condition, q.condition);
        return (lastPrice, lastUpdatedAt, PriceSource.LastGood, p.condition, q.condition);
    }

    /// @dev Judges a feed's latest round. The jump is measured from the round before; when that one
    /// cannot be read (a feed's first round, a history the feed no longer serves) or is itself
    /// unusable, from the last good price, and not at all before there is one.
    function _read(AggregatorV3Interface feed, uint256 lastPrice) private view returns (Reading memory r) {
        (bool ok, uint256 roundId, int256 answer, uint256 updatedAt) = _round(feed, false, 0);
        if (!ok || roundId == 0 || roundId > type(uint80).max || updatedAt == 0) {
            r.condition = FeedCondition.Unanswered;
            return r;
        }
        if (answer <= 0 || answer > int256(uint256(type(uint128).max))) {
            r.condition = FeedCondition.InvalidAnswer;
            return r;
        }
        // Positive and within 128 bits, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        r.answer = uint256(answer);
        r.updatedAt = updatedAt;
        // An age: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        if (updatedAt > block.timestamp) {
            r.condition = FeedCondition.FutureTimestamp;
            // forge-lint: disable-next-line(block-timestamp)
        } else if (block.timestamp - updatedAt > _config.maxPriceAge) {
            r.condition = FeedCondition.Stale;
        } else {
            uint256 from = lastPrice;
            (bool okBefore, , int256 before, ) = _round(feed, true, roundId - 1);
            if (okBefore && before > 0 && before <= int256(uint256(type(uint128).max))) {
                // Positive and within 128 bits, checked above.
                // forge-lint: disable-next-line(unsafe-typecast)
                from = uint256(before);
            }
            bool jumped = from != 0 && !_within(r.answer, from, _config.maxJumpBps);
            r.condition = jumped ? FeedCondition.Suspect : FeedCondition.Healthy;
        }
    }

    /// @dev `latestRoundData()` or `getRoundData(roundId)` by a bare staticcall: `ok` is false when
    /// the call reverts or returns fewer than five words; extra return data is never copied.
    function _round(
        AggregatorV3Interface feed,
        bool byId,
        uint256 roundId
    ) private view returns (bool ok, uint256 id, int256 answer, uint256 updatedAt) {
        bytes4 selector =
            byId ? AggregatorV3Interface.getRoundData.selector : AggregatorV3Interface.latestRoundData.selector;
        uint256 size = byId ? 36 : 4;
        // Solidity's own call copies all return data (a feed could return megabytes) and reverts the
        // caller on a malformed answer: five words are read by hand instead.
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            mstore(ptr, selector)
            mstore(add(ptr, 4), roundId)
            ok := staticcall(gas(), feed, ptr, size, ptr, ROUND_BYTES)
            if lt(returndatasize(), ROUND_BYTES) {
                ok := 0
            }
            if ok {
                id := mload(ptr)
                answer := mload(add(ptr, 32))
                updatedAt := mload(add(ptr, 96))
            }
        }
    }

    /// @dev Whether a and b are within `bps` of the smaller of the two (false when either is 0).
    function _within(uint256 a, uint256 b, uint256 bps) private pure returns (bool) {
        (uint256 hi, uint256 lo) = a > b ? (a, b) : (b, a);
        return lo != 0 && (hi - lo) * BPS <= bps * lo;
    }

    function _setFeeds(address primary, address secondary) private {
        _checkFeed(primary);
        _checkFeed(secondary);
        // The same feed twice is one source, not two.
        if (primary == secondary) revert InvalidFeed(secondary);
        emit FeedsChanged(address(_config.primary), address(_secondary), primary, secondary);
        _config.primary = AggregatorV3Interface(primary);
        _secondary = AggregatorV3Interface(secondary);
    }

    function _checkFeed(address feed) private view {
        if (feed.code.length == 0) revert InvalidFeed(feed);
        try AggregatorV3Interface(feed).decimals() returns (uint8 decimals_) {
            if (decimals_ != PRICE_DECIMALS) revert InvalidFeed(feed);
        } catch {
            revert InvalidFeed(feed);
        }
    }

    function _setMaxPriceAge(uint256 value) private {
        if (value < MIN_PRICE_AGE || value > MAX_PRICE_AGE) revert InvalidParameter("maxPriceAge", value);
        emit ParameterUpdated("maxPriceAge", _config.maxPriceAge, value);
        // At most 7 days, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.maxPriceAge = uint32(value);
    }

    function _setMaxJump(uint256 value) private {
        if (value < MIN_JUMP_BPS || value > MAX_JUMP_BPS) revert InvalidParameter("maxJumpBps", value);
        emit ParameterUpdated("maxJumpBps", _config.maxJumpBps, value);
        // At most 100,000, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.maxJumpBps = uint32(value);
    }

    function _setMaxDeviation(uint256 value) private {
        if (value < MIN_DEVIATION_BPS || value > MAX_DEVIATION_BPS) revert InvalidParameter("maxDeviationBps", value);
        emit ParameterUpdated("maxDeviationBps", _config.maxDeviationBps, value);
        // At most 2,000, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.maxDeviationBps = uint32(value);
    }
}
