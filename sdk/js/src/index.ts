export * from "./notes/index.ts";
export * from "./generated/abis.ts";
export * from "./redeem.ts";
export * from "./units/index.ts";
export * from "./positions.ts";
export * from "./seal/index.ts";
export * from "./attestation.ts";
