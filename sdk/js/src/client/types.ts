// Request and answer types of each operation, read from the types generated
// from the API's OpenAPI document (../generated/openapi.ts).
import type { operations } from "../generated/openapi.ts";

export type OperationId = keyof operations;

type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;

/** The JSON answer of an operation for a status (200 unless said). */
export type Answer<Op extends OperationId, Status extends number = 200> = operations[Op] extends {
  responses: infer R;
}
  ? Status extends keyof R
    ? JsonOf<R[Status]>
    : never
  : never;

/** The JSON body an operation takes. */
export type Body<Op extends OperationId> = operations[Op] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** The query parameters an operation takes. */
export type Query<Op extends OperationId> = operations[Op] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

export type Relay = Answer<"getRelay">;
export type Proof = Answer<"getProof">;
export type Mint = Answer<"getMint">;
export type Redemption = Answer<"getRedemption">;
export type RedemptionTerms = Answer<"getRedemptionTerms">;
export type Deposit = Answer<"simulateDeposit", 201>;
export type DepositLeaves = Answer<"listDepositLeaves">;
export type Agent = Answer<"getAgent">;
export type Alert = Answer<"getAlert">;
