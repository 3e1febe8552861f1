// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {AggregatorV3Interface} from "./interfaces/AggregatorV3Interface.sol";
import {IPriceConsumer} from "./interfaces/IPriceConsumer.sol";

/// @dev Shared by the minter and redemptions: the feed address and its staleness
/// bound share one storage slot, so a price read costs one SLOAD here.
abstract contract PriceConsumer is IPriceConsumer, AccessControl {
    uint8 internal constant PRICE_DECIMALS = 8;
    uint256 internal constant MIN_PRICE_AGE = 1 minutes;
    uint256 internal constant MAX_PRICE_AGE = 7 days;

    AggregatorV3Interface private _oracle;
    uint32 private _maxPriceAge;

    constructor(address oracle_, uint256 maxPriceAge_) {
        _setOracle(oracle_);
        _setMaxPriceAge(maxPriceAge_);
    }

    /// @inheritdoc IPriceConsumer
    function oracle() public view returns (AggregatorV3Interface) {
        return _oracle;
    }

    /// @inheritdoc IPriceConsumer
    function maxPriceAge() public view returns (uint256) {
        return _maxPriceAge;
    }

    /// @inheritdoc IPriceConsumer
    function setOracle(address newOracle) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setOracle(newOracle);
    }

    /// @inheritdoc IPriceConsumer
    function setMaxPriceAge(uint256 newMaxPriceAge) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxPriceAge(newMaxPriceAge);
    }

    /// @dev The latest answer (USD per ZEC × 1e8), refusing non-positive and stale ones.
    function _latestPrice() internal view returns (uint256) {
        (, int256 answer, , uint256 updatedAt, ) = _oracle.latestRoundData();
        if (answer <= 0) revert InvalidPrice(answer);
        uint256 maxAge = _maxPriceAge;
        // An age: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp > updatedAt + maxAge) revert StalePrice(updatedAt, maxAge);
        // Positive, checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        return uint256(answer);
    }

    function _setOracle(address newOracle) private {
        if (newOracle.code.length == 0) revert InvalidOracle(newOracle);
        if (AggregatorV3Interface(newOracle).decimals() != PRICE_DECIMALS) revert InvalidOracle(newOracle);
        emit OracleUpdated(address(_oracle), newOracle);
        _oracle = AggregatorV3Interface(newOracle);
    }

    function _setMaxPriceAge(uint256 newMaxPriceAge) private {
        if (newMaxPriceAge < MIN_PRICE_AGE || newMaxPriceAge > MAX_PRICE_AGE) {
            revert InvalidParameter("maxPriceAge", newMaxPriceAge);
        }
        emit ParameterUpdated("maxPriceAge", _maxPriceAge, newMaxPriceAge);
        // At most MAX_PRICE_AGE (7 days), checked above.
        // forge-lint: disable-next-line(unsafe-typecast)
        _maxPriceAge = uint32(newMaxPriceAge);
    }
}
