// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPriceConsumer} from "./IPriceConsumer.sol";

/// @title Mints the stable token against a zero-knowledge proof of attested ZEC collateral.
/// @notice Public signals of the collateral proof, in this order (the single
/// definition that the circuit, the SDK and the tests follow):
///   0 `root`                the deposit tree root the proof was made against
///   1 `nullifierHash`       Poseidon(nullifierSecret, leaf), spent once
///   2 `collateralFloorZat`  lower bound on the deposit, in zatoshi (< 2^64)
///   3 `bindingHash`         `bindingHash(recipient, relayer, fee, mintAmount)`;
///                           the recipient, relayer, fee and amount reach the proof
///                           through this one input (one elliptic-curve
///                           multiplication instead of four in the verifier)
interface IStableMinter is IPriceConsumer {
    /// @notice A Groth16 proof in the layout of the snarkjs verifier.
    struct Proof {
        uint256[2] a;
        uint256[2][2] b;
        uint256[2] c;
    }

    /// @notice What a mint claims; every field is bound by the proof.
    struct MintRequest {
        uint256 root;
        uint256 nullifierHash;
        uint256 collateralFloorZat;
        uint256 mintAmount;
        address recipient;
        address relayer;
        uint256 fee;
    }

    error InvalidProof();
    error NullifierAlreadySpent(uint256 nullifierHash);
    error UnknownRoot(uint256 root);
    error RootExpired(uint256 root, uint256 supersededAt, uint256 maxRootAge);
    error InvalidMintAmount(uint256 mintAmount);
    error InvalidRecipient(address recipient);
    error FeeExceedsAmount(uint256 fee, uint256 mintAmount);
    error MissingRelayer(uint256 fee);
    /// @notice `collateralFloorZat * price` does not cover `mintAmount * minCollateralRatio`.
    error InsufficientCollateralValue(uint256 collateralValueUsd, uint256 requiredValueUsd);

    /// @notice Tokens were minted against the deposit behind `nullifierHash`.
    event Minted(
        uint256 indexed nullifierHash,
        address indexed recipient,
        address indexed relayer,
        uint256 mintAmount,
        uint256 fee,
        uint256 collateralFloorZat,
        uint256 root
    );

    /// @notice Verifies the collateral proof and mints `mintAmount - fee` to
    /// `recipient` and `fee` to `relayer`. Anyone may submit; the proof decides.
    function mint(Proof calldata proof, MintRequest calldata request) external;

    /// @notice The public input that binds recipient, relayer, fee and amount:
    /// `uint256(keccak256(abi.encode(chainid, minter, recipient, relayer, fee, mintAmount))) % p`.
    function bindingHash(
        address recipient,
        address relayer,
        uint256 fee,
        uint256 mintAmount
    ) external view returns (uint256);

    /// @notice Whether the nullifier has already backed a mint.
    function isSpent(uint256 nullifierHash) external view returns (bool);

    /// @notice Minimum collateral ratio in basis points.
    function minCollateralRatioBps() external view returns (uint256);

    /// @notice How long, in seconds, a replaced root stays usable for proofs.
    function maxRootAge() external view returns (uint256);

    /// @notice Sets the minimum collateral ratio in basis points (15000 = 150%). Admin (timelock) only.
    function setMinCollateralRatio(uint256 ratioBps) external;

    /// @notice Sets how long a replaced root stays usable, in seconds. Admin (timelock) only.
    function setMaxRootAge(uint256 maxRootAge) external;

    /// @notice Stops minting. Pause-guardian role.
    function pause() external;

    /// @notice Resumes minting. Pause-guardian role.
    function unpause() external;
}
