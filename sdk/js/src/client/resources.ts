// One class per area of the API, each method one operation: typed from the
// OpenAPI document, sent through HttpClient (retries, idempotency keys).
import type { HttpClient, RequestOptions } from "./http.ts";
import type { Answer, Body, Query } from "./types.ts";

/** Per-call options: an Idempotency-Key of the caller's own (one is made otherwise). */
export type CallOptions = Pick<RequestOptions, "idempotencyKey">;

const seg = (value: string) => encodeURIComponent(value);

abstract class Resource {
  constructor(protected readonly http: HttpClient) {}
}

export class RelayResource extends Resource {
  /** The relay's terms: chain, contracts, relayer and least fee, the circuit, the minter's ratio and price. */
  get(): Promise<Answer<"getRelay">> {
    return this.http.request("GET", "/v1/relay");
  }
  /** How many deposits could back a mint proving `floor` ZEC: its anonymity set. */
  anonymity(floor: string): Promise<Answer<"getAnonymitySet">> {
    return this.http.request("GET", "/v1/relay/anonymity", { query: { floor } });
  }
}

export class KeysResource extends Resource {
  create(body: Body<"createApiKey">, options?: CallOptions): Promise<Answer<"createApiKey", 201>> {
    return this.http.request("POST", "/v1/keys", { body, ...options });
  }
  list(): Promise<Answer<"listApiKeys">> {
    return this.http.request("GET", "/v1/keys");
  }
  revoke(keyId: string): Promise<Answer<"revokeApiKey">> {
    return this.http.request("DELETE", `/v1/keys/${seg(keyId)}`);
  }
}

export class LedgerResource extends Resource {
  supply(): Promise<Answer<"getSupply">> {
    return this.http.request("GET", "/v1/supply");
  }
  collateral(): Promise<Answer<"getCollateral">> {
    return this.http.request("GET", "/v1/collateral");
  }
  /** Custody's ZEC read from its own node against what the chain counts, and the readings before. */
  reserves(query: Query<"getReserves"> = {}): Promise<Answer<"getReserves">> {
    return this.http.request("GET", "/v1/reserves", { query });
  }
  pegPrice(): Promise<Answer<"getPegPrice">> {
    return this.http.request("GET", "/v1/prices/peg");
  }
  balances(address: string): Promise<Answer<"getWalletBalances">> {
    return this.http.request("GET", `/v1/wallets/${seg(address)}/balances`);
  }
  /** One page of deposit leaves; `allDepositLeaves` pages through them all. */
  depositLeaves(query: Query<"listDepositLeaves"> = {}): Promise<Answer<"listDepositLeaves">> {
    return this.http.request("GET", "/v1/deposits/leaves", { query });
  }
  /** Change leaves queued for the tree and not in it yet (no path: a note there waits to be spendable). */
  pendingLeaves(): Promise<Answer<"listPendingLeaves">> {
    return this.http.request("GET", "/v1/deposits/pending");
  }
  /** One of your account's deposits (dep_…): its amount and note commitment, which the chain does not show. */
  deposit(depositId: string): Promise<Answer<"getDeposit">> {
    return this.http.request("GET", `/v1/deposits/${seg(depositId)}`);
  }
}

export class ProofsResource extends Resource {
  submit(body: Body<"submitProof">, options?: CallOptions): Promise<Answer<"submitProof", 201>> {
    return this.http.request("POST", "/v1/proofs/submit", { body, ...options });
  }
  get(proofId: string): Promise<Answer<"getProof">> {
    return this.http.request("GET", `/v1/proofs/${seg(proofId)}`);
  }
  /** Whether a nullifier (a proof's publicSignals[2]) is spent on chain. */
  nullifier(nullifierHash: string): Promise<Answer<"getNullifier">> {
    return this.http.request("GET", `/v1/nullifiers/${seg(nullifierHash)}`);
  }
}

