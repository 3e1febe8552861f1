// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Calls a signer authorises with an EIP-712 signature that anyone may carry.
/// @notice Every `*WithSig` call and the redeem permit refuse with this one pair of errors.
interface ISignedCalls {
    /// @notice The signature's deadline has passed.
    error SignatureExpired(uint256 deadline);
    /// @notice The signature is not `signer`'s for this call (wrong signer, data, nonce, chain or contract).
    error InvalidSignature(address signer);

    /// @notice The next signature nonce of `signer`: each signed call uses one, in order.
    function nonces(address signer) external view returns (uint256);
}
