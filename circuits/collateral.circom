pragma circom 2.1.5;

// Collateral proof for the Shielded Dollar minter.
//
// A note is a private ZEC balance in the pool. One proof spends one note: it
// takes collateralFloorZat out of it (to open a position, add to one, or pay
// out to a Zcash address) and puts whatever is left into a new note, the
// change leaf, so a round floor that hides the deposit loses nothing.
//
// Public signals, in this order (the order is also written in
// contracts/interfaces/IStableMinter.sol and sdk/js/src/notes/constants.ts;
// snarkjs puts the output first):
//   0 changeLeaf           Poseidon(amountZat - collateralFloorZat,
//                          changeCommitment), or 0 when nothing is left
//   1 root                 LeanIMT root of the note tree
//   2 nullifierHash        Poseidon(nullifierSecret, leaf): one per note leaf
//   3 collateralFloorZat   the amount this spend takes from the note, in zatoshi
//   4 bindingHash          keccak256 of the action and its parameters mod p,
//                          computed by the minter; the circuit only has to tie
//                          the proof to it

include "poseidon.circom";
include "bitify.circom";
include "comparators.circom";
include "@zk-kit/binary-merkle-root.circom/src/binary-merkle-root.circom";

// noteCommitment = Poseidon(secret, nullifierSecret) is what the depositor
// writes in the shielded memo; the attestor records leaf = Poseidon(amountZat,
// noteCommitment), so the amount is fixed by the deposit, not by the prover.
template NoteLeaf() {
    signal input amountZat;
    signal input secret;
    signal input nullifierSecret;
    signal output commitment;
    signal output leaf;

    commitment <== Poseidon(2)([secret, nullifierSecret]);
    leaf <== Poseidon(2)([amountZat, commitment]);
}

// Hashing the leaf in makes the nullifier unique per deposit (the registry
// refuses duplicate leaves) while only the note owner can compute it.
template NoteNullifier() {
    signal input nullifierSecret;
    signal input leaf;
    signal output nullifierHash;

    nullifierHash <== Poseidon(2)([nullifierSecret, leaf]);
}

// a >= b for two values that are each constrained to 64 bits here, so the
// 65-bit comparison inside GreaterEqThan cannot wrap around the field.
template AtLeast64() {
    signal input a;
    signal input b;

    _ <== Num2Bits(64)(a);
    _ <== Num2Bits(64)(b);
    signal ok <== GreaterEqThan(64)([a, b]);
    ok === 1;
}

// The rest of the note as a new leaf of the same form as a deposit's, so a
// change note is spent exactly like one. Zero rest gives no leaf (0), which
// the minter does not insert. changeCommitment is only used when rest > 0.
template ChangeLeaf() {
    signal input rest;
    signal input changeCommitment;
    signal output leaf;

    signal hash <== Poseidon(2)([rest, changeCommitment]);
    signal empty <== IsZero()(rest);
    leaf <== (1 - empty) * hash;
}

// BinaryMerkleRoot answers 0 for a depth above MAX_DEPTH, so the depth is
// bounded here (5 bits, then <= MAX_DEPTH).
template DepthAtMost(MAX_DEPTH) {
    signal input depth;

    _ <== Num2Bits(5)(depth);
    signal ok <== LessEqThan(5)([depth, MAX_DEPTH]);
    ok === 1;
}

template CollateralProof(MAX_DEPTH) {
    signal input root;
    signal input nullifierHash;
    signal input collateralFloorZat;
    signal input bindingHash;

    signal input amountZat;
    signal input secret;
    signal input nullifierSecret;
    signal input pathLength;
    signal input leafIndex;
    signal input siblings[MAX_DEPTH];
    signal input changeCommitment;
    signal output changeLeaf;

    // Both sides are 64-bit and amount >= floor, so the rest is in [0, 2^64).
    AtLeast64()(amountZat, collateralFloorZat);
    changeLeaf <== ChangeLeaf()(amountZat - collateralFloorZat, changeCommitment);

    signal commitment, leaf;
    (commitment, leaf) <== NoteLeaf()(amountZat, secret, nullifierSecret);

    DepthAtMost(MAX_DEPTH)(pathLength);
    signal computedRoot <== BinaryMerkleRoot(MAX_DEPTH)(leaf, pathLength, leafIndex, siblings);
    computedRoot === root;

    signal computedNullifierHash <== NoteNullifier()(nullifierSecret, leaf);
    computedNullifierHash === nullifierHash;

    // A quadratic constraint on the binding so that the optimiser cannot drop
    // it and a proof stays tied to its action and parameters.
    signal bindingSquare <== bindingHash * bindingHash;
}

component main {public [root, nullifierHash, collateralFloorZat, bindingHash]} = CollateralProof(20);