export class MintsResource extends Resource {
  /** Queues a mint of a verified proof (202); the proof-hash shape waits for the transaction (200). */
  create(body: Body<"mint">, options?: CallOptions): Promise<Answer<"mint", 202> | Answer<"mint", 200>> {
    return this.http.request("POST", "/v1/mint", { body, ...options });
  }
  get(mintId: string): Promise<Answer<"getMint">> {
    return this.http.request("GET", `/v1/mints/${seg(mintId)}`);
  }
}

/**
 * Positions read live from the minter, and the actions the relay sends for
 * their signers: each body carries the signer's EIP-712 signature over
 * `terms(signer)` (see @zsd/sdk's repayTypedData, withdrawCollateralTypedData,
 * closeTypedData, liquidateTypedData).
 */
export class PositionsResource extends Resource {
  get(positionId: string): Promise<Answer<"getPosition">> {
    return this.http.request("GET", `/v1/positions/${seg(positionId)}`);
  }
  /** What `signer` signs: the minter's EIP-712 domain and types, its next nonce and a deadline. */
  terms(signer: string): Promise<Answer<"getPositionTerms">> {
    return this.http.request("GET", "/v1/positions/terms", { query: { signer } });
  }
  repay(positionId: string, body: Body<"repayPosition">, options?: CallOptions): Promise<Answer<"repayPosition", 202>> {
    return this.http.request("POST", `/v1/positions/${seg(positionId)}/repay`, { body, ...options });
  }
  withdraw(
    positionId: string,
    body: Body<"withdrawFromPosition">,
    options?: CallOptions,
  ): Promise<Answer<"withdrawFromPosition", 202>> {
    return this.http.request("POST", `/v1/positions/${seg(positionId)}/withdraw`, { body, ...options });
  }
  close(positionId: string, body: Body<"closePosition">, options?: CallOptions): Promise<Answer<"closePosition", 202>> {
    return this.http.request("POST", `/v1/positions/${seg(positionId)}/close`, { body, ...options });
  }
  liquidate(
    positionId: string,
    body: Body<"liquidatePosition">,
    options?: CallOptions,
  ): Promise<Answer<"liquidatePosition", 202>> {
    return this.http.request("POST", `/v1/positions/${seg(positionId)}/liquidate`, { body, ...options });
  }
  /** Adds a note's ZEC, proven with a proof bound to this position (the SDK's topUp binding). */
  topUp(positionId: string, body: Body<"topUpPosition">, options?: CallOptions): Promise<Answer<"topUpPosition", 202>> {
    return this.http.request("POST", `/v1/positions/${seg(positionId)}/top-up`, { body, ...options });
  }
  action(positionId: string, actionId: string): Promise<Answer<"getPositionAction">> {
    return this.http.request("GET", `/v1/positions/${seg(positionId)}/actions/${seg(actionId)}`);
  }
  /** An action by its id alone (pact_…), as an alert's subject or a webhook names it. */
  actionById(actionId: string): Promise<Answer<"getPositionActionById">> {
    return this.http.request("GET", `/v1/position-actions/${seg(actionId)}`);
  }
}

/** A deposit note's ZEC out to a shielded address, proven with a proof bound to that address. */
export class WithdrawalsResource extends Resource {
  create(body: Body<"createWithdrawal">, options?: CallOptions): Promise<Answer<"createWithdrawal", 202>> {
    return this.http.request("POST", "/v1/withdrawals", { body, ...options });
  }
  get(withdrawalId: string): Promise<Answer<"getWithdrawal">> {
    return this.http.request("GET", `/v1/withdrawals/${seg(withdrawalId)}`);
  }
}

