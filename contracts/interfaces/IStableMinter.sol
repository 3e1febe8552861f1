// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IGovernedParameters} from "./IGovernedParameters.sol";
import {IPositionManager} from "./IPositionManager.sol";
import {IRedemptions} from "./IRedemptions.sol";

/// @title Spends private ZEC notes with a zero-knowledge proof, and takes the owners' position
/// operations (which `IPositionManager` carries out): public amounts, private owners.
/// @notice Public signals of the collateral proof, in this order (the single
/// definition that the circuit, the SDK and the tests follow):
///   0 `changeLeaf`          the rest of the note as a new leaf, 0 when none
///   1 `root`                the note tree root the proof was made against
///   2 `nullifierHash`       Poseidon(nullifierSecret, leaf), spent once
///   3 `collateralFloorZat`  what the spend takes from the note, in zatoshi (< 2^64)
///   4 `bindingHash`         the action and its parameters (`mintBinding`,
///                           `topUpBinding`, `withdrawBinding`), reaching the
///                           proof through this one input
interface IStableMinter is IGovernedParameters {
    /// @notice A Groth16 proof in the layout of the snarkjs verifier.
    struct Proof {
        uint256[2] a;
        uint256[2][2] b;
        uint256[2] c;
    }

    /// @notice The note part of every spend; each field is a public signal.
    struct NoteSpend {
        uint256 root;
        uint256 nullifierHash;
        uint256 collateralFloorZat;
        uint256 changeLeaf;
    }

    /// @notice What a mint claims; every field is bound by the proof.
    struct MintRequest {
        uint256 root;
        uint256 nullifierHash;
        uint256 collateralFloorZat;
        uint256 changeLeaf;
        uint256 mintAmount;
        address recipient;
        address relayer;
        uint256 fee;
        /// @dev A fresh address chosen by the client: it links to nothing.
        address owner;
        /// @dev Where the walk to the new position's place in the ratio order starts
        /// (`IPositionManager.findInsertHint`; 0 for none). Not bound by the proof: whoever
        /// submits may choose it, and it changes only what the mint costs.
        uint256 hint;
    }

    /// @notice One note spend of a `spendBatch`: a top-up of open position `positionId`
    /// when it is non-zero (as `topUp`), else a payout to `sealedAddress` whose
    /// redirect `owner` may make (as `withdrawNote`). The proof binds the same fields.
    struct SpendItem {
        NoteSpend spend;
        uint256 positionId;
        bytes sealedAddress;
        address owner;
        /// @dev A top-up's hint, as `topUp`'s (unused for a payout). Not bound by the proof.
        uint256 hint;
    }

    /// @notice Where released collateral goes: a shielded Zcash address, sealed to
    /// custody's key (see IRedemptions), paid by custody; or (when `sealedAddress`
    /// is empty) a new note `Poseidon(amount, noteCommitment)`.
    struct Destination {
        bytes sealedAddress;
        uint256 noteCommitment;
    }

    /// @notice What a liquidator accepts; each breach reverts with its own error and moves nothing.
    struct LiquidationBounds {
        /// @dev The most ZSD burned (`DebtAboveMaximum`): a redistribution onto the position raises its debt.
        uint256 maxDebt;
        /// @dev The least ZEC taken, in zatoshi (`ZatOutBelowMinimum`): a redemption lowers it.
        uint256 minSeizedZat;
        /// @dev The least the ZEC taken is worth at the price the liquidation uses, in ZSD (18 decimals;
        /// `SeizedValueBelowMinimum`; 0 for none): a price fall takes all the collateral once it covers
        /// less than the bonus, which is more ZEC worth less than the debt. The debt seen is break-even.
        uint256 minSeizedValue;
    }

    error InvalidProof();
    /// @notice The ZEC a liquidation takes is worth `value` (ZSD, 18 decimals) at its price, under the
    /// `minValue` its liquidator accepts; nothing moved.
    error SeizedValueBelowMinimum(uint256 value, uint256 minValue);
    /// @notice The guardian paused new mints (custody's reserves fell short of what the chain says it holds).
    error MintsArePaused();
    error NullifierAlreadySpent(uint256 nullifierHash);
    error UnknownRoot(uint256 root);
    error RootExpired(uint256 root, uint256 supersededAt, uint256 maxRootAge);
    error InvalidMintAmount(uint256 mintAmount);
    error InvalidRecipient(address recipient);
    error FeeExceedsAmount(uint256 fee, uint256 mintAmount);
    error MissingRelayer(uint256 fee);
    error InvalidOwner(address owner);
    error InvalidSpendAmount(uint256 collateralFloorZat);
    error InvalidDestination();
    /// @notice The redemptions contract is named once, at deployment.
    error RedemptionsAlreadySet(address redemptions);
    /// @notice The redemptions contract named must be one built for this minter (`minter()`).
    error RedemptionsForAnotherMinter(address redemptions, address itsMinter);
    /// @notice A batch must hold between one and `max` mints.
    error InvalidBatchSize(uint256 size, uint256 max);
    /// @notice A batch needs one proof per request.
    error BatchLengthMismatch(uint256 proofs, uint256 requests);

