// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Calls a signer authorises with an EIP-712 signature that anyone may carry.
/// @notice Every `*WithSig` call and the redeem permit refuse a bad signature with one pair of errors,
/// and a breached bound with another. A value-moving signature carries the bounds its signer accepts
/// (the least ZEC out, the most debt burned), as a DEX router's amount-out minimum does: whoever
/// carries it cannot send it at a worse moment (after a price fall, a redistribution onto the
/// position or a redemption) than the signer agreed to.
interface ISignedCalls {
    /// @notice The signature's deadline has passed.
    error SignatureExpired(uint256 deadline);
    /// @notice The signature is not `signer`'s for this call (wrong signer, data, nonce, chain or contract).
    error InvalidSignature(address signer);
    /// @notice The call would pay `zatOut` zatoshi, under the `minZatOut` its signer accepts; nothing moved.
    error ZatOutBelowMinimum(uint256 zatOut, uint256 minZatOut);
    /// @notice The call would burn `debt` of ZSD, above the `maxDebt` its signer accepts; nothing moved.
    error DebtAboveMaximum(uint256 debt, uint256 maxDebt);

    /// @notice The next signature nonce of `signer`: each signed call uses one, in order.
    function nonces(address signer) external view returns (uint256);
}
