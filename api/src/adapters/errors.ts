// What every layer throws, from the adapters up. An error says what went wrong
// (a kind, a stable code, words for people, the facts a client needs) and
// never how HTTP answers it: http/problems.ts maps each kind to a status. The
// adapters throw these themselves (a node or a database that does not answer,
// a contract's refusal); the domain's own are made in domain/errors.ts, of the
// same class, so that one mapping serves both.
import type { ContractErrorName } from "viem";
import type {
  collateralRegistryAbi,
  governanceTokenAbi,
  redemptionsAbi,
  stableGovernorAbi,
  positionManagerAbi,
  stableMinterAbi,
  stableTokenAbi,
} from "@zsd/sdk";

export type ErrorKind =
  /** The request is malformed or a field is out of range. */
  | "invalid"
  | "not_found"
  /** The request is well-formed but conflicts with the current state (used, claimed, refused by a contract). */
  | "conflict"
  /** The request is well-formed but cannot be acted on as it stands (wrong proof, expired signature). */
  | "unprocessable"
  /** Something this service depends on (chain, indexer, wallet) does not answer. */
  | "unavailable"
  /** The work was accepted and is still going on. */
  | "pending";

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorFacts {
  /** Fields of the request that failed, for "invalid". */
  errors?: FieldError[];
  /** Seconds after which a retry may succeed. */
  retryAfter?: number;
  [fact: string]: unknown;
}

export class ServiceError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly facts: ErrorFacts = {},
  ) {
    super(detail);
    this.name = "ServiceError";
  }
}

/** Something this service depends on (`what`: the chain node, the indexer, the database…) does not answer. */
export const unavailable = (what: string, retryAfter = 5) =>
  new ServiceError(
    "unavailable",
    "upstream_unavailable",
    "Service unavailable",
    `${what} is unavailable; retry shortly.`,
    {
      retryAfter,
    },
  );

/** Every custom error our contracts can revert with: a renamed Solidity error breaks the build here. */
export type ContractError =
  | ContractErrorName<typeof collateralRegistryAbi>
  | ContractErrorName<typeof redemptionsAbi>
  | ContractErrorName<typeof positionManagerAbi>
  | ContractErrorName<typeof stableMinterAbi>
  | ContractErrorName<typeof stableTokenAbi>
  | ContractErrorName<typeof stableGovernorAbi>
  | ContractErrorName<typeof governanceTokenAbi>;

/** InsufficientCollateralValue → insufficient_collateral_value, ERC20InsufficientBalance → erc20_insufficient_balance. */
const snake = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();

/** A contract refused a call: its custom error's name and arguments, decoded from the ABI. */
export class ContractRevertError extends ServiceError {
  constructor(
    readonly errorName: ContractError,
    readonly args: readonly unknown[] = [],
  ) {
    super("conflict", snake(errorName), "Refused by the contract", `The contract refused: ${errorName}.`);
    this.name = "ContractRevertError";
  }
}

/** Whether `error` is the contract's refusal `name`. */
export const isRevert = (error: unknown, name: ContractError): error is ContractRevertError =>
  error instanceof ContractRevertError && error.errorName === name;
