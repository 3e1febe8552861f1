/** BN254 scalar field: every circuit signal and Poseidon input lives below it. */
export const SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/**
 * Public signals of the collateral proof, in the order of the verifier's input
 * array (see contracts/interfaces/IStableMinter.sol and circuits/collateral.circom).
 * `changeLeaf` is the circuit's output, which snarkjs puts first.
 */
export const PUBLIC_SIGNALS = ["changeLeaf", "root", "nullifierHash", "collateralFloorZat", "bindingHash"] as const;

/** Largest path the circuit proves: the registry holds at most 2^20 deposits. */
export const MAX_DEPTH = 20;

/** Deposit amounts and collateral floors are range-checked to 64 bits. */
export const MAX_ZAT = 2n ** 64n - 1n;
