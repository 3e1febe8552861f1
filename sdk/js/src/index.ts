export * from "./notes/index.ts";
export * from "./generated/abis.ts";
