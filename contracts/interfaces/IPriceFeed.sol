// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AggregatorV3Interface} from "./AggregatorV3Interface.sol";
import {IGovernedParameters} from "./IGovernedParameters.sol";

/// @title The one ZEC/USD price every mint, redemption, liquidation and redistribution is judged at.
/// @notice Two independent Chainlink-compatible feeds (8 decimals): a primary and a second one. A
/// feed that does not answer, answers zero, a negative or an absurd number, is older than
/// `maxPriceAge` or dated in the future is broken; the others answer. The price is:
/// - both answer, within `maxDeviationBps` of each other: the primary's answer (two independent
///   feeds saw the same market, however far it moved);
/// - both answer and disagree: frozen, since nothing says which one is right;
/// - one answers: its answer if it is within `maxJumpBps` of the reference price, frozen otherwise.
///   The reference is the price both feeds last agreed on; while they do not, it moves once every
///   `referenceWindow` seconds to a last good price recorded at least a window before;
/// - neither answers: frozen.
/// Frozen, the last good price stands and the position manager refuses what a wrong price would let
/// someone take (see `IPositionManager`).
///
/// What one updater key can do at worst, the other feed's key being honest: while the other feed
/// answers, set the price anywhere within `maxDeviationBps` of the other feed's answer, or freeze it
/// by disagreeing; while the other feed is broken, move the price at most `maxJumpBps` from the
/// reference, which it cannot reset: without the other feed's agreement the reference moves once a
/// window, to a price the system had a window before. So one key alone walks the price by at most
/// `maxJumpBps` a window, and only while the other feed stays broken. Two colluding updaters (or one
/// key holding both feeds) set any price: they agree.
interface IPriceFeed is IGovernedParameters {
    /// @notice How a feed's latest round looks, best first.
    enum FeedCondition {
        /// @dev Answered, fresh, and within `maxJumpBps` of the reference price.
        Healthy,
        /// @dev Answered and fresh, but more than `maxJumpBps` from the reference price: trusted only
        /// where the other feed agrees with it.
        Suspect,
        /// @dev The call reverted, returned too little, or named round 0 or time 0.
        Unanswered,
        /// @dev Zero, negative, or beyond 128 bits.
        InvalidAnswer,
        /// @dev Dated after the current block.
        FutureTimestamp,
        /// @dev Older than `maxPriceAge`.
        Stale
    }

    /// @notice Where the price came from.
    enum PriceSource {
        Primary,
        Secondary,
        /// @dev Neither feed can be trusted: the last good price, frozen.
        LastGood
    }

    /// @notice A feed must be a contract answering with 8 decimals, and the two feeds must differ.
    error InvalidFeed(address feed);
    /// @notice Deployment needs a price it can trust from the start: both feeds answering and agreeing.
    error NoTrustedPrice(FeedCondition primary, FeedCondition secondary);

    /// @notice The price moved to another source (or froze, or thawed); the feeds' conditions say why
    /// (both answering, `Healthy` or `Suspect`, and frozen: they disagree).
    event PriceSourceChanged(
        PriceSource indexed previous,
        PriceSource indexed current,
        FeedCondition primary,
        FeedCondition secondary
    );
    /// @notice Governance pointed the price at other feeds.
    event FeedsChanged(
        address indexed previousPrimary,
        address indexed previousSecondary,
        address indexed primary,
        address secondary
    );

    /// @notice The price (USD per ZEC × 1e8) as of now, recorded as the last good price unless frozen.
    /// Anyone may call it; the position manager calls it on every action that moves value. It also
    /// moves the reference on: to the price when both feeds agree, and once a window has passed, to
    /// the pending price.
    /// @return price The price (the last good one when `source` is `LastGood`).
    /// @return updatedAt When the feed that gave it dated it.
    /// @return source Where it came from.
    function fetchPrice() external returns (uint256 price, uint256 updatedAt, PriceSource source);

    /// @notice What `fetchPrice` would return now, without recording it.
    function peekPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source);

    /// @notice How `feed` looks now under this contract's bounds and reference, and its latest answer
    /// (0 if none).
    function feedCondition(AggregatorV3Interface feed) external view returns (FeedCondition, uint256 answer);

    /// @notice The last price recorded from a trusted source, when its feed dated it, and the source
    /// recorded last (`LastGood` while frozen, once a fetch has recorded it).
    function lastGoodPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source);

    /// @notice What a lone feed is measured against, as a fetch now would leave it.
    /// @return price The reference: the price both feeds last agreed on, or, once a window has passed
    /// without their agreeing, a last good price recorded at least `referenceWindow` earlier.
    /// @return pending The last good price taken when the window now running began (or the agreed
    /// price); it becomes the reference once the window has passed.
    /// @return pendingSince When that window began.
    function referencePrice() external view returns (uint256 price, uint256 pending, uint256 pendingSince);

    function primaryFeed() external view returns (AggregatorV3Interface);

    function secondaryFeed() external view returns (AggregatorV3Interface);

    /// @notice How old, in seconds, a feed's answer may be before the feed counts as broken.
    function maxPriceAge() external view returns (uint256);

    /// @notice How far (basis points of the smaller) a lone feed may be from the reference price.
    function maxJumpBps() external view returns (uint256);

    /// @notice How far apart (basis points of the smaller) the two feeds may be and still agree.
    function maxDeviationBps() external view returns (uint256);

    /// @notice How long, in seconds, a last good price waits before it becomes the reference.
    function referenceWindow() external view returns (uint256);

    /// @notice Points the price at two other feeds (8 decimals, distinct). Admin (timelock) only.
    function setFeeds(address primary, address secondary) external;

    /// @notice Sets how old a feed's answer may be, in seconds (1 minute to 7 days). Admin (timelock) only.
    function setMaxPriceAge(uint256 newMaxPriceAge) external;

    /// @notice Sets how far a lone feed may be from the reference (1% to 1,000%). Admin (timelock) only.
    function setMaxJump(uint256 newMaxJumpBps) external;

    /// @notice Sets how far apart the feeds may be and agree (0.1% to 20%). Admin (timelock) only.
    function setMaxDeviation(uint256 newMaxDeviationBps) external;

    /// @notice Sets how long a last good price waits before it becomes the reference (10 minutes to
    /// 7 days); the window now running ends that long after it began. Admin (timelock) only.
    function setReferenceWindow(uint256 newReferenceWindow) external;
}
