export * from "./system.ts";
export * from "./signatures.ts";
export * from "./postgres.ts";
export * from "./crowd.ts";
