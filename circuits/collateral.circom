pragma circom 2.1.5;

// Collateral proof for the Shielded Dollar minter.
//
// Public signals, in this order (the order is also written in
// contracts/interfaces/IStableMinter.sol and sdk/js/src/notes/constants.ts):
//   0 root                 LeanIMT root of the deposit tree
//   1 nullifierHash        Poseidon(nullifierSecret, leaf): one per deposit leaf
//   2 collateralFloorZat   the proven lower bound on the deposit, in zatoshi
//   3 bindingHash          keccak256(chainId, minter, recipient, relayer, fee,
//                          mintAmount) mod p, computed by the minter; the circuit
//                          only has to tie the proof to it

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

    AtLeast64()(amountZat, collateralFloorZat);

    signal commitment, leaf;
    (commitment, leaf) <== NoteLeaf()(amountZat, secret, nullifierSecret);

    DepthAtMost(MAX_DEPTH)(pathLength);
    signal computedRoot <== BinaryMerkleRoot(MAX_DEPTH)(leaf, pathLength, leafIndex, siblings);
    computedRoot === root;

    signal computedNullifierHash <== NoteNullifier()(nullifierSecret, leaf);
    computedNullifierHash === nullifierHash;

    // A quadratic constraint on the binding so that the optimiser cannot drop
    // it and a proof stays tied to its recipient, relayer, fee and amount.
    signal bindingSquare <== bindingHash * bindingHash;
}

component main {public [root, nullifierHash, collateralFloorZat, bindingHash]} = CollateralProof(20);