    /// @notice Tokens were minted against the note behind `nullifierHash`; the position it opened
    /// is the PositionManager's `PositionOpened` just before.
    event Minted(
        uint256 indexed nullifierHash,
        address indexed recipient,
        address indexed relayer,
        uint256 mintAmount,
        uint256 fee,
        uint256 collateralFloorZat,
        uint256 root
    );
    /// @notice Collateral left a position; `payoutId` is the Redemptions record paying it, or 0 for a
    /// note, queued as the registry's `noteSequence`-th leaf (`LeafQueued`; spendable once inserted).
    event CollateralReleased(
        uint256 indexed positionId,
        uint256 amountZat,
        uint256 payoutId,
        uint256 noteSequence,
        uint256 collateralLeft
    );
    /// @notice A note's ZEC left the pool to a Zcash address (payout `payoutId`).
    event NoteWithdrawn(uint256 indexed nullifierHash, uint256 amountZat, uint256 payoutId);
    /// @notice The redemptions contract was named (once, at deployment).
    event RedemptionsSet(address redemptions);
    /// @notice The guardian stopped (`paused`) or resumed new mints, saying why.
    event MintsPausedSet(bool paused, address indexed guardian, string reason);

    /// @notice Spends a note to open a position: mints `mintAmount - fee` to
    /// `recipient` and `fee` to `relayer`. Anyone may submit; the proof decides.
    /// @return positionId The new position.
    function mint(Proof calldata proof, MintRequest calldata request) external returns (uint256 positionId);

    /// @notice Mints for every request at once, each as `mint` would (its own
    /// nullifier, binding, position, events and fee, in order), with the
    /// proofs checked together by one pairing product (Groth16BatchVerifier).
    /// One invalid item refuses the whole batch. The items' change leaves are
    /// queued together after the last item, in item order, and enter the tree
    /// with the next `CollateralRegistry.insertPendingLeaves`.
    function mintBatch(
        Proof[] calldata proofs,
        MintRequest[] calldata requests
    ) external returns (uint256[] memory positionIds);

    /// @notice Spends a note to add `collateralFloorZat` to an open position. Anyone may submit.
    /// @param hint Where the walk to the position's new place in the ratio order starts, here and in
    /// every position write below (`IPositionManager.findInsertHint`; 0 for none). Neither signed
    /// nor bound by a proof: it changes what the call costs, never what it does.
    function topUp(Proof calldata proof, NoteSpend calldata spend, uint256 positionId, uint256 hint) external;

    /// @notice Spends a note to pay `collateralFloorZat` to the Zcash address sealed in
    /// `sealedAddress`: the way out for ZEC that will never back a position. Anyone may submit.
    /// @param owner Bound by the proof: who may redirect the payout if custody cannot make it.
    /// @return payoutId The Redemptions record custody pays.
    function withdrawNote(
        Proof calldata proof,
        NoteSpend calldata spend,
        bytes calldata sealedAddress,
        address owner
    ) external returns (uint256 payoutId);

    /// @notice Top-ups and note withdrawals at once, each as `topUp` or `withdrawNote`
    /// would (its own nullifier, binding, events and payout, in order), with the
    /// proofs checked together by one pairing product, as `mintBatch` does. One
    /// invalid item refuses the whole batch. Change leaves are queued together
    /// after the last item, in item order. Anyone may submit; the proofs decide.
    /// @return payoutIds Each item's Redemptions record: 0 for a top-up.
    function spendBatch(
        Proof[] calldata proofs,
        SpendItem[] calldata items
    ) external returns (uint256[] memory payoutIds);

    /// @notice Burns `amount` of the caller's tokens against the position's debt.
    function repay(uint256 positionId, uint256 amount, uint256 hint) external;

    /// @notice `repay` of `min(maxAmount, debt now)` for `payer`, authorised by the payer's EIP-712
    /// `Repay(positionId, maxAmount, payer, nonce, deadline)` signature. The payer never burns more
    /// than `maxAmount`; when a redemption has shrunk the debt below it since signing, the whole
    /// (smaller) debt is repaid. A repayment leaving less than `minDebt` is still refused.
    function repayWithSig(
        uint256 positionId,
        uint256 maxAmount,
        address payer,
        uint256 deadline,
        bytes calldata signature,
        uint256 hint
    ) external;

    /// @notice Releases `amountZat` of collateral while the position stays at
    /// or above the minimum ratio. Owner only.
    function withdrawCollateral(uint256 positionId, uint256 amountZat, Destination calldata to, uint256 hint) external;

