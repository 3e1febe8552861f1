// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AggregatorV3Interface} from "./AggregatorV3Interface.sol";
import {IGovernedParameters} from "./IGovernedParameters.sol";

/// @title The one ZEC/USD price every mint, redemption, liquidation and redistribution is judged at.
/// @notice Two independent Chainlink-compatible feeds (8 decimals): a primary and a second one. A
/// feed that does not answer, answers zero, a negative or an absurd number, is older than
/// `maxPriceAge` or dated in the future is broken; one whose answer moved more than `maxJumpBps`
/// from its previous round is suspect. A healthy primary gives the price. A suspect primary gives
/// way to the second when the second answers (healthy or itself suspect) within `maxDeviationBps` of
/// the primary: two independent feeds saw the same move. A broken primary gives way to a healthy
/// second whose answer is within `maxJumpBps` of the last good price. Otherwise the price is frozen:
/// the last good price stands, and the position manager refuses what a wrong price would let
/// someone take (see `IPositionManager`).
interface IPriceFeed is IGovernedParameters {
    /// @notice How a feed's latest round looks, best first.
    enum FeedCondition {
        Healthy,
        /// @dev Answered, fresh, but moved more than `maxJumpBps` from the round before.
        Suspect,
        /// @dev The call reverted, returned too little, or named round 0 or time 0.
        Unanswered,
        /// @dev Zero, negative, or beyond 128 bits.
        InvalidAnswer,
        /// @dev Dated after the current block.
        FutureTimestamp,
        /// @dev Older than `maxPriceAge`.
        Stale,
        /// @dev Not read: the primary was healthy, so the second was not asked.
        Unread
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
    /// @notice Deployment needs a price it can trust from the start.
    error NoTrustedPrice(FeedCondition primary, FeedCondition secondary);

    /// @notice The price moved to another source (or froze, or thawed); the feeds' conditions say why.
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
    /// Anyone may call it; the position manager calls it on every action that moves value.
    /// @return price The price (the last good one when `source` is `LastGood`).
    /// @return updatedAt When the feed that gave it dated it.
    /// @return source Where it came from.
    function fetchPrice() external returns (uint256 price, uint256 updatedAt, PriceSource source);

    /// @notice What `fetchPrice` would return now, without recording it.
    function peekPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source);

    /// @notice How `feed` looks now under this contract's bounds, and its latest answer (0 if none).
    function feedCondition(AggregatorV3Interface feed) external view returns (FeedCondition, uint256 answer);

    /// @notice The last price recorded from a trusted source, when its feed dated it, and the source
    /// recorded last (`LastGood` while frozen, once a fetch has recorded it).
    function lastGoodPrice() external view returns (uint256 price, uint256 updatedAt, PriceSource source);

    function primaryFeed() external view returns (AggregatorV3Interface);

    function secondaryFeed() external view returns (AggregatorV3Interface);

    /// @notice How old, in seconds, a feed's answer may be before the feed counts as broken.
    function maxPriceAge() external view returns (uint256);

    /// @notice How far (basis points of the smaller) a round may move from the previous one before it is suspect.
    function maxJumpBps() external view returns (uint256);

    /// @notice How far apart (basis points of the smaller) the two feeds may be and still agree.
    function maxDeviationBps() external view returns (uint256);

    /// @notice Points the price at two other feeds (8 decimals, distinct). Admin (timelock) only.
    function setFeeds(address primary, address secondary) external;

    /// @notice Sets how old a feed's answer may be, in seconds (1 minute to 7 days). Admin (timelock) only.
    function setMaxPriceAge(uint256 newMaxPriceAge) external;

    /// @notice Sets the largest move between rounds that is not suspect (1% to 1,000%). Admin (timelock) only.
    function setMaxJump(uint256 newMaxJumpBps) external;

    /// @notice Sets how far apart the feeds may be and agree (0.1% to 20%). Admin (timelock) only.
    function setMaxDeviation(uint256 newMaxDeviationBps) external;
}
