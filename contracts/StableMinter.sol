// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {SNARK_SCALAR_FIELD} from "@zk-kit/lean-imt.sol/Constants.sol";
import {ICollateralRegistry} from "./interfaces/ICollateralRegistry.sol";
import {IGroth16Verifier} from "./interfaces/IGroth16Verifier.sol";
import {IStableMinter} from "./interfaces/IStableMinter.sol";
import {IStableToken} from "./interfaces/IStableToken.sol";
import {PriceConsumer} from "./PriceConsumer.sol";

/// @title Mints the stable token against a zero-knowledge proof of attested ZEC.
/// @notice One deposit leaf backs one mint: its nullifier is spent here.
contract StableMinter is IStableMinter, Pausable, PriceConsumer {
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    uint256 private constant BPS = 10_000;
    /// @dev zatoshi × (USD × 1e8 per ZEC) × 100 = USD with 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;
    uint256 private constant MAX_RATIO_BPS = 100_000;
    uint256 private constant MAX_ROOT_AGE = 30 days;

    IStableToken public immutable token;
    ICollateralRegistry public immutable registry;
    IGroth16Verifier public immutable verifier;

    // Packed with the oracle address and maxPriceAge of PriceConsumer: a mint
    // reads all of its parameters in one SLOAD.
    uint32 private _minCollateralRatioBps;
    uint32 private _maxRootAge;

    mapping(uint256 nullifierHash => bool) private _spent;

    constructor(
        address admin,
        address pauser,
        IStableToken token_,
        ICollateralRegistry registry_,
        IGroth16Verifier verifier_,
        address oracle_,
        uint256 maxPriceAge_,
        uint256 minCollateralRatioBps_,
        uint256 maxRootAge_
    ) PriceConsumer(oracle_, maxPriceAge_) {
        token = token_;
        registry = registry_;
        verifier = verifier_;
        _setMinCollateralRatio(minCollateralRatioBps_);
        _setMaxRootAge(maxRootAge_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(PAUSER_ROLE, pauser);
    }

    /// @inheritdoc IStableMinter
    function mint(Proof calldata proof, MintRequest calldata request) external whenNotPaused {
        uint256 mintAmount = request.mintAmount;
        if (mintAmount == 0 || mintAmount > type(uint128).max) revert InvalidMintAmount(mintAmount);
        if (request.recipient == address(0)) revert InvalidRecipient(address(0));
        if (request.fee > mintAmount) revert FeeExceedsAmount(request.fee, mintAmount);
        if (request.fee != 0 && request.relayer == address(0)) revert MissingRelayer(request.fee);
        if (_spent[request.nullifierHash]) revert NullifierAlreadySpent(request.nullifierHash);

        _checkRoot(request.root);
        _checkCollateral(request.collateralFloorZat, mintAmount);

        uint256 binding = bindingHash(request.recipient, request.relayer, request.fee, mintAmount);
        bool valid = verifier.verifyProof(
            proof.a,
            proof.b,
            proof.c,
            [request.root, request.nullifierHash, request.collateralFloorZat, binding]
        );
        if (!valid) revert InvalidProof();

        _spent[request.nullifierHash] = true;
        token.mint(request.recipient, mintAmount - request.fee);
        if (request.fee != 0) token.mint(request.relayer, request.fee);
        emit Minted(
            request.nullifierHash,
            request.recipient,
            request.relayer,
            mintAmount,
            request.fee,
            request.collateralFloorZat,
            request.root
        );
    }

    /// @inheritdoc IStableMinter
    function bindingHash(
        address recipient,
        address relayer,
        uint256 fee,
        uint256 mintAmount
    ) public view returns (uint256) {
        return
            uint256(keccak256(abi.encode(block.chainid, address(this), recipient, relayer, fee, mintAmount))) %
            SNARK_SCALAR_FIELD;
    }

    /// @inheritdoc IStableMinter
    function isSpent(uint256 nullifierHash) external view returns (bool) {
        return _spent[nullifierHash];
    }

    /// @inheritdoc IStableMinter
    function minCollateralRatioBps() external view returns (uint256) {
        return _minCollateralRatioBps;
    }

    /// @inheritdoc IStableMinter
    function maxRootAge() external view returns (uint256) {
        return _maxRootAge;
    }

    /// @inheritdoc IStableMinter
    function setMinCollateralRatio(uint256 ratioBps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMinCollateralRatio(ratioBps);
    }

    /// @inheritdoc IStableMinter
    function setMaxRootAge(uint256 newMaxRootAge) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setMaxRootAge(newMaxRootAge);
    }

    /// @inheritdoc IStableMinter
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc IStableMinter
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    /// @dev The freshness rule is the registry's (isValidRoot), also asked by
    /// the relay API; the second read only tells the two refusals apart.
    function _checkRoot(uint256 root) private view {
        if (registry.isValidRoot(root, _maxRootAge)) return;
        uint256 supersededAt = registry.rootSupersededAt(root);
        if (supersededAt == 0) revert UnknownRoot(root);
        revert RootExpired(root, supersededAt, _maxRootAge);
    }

    /// @dev floor × price × 100 is the USD value (18 decimals) of the proven
    /// collateral; it must cover mintAmount × ratio. floor < 2^64 (circuit),
    /// price < 2^128 and mintAmount < 2^128 keep both sides far from overflow.
    function _checkCollateral(uint256 collateralFloorZat, uint256 mintAmount) private view {
        uint256 value = collateralFloorZat * _latestPrice() * ZAT_PRICE_TO_USD18;
        uint256 required = (mintAmount * _minCollateralRatioBps) / BPS;
        if (value * BPS < mintAmount * _minCollateralRatioBps) revert InsufficientCollateralValue(value, required);
    }

    function _setMinCollateralRatio(uint256 ratioBps) private {
        if (ratioBps < BPS || ratioBps > MAX_RATIO_BPS) revert InvalidParameter("minCollateralRatioBps", ratioBps);
        emit ParameterUpdated("minCollateralRatioBps", _minCollateralRatioBps, ratioBps);
        _minCollateralRatioBps = uint32(ratioBps);
    }

    function _setMaxRootAge(uint256 newMaxRootAge) private {
        if (newMaxRootAge == 0 || newMaxRootAge > MAX_ROOT_AGE) revert InvalidParameter("maxRootAge", newMaxRootAge);
        emit ParameterUpdated("maxRootAge", _maxRootAge, newMaxRootAge);
        _maxRootAge = uint32(newMaxRootAge);
    }
}