    /// @notice `withdrawCollateral` authorised by the owner's EIP-712
    /// `WithdrawCollateral(positionId, amountZat, sealedAddress, noteCommitment, nonce, deadline)` signature.
    /// @dev No bound beyond `amountZat`: it pays exactly that or reverts, whatever happened since signing.
    function withdrawCollateralWithSig(
        uint256 positionId,
        uint256 amountZat,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature,
        uint256 hint
    ) external;

    /// @notice Burns the remaining debt from the owner and releases all
    /// collateral (also claims a liquidated position's surplus). Owner only.
    function close(uint256 positionId, Destination calldata to) external;

    /// @notice `close` authorised by the owner's EIP-712
    /// `Close(positionId, maxDebt, minZatOut, sealedAddress, noteCommitment, nonce, deadline)` signature.
    /// Reverts `DebtAboveMaximum` when the owner would burn more than `maxDebt` (a redistribution onto the
    /// position since signing) and `ZatOutBelowMinimum` when it would release under `minZatOut` (a
    /// redemption since signing), moving nothing.
    function closeWithSig(
        uint256 positionId,
        uint256 maxDebt,
        uint256 minZatOut,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external;

    /// @notice Repays all debt of a position under the liquidation ratio from
    /// the caller and takes its collateral up to the debt's value plus the bonus, within `bounds`
    /// (a breach reverts and moves nothing). A transaction waits in a mempool as a signature waits at
    /// a relay, so the direct call takes the same bounds as the signed one.
    function liquidate(uint256 positionId, LiquidationBounds calldata bounds, Destination calldata to) external;

    /// @notice `liquidate` for `liquidator`, authorised by its EIP-712
    /// `Liquidate(positionId, maxDebt, minSeizedZat, minSeizedValue, sealedAddress, noteCommitment, nonce, deadline)`
    /// signature, within the signed bounds.
    function liquidateWithSig(
        uint256 positionId,
        address liquidator,
        LiquidationBounds calldata bounds,
        Destination calldata to,
        uint256 deadline,
        bytes calldata signature
    ) external;

    /// @notice Spreads a position under 100% (or within a redemption's margin of it: see
    /// `redistributable`) over every other position in proportion to debt (its debt, and its
    /// collateral less the redistribution reward, which goes to the caller at `to`). Anyone may call.
    function redistribute(uint256 positionId, Destination calldata to) external;

    /// @notice Redistributes, in one call, each of `positionIds` that `redistribute` would take now
    /// (skipping any another keeper cleared first), and pays the caller's rewards at `to` in one
    /// release (its `positionId` is 0). Reverts `NothingToRedistribute` when none could be taken.
    /// @return cleared How many were redistributed.
    function redistributeMany(
        uint256[] calldata positionIds,
        Destination calldata to
    ) external returns (uint256 cleared);

    /// @notice The mint binding: `keccak256(abi.encode(chainid, minter, "mint", recipient, relayer, fee, mintAmount, owner)) % p`.
    function mintBinding(
        address recipient,
        address relayer,
        uint256 fee,
        uint256 mintAmount,
        address owner
    ) external view returns (uint256);

    /// @notice The top-up binding: `keccak256(abi.encode(chainid, minter, "topUp", positionId)) % p`.
    function topUpBinding(uint256 positionId) external view returns (uint256);

    /// @notice The withdrawal binding: `keccak256(abi.encode(chainid, minter, "withdraw", keccak256(sealedAddress), owner)) % p`.
    function withdrawBinding(bytes calldata sealedAddress, address owner) external view returns (uint256);

    /// @notice Whether the nullifier has already been spent.
    function isSpent(uint256 nullifierHash) external view returns (bool);

    /// @notice The positions this minter opens and changes.
    function positions() external view returns (IPositionManager);

    /// @notice Pays released collateral out; named once after deployment.
    function redemptions() external view returns (IRedemptions);

    /// @notice How long, in seconds, a replaced root stays usable for proofs.
    function maxRootAge() external view returns (uint256);

    /// @notice Sets how long a replaced root stays usable, in seconds. Admin (timelock) only.
    function setMaxRootAge(uint256 maxRootAge) external;

    /// @notice Stops note spends (mints, top-ups, note withdrawals) and collateral withdrawals; repay,
    /// close, liquidate and redistribute go on. Pause-guardian role.
    /// @dev A pause is for a suspected flaw in the proofs, which any note spend could exploit, so a
    /// top-up stops too; the books must stay solvent meanwhile, so liquidations do not, and an owner
    /// defends a position by repaying.
    function pause() external;

    /// @notice Resumes. Pause-guardian role.
    function unpause() external;
    /// @notice Whether new mints are refused (`MintsArePaused`); everything else goes on.
    function mintsPaused() external view returns (bool);
    /// @notice Stops or resumes new mints. Guardian only: the reserves watcher, which pauses on a
    /// shortfall of custody's ZEC against the chain and resumes once it is made good.
    function setMintsPaused(bool paused, string calldata reason) external;
}
