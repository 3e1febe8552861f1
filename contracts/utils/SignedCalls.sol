// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {ISignedCalls} from "../interfaces/ISignedCalls.sol";

/// @title The one signature check of every signed call: EIP-712 typed data, a deadline, a nonce.
/// @dev The struct hash a caller builds must include `_useNonce(signer)`, so that a signature
/// moves value once and a later one of the same signer cannot be sent before an earlier one.
abstract contract SignedCalls is ISignedCalls, EIP712, Nonces {
    constructor(string memory name, string memory version) EIP712(name, version) {}

    /// @inheritdoc ISignedCalls
    function nonces(address signer) public view override(ISignedCalls, Nonces) returns (uint256) {
        return super.nonces(signer);
    }

    /// @dev Reverts unless `signature` is `signer`'s over `structHash` in this contract's domain and
    /// `deadline` has not passed.
    function _checkSignature(
        address signer,
        uint256 deadline,
        bytes32 structHash,
        bytes memory signature
    ) internal view {
        // A deadline: a block producer's few seconds of skew gain nothing.
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        // SignatureChecker also accepts ERC-1271 smart-contract wallets.
        if (!SignatureChecker.isValidSignatureNow(signer, _hashTypedDataV4(structHash), signature)) {
            revert InvalidSignature(signer);
        }
    }

    /// @dev Reverts unless the call pays at least the signed `minZatOut` and burns at most the signed
    /// `maxDebt`. Called after the state change it bounds, so that a breach reverts all of it.
    function _checkBounds(uint256 zatOut, uint256 minZatOut, uint256 debt, uint256 maxDebt) internal pure {
        if (zatOut < minZatOut) revert ZatOutBelowMinimum(zatOut, minZatOut);
        if (debt > maxDebt) revert DebtAboveMaximum(debt, maxDebt);
    }
}
