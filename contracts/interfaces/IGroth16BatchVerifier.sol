// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice Checks many Groth16 proofs of the collateral circuit at once (contracts/verifiers/Groth16BatchVerifier.sol).
interface IGroth16BatchVerifier {
    /// @notice Whether every proof holds for its signals. A proof is
    /// a.x, a.y, b[0][0], b[0][1], b[1][0], b[1][1], c.x, c.y in the layout of
    /// the snarkjs verifier; the signals are in the circuit's order. False for
    /// an empty batch or arrays of different lengths.
    function verifyProofs(uint256[8][] calldata proofs, uint256[5][] calldata signals) external view returns (bool);

    /// @notice The coefficient of proof `index` in a batch whose proofs and signals hash to `seed`.
    function coefficient(bytes32 seed, uint256 index) external pure returns (uint256);
}
