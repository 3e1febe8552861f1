export * from "./constants.ts";
export * from "./note.ts";
export * from "./tree.ts";
export * from "./binding.ts";
export * from "./prover.ts";
export * from "./calldata.ts";
