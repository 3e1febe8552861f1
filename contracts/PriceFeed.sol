// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {AggregatorV3Interface} from "./interfaces/AggregatorV3Interface.sol";
import {IPriceFeed} from "./interfaces/IPriceFeed.sol";

/// @title ZEC/USD from two independent feeds, with a last good price for when neither can be trusted.
/// @notice Shaped like Liquity v1's PriceFeed (Chainlink falling back to Tellor), and stricter in
/// three ways, each so that no single updater key sets the price:
/// - The second feed is read on every fetch, not only when the primary looks wrong: a primary that
///   passes every check of its own but disagrees with the second is not trusted alone (the price
///   freezes at the last good one, as Liquity's does while it trusts neither oracle). Judged by
///   itself, a feed cannot tell a real move from its updater's lie.
/// - A lone feed (the other broken) is bounded against a reference price its updater cannot reset:
///   the price both feeds last agreed on, or a last good price recorded at least a window earlier,
///   never the feed's previous round. Measured from the previous round, six rounds of +49% written
///   with fetches between (one block) move the price ~10×; measured from the reference, one key
///   moves it at most `maxJumpBps` a window.
/// - The decision is made afresh on every read from what the feeds say now, the last good price and
///   the reference; no status machine is kept.
/// See `IPriceFeed` for the table and what one key can do at worst. Feeds are read with a bare
/// staticcall, so a feed that reverts or returns malformed data counts as broken instead of
/// reverting every caller. A feed that burns all gas still reverts the caller.
contract PriceFeed is IPriceFeed, AccessControl {
    uint8 private constant PRICE_DECIMALS = 8;
    uint256 private constant BPS = 10_000;
    uint256 private constant MIN_PRICE_AGE = 1 minutes;
    uint256 private constant MAX_PRICE_AGE = 7 days;
    uint256 private constant MIN_JUMP_BPS = 100;
    uint256 private constant MAX_JUMP_BPS = 100_000;
    uint256 private constant MIN_DEVIATION_BPS = 10;
    uint256 private constant MAX_DEVIATION_BPS = 2_000;
    uint256 private constant MIN_REFERENCE_WINDOW = 10 minutes;
    uint256 private constant MAX_REFERENCE_WINDOW = 7 days;
    /// @dev latestRoundData answers five words.
    uint256 private constant ROUND_BYTES = 160;

    /// @dev What every read needs, in one slot: the primary and the four bounds (each under 2^24).
    struct Config {
        AggregatorV3Interface primary;
        uint24 maxPriceAge;
        uint24 maxJumpBps;
        uint24 maxDeviationBps;
        uint24 referenceWindow;
    }

    /// @dev The last good price, the source recorded last and when the running reference window
    /// began, in one slot, written only when one changes.
    struct Last {
        uint128 price;
        uint64 updatedAt;
        PriceSource source;
        uint48 pendingSince;
    }

    /// @dev The reference a lone feed is measured against, and the last good price that replaces it
    /// once the running window has passed.
    struct Reference {
        uint128 price;
        uint128 pending;
    }

    /// @dev One feed's latest round. `answer` is 0 unless positive and within 128 bits.
    struct Reading {
        FeedCondition condition;
        uint256 answer;
        uint256 updatedAt;
    }

    /// @dev What a fetch decides, and both feeds' conditions for the event that says why.
    struct Decision {
        uint256 price;
        uint256 updatedAt;
        PriceSource source;
        FeedCondition primary;
        FeedCondition secondary;
        /// @dev Both feeds answered and agreed: the price is theirs.
        bool agreed;
    }

    Config private _config;
    AggregatorV3Interface private _secondary;
    Last private _last;
    Reference private _reference;

    /// @param admin Holds DEFAULT_ADMIN_ROLE (governance's timelock once deployment hands it over).
    /// @param maxJumpBps_ How far a lone feed may move the price from the reference. Liquity v1
    /// uses 50% between Chainlink rounds; ZEC moves more than ETH, so deployments pick their own.
    /// @param referenceWindow_ How long a last good price waits before it becomes the reference: a
    /// lone feed walks the price by at most `maxJumpBps_` each such window.
    constructor(
        address admin,
        address primary,
        address secondary,
        uint256 maxPriceAge_,
        uint256 maxJumpBps_,
        uint256 maxDeviationBps_,
        uint256 referenceWindow_
    ) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _setFeeds(primary, secondary);
        _setMaxPriceAge(maxPriceAge_);
        _setMaxJump(maxJumpBps_);
        _setMaxDeviation(maxDeviationBps_);
        _setReferenceWindow(referenceWindow_);
        // No reference yet (zero: no lone feed is within reach of it), so only two agreeing feeds
        // give the first price; frozen from the start would mean a last good price of zero.
        // The first fetch also makes the agreed price the reference and begins the first window.
        (, , PriceSource source) = _fetch();
        if (source == PriceSource.LastGood) {
            Decision memory d = _decide(_config, 0);
            revert NoTrustedPrice(d.primary, d.secondary);
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
        (Decision memory d, , , ) = _decideNow(_config, last);
        if (d.source == PriceSource.LastGood) return (last.price, last.updatedAt, PriceSource.LastGood);
        return (d.price, d.updatedAt, d.source);
    }

    /// @inheritdoc IPriceFeed
    function feedCondition(AggregatorV3Interface feed) external view returns (FeedCondition, uint256 answer) {
        Config memory config = _config;
        (Reference memory ref, ) = _referenceNow(config, _last);
        Reading memory r = _read(feed, config.maxPriceAge);
        return (_reach(r, ref.price, config.maxJumpBps), r.answer);
    }

    /// @inheritdoc IPriceFeed
    function lastGoodPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source) {
        Last memory last = _last;
        return (last.price, last.updatedAt, last.source);
    }

    /// @inheritdoc IPriceFeed
    function referencePrice() external view returns (uint256 price, uint256 pending, uint256 pendingSince) {
        Last memory last = _last;
        (, Reference memory ref, , bool rolled) = _decideNow(_config, last);
        return (ref.price, ref.pending, rolled ? block.timestamp : last.pendingSince);
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

    /// @inheritdoc IPriceFeed
    function referenceWindow() external view returns (uint256) {
        return _config.referenceWindow;
    }

    // ----------------------------------------------------------- governance

    /// @inheritdoc IPriceFeed
    /// @dev The last good price and the reference stay: the new feeds are judged against them like
    /// the old ones.
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

    /// @inheritdoc IPriceFeed
    function setReferenceWindow(uint256 newReferenceWindow) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setReferenceWindow(newReferenceWindow);
    }

    // ------------------------------------------------------------- internal

    function _fetch() private returns (uint256 price, uint256 updatedAt, PriceSource source) {
        Last memory last = _last;
        (Decision memory d, Reference memory ref, bool referenceMoved, bool rolled) = _decideNow(_config, last);
        source = d.source;
        (price, updatedAt) = source == PriceSource.LastGood ? (last.price, last.updatedAt) : (d.price, d.updatedAt);
        if (source != last.source) emit PriceSourceChanged(last.source, source, d.primary, d.secondary);
        if (referenceMoved) _reference = ref;
        if (rolled) {
            // Seconds since 1970 fit 48 bits for nine million years.
            // forge-lint: disable-next-line(unsafe-typecast)
            last.pendingSince = uint48(block.timestamp);
        }
        if (rolled || price != last.price || updatedAt != last.updatedAt || source != last.source) {
            // A price is a feed's answer within 128 bits, and its date at most this block's (_read).
            // forge-lint: disable-next-line(unsafe-typecast)
            _last = Last(uint128(price), uint64(updatedAt), source, last.pendingSince);
        }
    }

    /// @dev What a fetch in this block decides, and the reference it leaves (`referenceMoved` when
    /// that differs from the stored one; `rolled` when a window ended).
    function _decideNow(
        Config memory config,
        Last memory last
    ) private view returns (Decision memory d, Reference memory ref, bool referenceMoved, bool rolled) {
        (ref, rolled) = _referenceNow(config, last);
        d = _decide(config, ref.price);
        referenceMoved = rolled;
        if (d.agreed && (ref.price != d.price || ref.pending != d.price)) {
            // Two independent feeds vouched for it, so no one updater made it: the reference at once.
            // Within 128 bits (_read).
            // forge-lint: disable-next-line(unsafe-typecast)
            ref = Reference(uint128(d.price), uint128(d.price));
            referenceMoved = true;
        }
    }

    /// @dev The reference as a fetch in this block sees it before deciding. Once a window has passed
    /// since the pending price was taken, it becomes the reference and the last good price as it
    /// stands becomes the pending one. Besides (in `_decideNow`), a price both feeds agree on becomes the
    /// reference and the pending one at once. So the reference is always a price two feeds agreed on
    /// or one the system had at least a window before, and a lone feed's updater cannot reset it by
    /// writing rounds and fetching between them: without the other feed it moves once a window.
    function _referenceNow(
        Config memory config,
        Last memory last
    ) private view returns (Reference memory ref, bool rolled) {
        ref = _reference;
        // A window of at least ten minutes: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp >= uint256(last.pendingSince) + config.referenceWindow) {
            ref = Reference(ref.pending, last.price);
            rolled = true;
        }
    }

    /// @dev The decision table of `IPriceFeed`, against `referencePrice_`. Frozen, the price is left to the
    /// caller (the last good one).
    function _decide(Config memory config, uint256 referencePrice_) private view returns (Decision memory d) {
        Reading memory p = _read(config.primary, config.maxPriceAge);
        Reading memory q = _read(_secondary, config.maxPriceAge);
        d.primary = _reach(p, referencePrice_, config.maxJumpBps);
        d.secondary = _reach(q, referencePrice_, config.maxJumpBps);
        bool pAnswers = p.condition == FeedCondition.Healthy;
        bool qAnswers = q.condition == FeedCondition.Healthy;
        d.source = PriceSource.LastGood;
        if (pAnswers && qAnswers) {
            // Both answer: they must agree, however far the market moved from the reference.
            if (_within(p.answer, q.answer, config.maxDeviationBps)) {
                (d.price, d.updatedAt, d.source, d.agreed) = (p.answer, p.updatedAt, PriceSource.Primary, true);
            }
        } else if (d.primary == FeedCondition.Healthy) {
            (d.price, d.updatedAt, d.source) = (p.answer, p.updatedAt, PriceSource.Primary);
        } else if (d.secondary == FeedCondition.Healthy) {
            (d.price, d.updatedAt, d.source) = (q.answer, q.updatedAt, PriceSource.Secondary);
        }
    }

    /// @dev An answering feed (`Healthy` from `_read`) is `Suspect` when beyond `maxJumpBps` of the
    /// reference, and always before there is one.
    function _reach(Reading memory r, uint256 referencePrice_, uint256 jumpBps) private pure returns (FeedCondition) {
        if (r.condition != FeedCondition.Healthy) return r.condition;
        return _within(r.answer, referencePrice_, jumpBps) ? FeedCondition.Healthy : FeedCondition.Suspect;
    }

    /// @dev Judges a feed's latest round by itself: `Healthy` here means answering (a positive answer
    /// within 128 bits, dated neither in the future nor more than `maxAge` ago).
    function _read(AggregatorV3Interface feed, uint256 maxAge) private view returns (Reading memory r) {
        (bool ok, uint256 roundId, int256 answer, uint256 updatedAt) = _latestRound(feed);
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
        } else if (block.timestamp - updatedAt > maxAge) {
            r.condition = FeedCondition.Stale;
        }
    }

    /// @dev `latestRoundData()` by a bare staticcall: `ok` is false when the call reverts or returns
    /// fewer than five words; extra return data is never copied.
    function _latestRound(
        AggregatorV3Interface feed
    ) private view returns (bool ok, uint256 id, int256 answer, uint256 updatedAt) {
        bytes4 selector = AggregatorV3Interface.latestRoundData.selector;
        // Solidity's own call copies all return data (a feed could return megabytes) and reverts the
        // caller on a malformed answer: five words are read by hand instead.
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            mstore(ptr, selector)
            ok := staticcall(gas(), feed, ptr, 4, ptr, ROUND_BYTES)
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
        _config.maxPriceAge = uint24(value);
    }

    function _setMaxJump(uint256 value) private {
        if (value < MIN_JUMP_BPS || value > MAX_JUMP_BPS) revert InvalidParameter("maxJumpBps", value);
        emit ParameterUpdated("maxJumpBps", _config.maxJumpBps, value);
        // At most 100,000, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.maxJumpBps = uint24(value);
    }

    function _setMaxDeviation(uint256 value) private {
        if (value < MIN_DEVIATION_BPS || value > MAX_DEVIATION_BPS) revert InvalidParameter("maxDeviationBps", value);
        emit ParameterUpdated("maxDeviationBps", _config.maxDeviationBps, value);
        // At most 2,000, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.maxDeviationBps = uint24(value);
    }

    function _setReferenceWindow(uint256 value) private {
        if (value < MIN_REFERENCE_WINDOW || value > MAX_REFERENCE_WINDOW) {
            revert InvalidParameter("referenceWindow", value);
        }
        emit ParameterUpdated("referenceWindow", _config.referenceWindow, value);
        // At most 7 days, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _config.referenceWindow = uint24(value);
    }
}