export class RedemptionsResource extends Resource {
  /**
   * What `owner` signs: the EIP-712 typed data, their next nonce and a deadline;
   * with `withdrawAddress`, also that address sealed by the API for the owner
   * (`sealedAddress`), to sign and then send in the clear.
   */
  terms(owner: string, withdrawAddress?: string): Promise<Answer<"getRedemptionTerms">> {
    return this.http.request("GET", "/v1/redemptions/terms", {
      query: withdrawAddress === undefined ? { owner } : { owner, withdrawAddress },
    });
  }
  create(body: Body<"redeem">, options?: CallOptions): Promise<Answer<"redeem", 202>> {
    return this.http.request("POST", "/v1/redeem", { body, ...options });
  }
  get(id: string): Promise<Answer<"getRedemption">> {
    return this.http.request("GET", `/v1/redemptions/${seg(id)}`);
  }
  /**
   * Redirects a failed payout's held ZEC (custody could not pay it) to another
   * shielded address or into a note. `id` is a redemption (red_…) or an
   * on-chain payout id (a position's or a note withdrawal's payoutId); the
   * body carries the owner's EIP-712 Redirect signature (see redirectTypedData).
   */
  redirect(id: string, body: Body<"redirectPayout">, options?: CallOptions): Promise<Answer<"redirectPayout", 202>> {
    return this.http.request("POST", `/v1/redemptions/${seg(id)}/redirect`, { body, ...options });
  }
  /** The payout's latest redirect, with the new payout's state. */
  getRedirect(id: string): Promise<Answer<"getPayoutRedirect">> {
    return this.http.request("GET", `/v1/redemptions/${seg(id)}/redirect`);
  }
}

export class SandboxResource extends Resource {
  /** A simulated shielded deposit of `amount` ZEC for a note commitment (decimal or 0x-hex). */
  deposit(body: Body<"simulateDeposit">, options?: CallOptions): Promise<Answer<"simulateDeposit", 201>> {
    return this.http.request("POST", "/v1/sandbox/deposits", { body, ...options });
  }
  price(): Promise<Answer<"getSandboxPrice">> {
    return this.http.request("GET", "/v1/sandbox/price");
  }
  setPrice(body: Body<"setSandboxPrice">, options?: CallOptions): Promise<Answer<"setSandboxPrice">> {
    return this.http.request("POST", "/v1/sandbox/price", { body, ...options });
  }
}

export class AgentsResource extends Resource {
  register(body: Body<"registerAgent">, options?: CallOptions): Promise<Answer<"registerAgent", 201>> {
    return this.http.request("POST", "/v1/agents/register", { body, ...options });
  }
  list(): Promise<Answer<"listAgents">> {
    return this.http.request("GET", "/v1/agents");
  }
  get(agentId: string): Promise<Answer<"getAgent">> {
    return this.http.request("GET", `/v1/agents/${seg(agentId)}`);
  }
  update(agentId: string, body: Body<"updateAgent">, options?: CallOptions): Promise<Answer<"updateAgent">> {
    return this.http.request("POST", `/v1/agents/${seg(agentId)}`, { body, ...options });
  }
  delete(agentId: string): Promise<Answer<"deleteAgent">> {
    return this.http.request("DELETE", `/v1/agents/${seg(agentId)}`);
  }
  rotateSecret(agentId: string, options?: CallOptions): Promise<Answer<"rotateAgentSecret">> {
    return this.http.request("POST", `/v1/agents/${seg(agentId)}/rotate-secret`, options);
  }
  /** Sends the agent a `ping` event. */
  test(agentId: string, options?: CallOptions): Promise<Answer<"testAgent", 202>> {
    return this.http.request("POST", `/v1/agents/${seg(agentId)}/test`, options);
  }
  deliveries(agentId: string, query: Query<"listAgentDeliveries"> = {}): Promise<Answer<"listAgentDeliveries">> {
    return this.http.request("GET", `/v1/agents/${seg(agentId)}/deliveries`, { query });
  }
  retryDelivery(agentId: string, deliveryId: string, options?: CallOptions) {
    return this.http.request<Answer<"retryAgentDelivery", 202>>(
      "POST",
      `/v1/agents/${seg(agentId)}/deliveries/${seg(deliveryId)}/retry`,
      options,
    );
  }
  retryFailedSince(agentId: string, since: string, options?: CallOptions) {
    return this.http.request<Answer<"retryFailedAgentDeliveries", 202>>(
      "POST",
      `/v1/agents/${seg(agentId)}/deliveries/retry`,
      { body: { since }, ...options },
    );
  }
}

