// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The function of the snarkjs-generated verifier (contracts/verifiers/Groth16Verifier.sol).
interface IGroth16Verifier {
    function verifyProof(
        uint256[2] calldata a,
        uint256[2][2] calldata b,
        uint256[2] calldata c,
        uint256[5] calldata publicSignals
    ) external view returns (bool);
}