export class AlertsResource extends Resource {
  raise(body: Body<"raiseAlert">, options?: CallOptions): Promise<Answer<"raiseAlert", 201>> {
    return this.http.request("POST", "/v1/agents/alerts", { body, ...options });
  }
  list(query: Query<"listAlerts"> = {}): Promise<Answer<"listAlerts">> {
    return this.http.request("GET", "/v1/agents/alerts", { query });
  }
  get(alertId: string): Promise<Answer<"getAlert">> {
    return this.http.request("GET", `/v1/alerts/${seg(alertId)}`);
  }
  update(alertId: string, body: Body<"updateAlert">, options?: CallOptions): Promise<Answer<"updateAlert">> {
    return this.http.request("POST", `/v1/alerts/${seg(alertId)}`, { body, ...options });
  }
  release(alertId: string, body: Body<"releaseHold">, options?: CallOptions): Promise<Answer<"releaseHold">> {
    return this.http.request("POST", `/v1/alerts/${seg(alertId)}/release`, { body, ...options });
  }
  reject(alertId: string, body: Body<"rejectHold">, options?: CallOptions): Promise<Answer<"rejectHold">> {
    return this.http.request("POST", `/v1/alerts/${seg(alertId)}/reject`, { body, ...options });
  }
  verdict(body: Body<"giveVerdict">, options?: CallOptions): Promise<Answer<"giveVerdict">> {
    return this.http.request("POST", "/v1/agents/verdicts", { body, ...options });
  }
}

export class GovernanceResource extends Resource {
  /** The governor's parameters and the proposals. */
  overview(): Promise<Answer<"getGovernance">> {
    return this.http.request("GET", "/v1/governance");
  }
  proposals(query: Query<"listProposals"> = {}): Promise<Answer<"listProposals">> {
    return this.http.request("GET", "/v1/governance/proposals", { query });
  }
  proposal(proposalId: string): Promise<Answer<"getProposal">> {
    return this.http.request("GET", `/v1/governance/proposals/${seg(proposalId)}`);
  }
  votesOf(proposalId: string, query: Query<"listProposalVotes"> = {}): Promise<Answer<"listProposalVotes">> {
    return this.http.request("GET", `/v1/governance/proposals/${seg(proposalId)}/votes`, { query });
  }
  /** A holder's tokens, votes, delegate, delegation nonce and the EIP-712 domains its wallet signs on. */
  holder(address: string): Promise<Answer<"getGovernanceHolder">> {
    return this.http.request("GET", `/v1/governance/holders/${seg(address)}`);
  }
  /** Relays a signed ballot (no gas for the voter). */
  vote(body: Body<"castVote">, options?: CallOptions): Promise<Answer<"castVote", 202>> {
    return this.http.request("POST", "/v1/governance/votes", { body, ...options });
  }
  getVote(voteId: string): Promise<Answer<"getVote">> {
    return this.http.request("GET", `/v1/governance/votes/${seg(voteId)}`);
  }
  /** Relays a signed delegation (delegateBySig). */
  delegate(body: Body<"delegate">, options?: CallOptions): Promise<Answer<"delegate", 202>> {
    return this.http.request("POST", "/v1/governance/delegations", { body, ...options });
  }
  getDelegation(delegationId: string): Promise<Answer<"getDelegation">> {
    return this.http.request("GET", `/v1/governance/delegations/${seg(delegationId)}`);
  }
  /** Relays the governor's queue of a succeeded proposal (anyone may queue one; no signature, no gas). */
  queue(proposalId: string, options?: CallOptions): Promise<Answer<"queueProposal", 202>> {
    return this.http.request("POST", `/v1/governance/proposals/${seg(proposalId)}/queue`, options);
  }
  /** Relays the governor's execute of a queued proposal once the timelock's delay is over. */
  execute(proposalId: string, options?: CallOptions): Promise<Answer<"executeProposal", 202>> {
    return this.http.request("POST", `/v1/governance/proposals/${seg(proposalId)}/execute`, options);
  }
  getAction(actionId: string): Promise<Answer<"getProposalAction">> {
    return this.http.request("GET", `/v1/governance/actions/${seg(actionId)}`);
  }
}
