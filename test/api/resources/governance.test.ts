// Governance through the relay on the local chain, with the indexer: three
// holders delegate and vote through the API with their own signatures (the
// relay pays the gas), the API's tallies equal the governor's at each stage,
// the proposal is queued and executed through the timelock and the position manager's
// parameter changes; every refusal has its code; two keyed ballots of one
// voter go through in the opposite order to their signing, while a
// sequential one is invalidated by the voter's other vote; the proposal is
// queued and executed through the relay too, refused before its time; agents
// hear of it all through webhooks.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, type HDAccount, type Hex, encodeFunctionData, keccak256, parseSignature, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { positionManagerAbi, priceFeedAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../../scripts/lib/indexer-process.ts";
import { type System, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, openStorage, startRelayApi } from "../helpers.ts";
import { type Receiver, startReceiver, verify, webhookSchemaCheck } from "../webhook-receiver.ts";
import { createTestDatabase } from "@zsd/testkit";

const { deployer, alice, bob, carol } = accounts;
const ZSDG = 10n ** 18n;
const EVENTS = [
  "governance.proposal.created",
  "governance.proposal.queued",
  "governance.proposal.executed",
  "governance.vote.confirmed",
];
const BALLOT = [
  { name: "proposalId", type: "uint256" },
  { name: "support", type: "uint8" },
  { name: "voter", type: "address" },
  { name: "nonce", type: "uint256" },
] as const;
const SUPPORT = { against: 0, for: 1, abstain: 2 } as const;
type Support = keyof typeof SUPPORT;

interface Problem {
  code: string;
  [field: string]: unknown;
}
interface Relayed {
  status: string;
  txHash: string | null;
  failureCode: string | null;
}

describe("governance through the relay", () => {
  let s: System;
  let indexer: RunningIndexer;
  let indexerDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let receiver: Receiver;
  let secret: string;
  let dir: string;
  let first: bigint;
  let second: bigint;
  let action: { targets: Address[]; values: bigint[]; calldatas: Hex[]; descriptionHash: Hex };
  const votes: Record<string, string> = {};

  const g = () => s.read.governor;
  const domain = async (contract: "governor" | "governanceToken") => {
    const [, name, version, chainId, verifyingContract] = await s.read[contract].read.eip712Domain();
    return { name, version, chainId, verifyingContract };
  };
  const keyedNonce = (voter: Address, proposalId: bigint) => g().read.nonces([voter, BigInt.asUintN(192, proposalId)]);

  async function ballot(
    signer: HDAccount,
    proposalId: bigint,
    support: Support,
    nonce: bigint,
    voter = signer.address,
  ) {
    return signer.signTypedData({
      domain: await domain("governor"),
      types: { Ballot: BALLOT },
      primaryType: "Ballot",
      message: { proposalId, support: SUPPORT[support], voter, nonce },
    });
  }

  async function extendedBallot(signer: HDAccount, proposalId: bigint, support: Support, reason: string) {
    return signer.signTypedData({
      domain: await domain("governor"),
      types: { ExtendedBallot: [...BALLOT, { name: "reason", type: "string" }, { name: "params", type: "bytes" }] },
      primaryType: "ExtendedBallot",
      message: {
        proposalId,
        support: SUPPORT[support],
        voter: signer.address,
        nonce: await keyedNonce(signer.address, proposalId),
        reason,
        params: "0x",
      },
    });
  }

  async function delegation(signer: HDAccount, options: { nonce?: bigint; expiry?: bigint; delegator?: Address } = {}) {
    const delegator = options.delegator ?? signer.address;
    const nonce = options.nonce ?? (await s.read.governanceToken.read.nonces([delegator]));
    const expiry = options.expiry ?? (await s.publicClient.getBlock()).timestamp + 3600n;
    const signature = await signer.signTypedData({
      domain: await domain("governanceToken"),
      types: {
        Delegation: [
          { name: "delegatee", type: "address" },
          { name: "nonce", type: "uint256" },
          { name: "expiry", type: "uint256" },
        ],
      },
      primaryType: "Delegation",
      message: { delegatee: delegator, nonce, expiry },
    });
    return { delegatee: delegator, delegator, nonce: nonce.toString(), expiry: Number(expiry), signature };
  }

  const post = async (path: string, body: unknown) => {
    const response = await api.call(path, json(body));
    return { status: response.status, body: (await response.json()) as Problem & Relayed & Record<string, string> };
  };
  const refused = async (path: string, body: unknown, status: number, code: string) => {
    const answer = await post(path, body);
    expect([answer.status, answer.body.code], JSON.stringify(answer.body)).toEqual([status, code]);
    return answer.body;
  };
  const settled = (path: string) =>
    eventually(
      async () => (await (await api.call(path)).json()) as Relayed & Record<string, unknown>,
      (r) => r.status === "confirmed" || r.status === "failed",
      `${path} to settle`,
      30_000,
    );
  const vote = async (body: {
    proposalId: bigint;
    support: Support;
    voter: Address;
    signature: Hex;
    reason?: string;
  }) => {
    const answer = await post("/v1/governance/votes", { ...body, proposalId: body.proposalId.toString() });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body.status).toBe("queued");
    return answer.body.voteId as string;
  };
  const caughtUp = async () =>
    waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
  const proposal = async (id: bigint) => {
    await caughtUp();
    return (await (await api.call(`/v1/governance/proposals/${id}`)).json()) as {
      state: string;
      title: string;
      tally: { for: string; against: string; abstain: string };
      quorum: string;
      quorumReached: boolean;
      calls: { summary: string | null; contract: string | null }[];
      start: { block: number; time: string; estimated: boolean };
      end: { block: number; time: string; estimated: boolean };
      eta: string | null;
      votes: { data: { voter: string; support: string; weight: string; reason: string }[]; hasMore: boolean };
    };
  };
  /** The API's tallies against the governor's proposalVotes, now. */
  const expectTallies = async (id: bigint) => {
    const p = await proposal(id);
    const [against, forVotes, abstain] = await g().read.proposalVotes([id]);
    const units = (v: bigint) => (v / ZSDG).toString();
    expect(p.tally).toEqual({ for: units(forVotes), against: units(against), abstain: units(abstain) });
    return p;
  };
  const events = () =>
    receiver.received.map((r) => verify(secret, r) as { type: string; data: Record<string, unknown> });
  const eventOf = (type: string, proposalId: bigint) =>
    eventually(
      async () => events().find((e) => e.type === type && e.data.proposalId === proposalId.toString()),
      (e) => e !== undefined,
      `${type} of ${proposalId}`,
      30_000,
    );

  beforeAll(async () => {
    // Room to look at proposals while they are pending (each transaction and indexer nudge mines a block).
    s = await deploySystem({ votingDelayBlocks: 15 });
    dir = mkdtempSync(join(tmpdir(), "zsd-api-governance-"));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    indexer = await startIndexer({
      rpcUrl: s.rpcUrl,
      deploymentFile,
      // On PostgreSQL Ponder is ready in about half the time it takes on PGlite.
      databaseUrl: (indexerDb = await createTestDatabase("zsd_indexer")).url,
      schema: "zsd_api_governance",
    });
    storage = await openStorage("postgres");
    api = await startRelayApi(s, storage.db, {
      INDEXER_URL: indexer.url,
      GOVERNANCE_DELEGATIONS_PER_DAY: "3",
      WEBHOOK_POLL_MS: "50",
    });
    receiver = await startReceiver();
    const agent = await api.call(
      "/v1/agents/register",
      json({ name: "governance desk", webhookUrl: receiver.url, events: EVENTS, role: "observer" }),
    );
    expect(agent.status).toBe(201);
    secret = ((await agent.json()) as { secret: string }).secret;
    api.worker!.start();
    api.webhooks.start();
    for (const [holder, amount] of [
      [alice, 300_000n],
      [bob, 200_000n],
      [carol, 100_000n],
    ] as const) {
      await s.receipt(await s.as(deployer).governanceToken.write.transfer([holder.address, amount * ZSDG]));
    }
  });

  afterAll(async () => {
    await api?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("relays delegations signed by the holders, and refuses bad ones with their codes", async () => {
    const path = "/v1/governance/delegations";
    // Bob signs for Alice; an expired one; a nonce ahead of the token's.
    await refused(path, await delegation(bob, { delegator: alice.address }), 422, "delegation_signature_invalid");
    await refused(path, await delegation(alice, { expiry: 1n }), 422, "delegation_expired");
    await refused(path, await delegation(alice, { nonce: 5n }), 422, "nonce_invalid");

    const signed = await Promise.all([alice, bob, carol].map((holder) => delegation(holder)));
    const ids = [];
    for (const body of signed) {
      const answer = await post(path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      ids.push(answer.body.delegationId);
    }
    for (const id of ids) {
      const d = await settled(`/v1/governance/delegations/${id}`);
      expect([d.status, d.txHash]).toEqual(["confirmed", expect.stringMatching(/^0x[0-9a-f]{64}$/)]);
    }
    expect(await s.read.governanceToken.read.getVotes([alice.address])).toBe(300_000n * ZSDG);
    expect(await s.read.governanceToken.read.delegates([carol.address])).toBe(carol.address);
    // What a wallet signs the next delegation and a ballot with, and the holder's votes as the token has them.
    const holder = await (await api.call(`/v1/governance/holders/${alice.address.toLowerCase()}`)).json();
    expect(holder).toEqual({
      object: "governance_holder",
      address: alice.address,
      balance: "300000",
      votes: "300000",
      delegate: alice.address,
      delegationNonce: (await s.read.governanceToken.read.nonces([alice.address])).toString(),
      domains: {
        governor: { ...(await domain("governor")), chainId: s.deployment.chainId },
        token: { ...(await domain("governanceToken")), chainId: s.deployment.chainId },
      },
    });
    const stranger = await (await api.call(`/v1/governance/holders/0x${"1".repeat(40)}`)).json();
    expect(stranger).toMatchObject({ balance: "0", votes: "0", delegate: null, delegationNonce: "0" });
    const bad = await api.call("/v1/governance/holders/0x1234");
    expect([bad.status, ((await bad.json()) as Problem).code]).toEqual([400, expect.any(String)]);
    // The same signature again: its nonce is used now.
    await refused(path, signed[0], 409, "nonce_used");
    // A fourth delegation within the day is over this account's allowance of three.
    const over = await refused(path, await delegation(deployer), 409, "delegation_limit_reached");
    expect(over.perDay).toBe(3);
  });

  it("lists proposals from the indexer with their calls in words, and refuses votes before they open", async () => {
    const propose = async (calldata: Hex, description: string, target: Address = s.read.minter.address) => {
      const targets: Address[] = [target];
      await s.receipt(await s.as(deployer).governor.write.propose([targets, [0n], [calldata], description]));
      const descriptionHash = keccak256(toHex(description));
      const id = await g().read.hashProposal([targets, [0n], [calldata], descriptionHash]);
      return { id, targets, values: [0n], calldatas: [calldata], descriptionHash };
    };
    const ratio = encodeFunctionData({
      abi: positionManagerAbi,
      functionName: "setMinCollateralRatio",
      args: [17_000n],
    });
    const created = await propose(
      ratio,
      "# Raise the minimum collateral ratio to 170%\n\nZEC's volatility rose.",
      s.read.positions.address,
    );
    first = created.id;
    action = created;
    second = (
      await propose(
        encodeFunctionData({ abi: stableMinterAbi, functionName: "setMaxRootAge", args: [43_200n] }),
        "Halve the root age",
      )
    ).id;

    const p = await proposal(first);
    expect(p.state).toBe("pending");
    expect(p.title).toBe("Raise the minimum collateral ratio to 170%");
    expect(p.calls).toEqual([
      expect.objectContaining({ contract: "PositionManager", summary: "PositionManager.setMinCollateralRatio(17000)" }),
    ]);
    expect(p.quorum).toBe("40000");
    expect(p.end.block).toBe(Number(await g().read.proposalDeadline([first])));
    expect(p.end.estimated).toBe(true);
    await expectTallies(first);

    const list = (await (await api.call("/v1/governance/proposals?state=pending&limit=1")).json()) as {
      data: { id: string }[];
      hasMore: boolean;
    };
    expect([list.data.map((x) => x.id), list.hasMore]).toEqual([[second.toString()], true]);
    const next = (await (
      await api.call(`/v1/governance/proposals?state=pending&limit=1&startingAfter=${second}`)
    ).json()) as { data: { id: string }[]; hasMore: boolean };
    expect([next.data.map((x) => x.id), next.hasMore]).toEqual([[first.toString()], false]);
    const overview = (await (await api.call("/v1/governance")).json()) as { data: unknown[]; parameters: unknown };
    expect(overview.data).toHaveLength(2);
    expect(overview.parameters).toMatchObject({
      votingDelayBlocks: 15,
      votingPeriodBlocks: 20,
      quorumPercent: "4",
      timelockDelaySeconds: 60,
    });
    expect((await api.call("/v1/governance/proposals/12345")).status).toBe(404);

    const early = await refused(
      "/v1/governance/votes",
      {
        proposalId: first.toString(),
        support: "for",
        voter: alice.address,
        signature: await ballot(alice, first, "for", await keyedNonce(alice.address, first)),
      },
      409,
      "proposal_not_active",
    );
    expect(early.proposalState).toBe("pending");
    // Nothing to queue or execute before the vote, nor for a proposal the governor never had; nothing relayed.
    const at = (action: "queue" | "execute", id: bigint | string = first) => `/v1/governance/proposals/${id}/${action}`;
    const soon = await refused(at("queue"), {}, 409, "proposal_not_succeeded");
    expect(soon.detail).toMatch(/^Proposal \d+ is pending; voting ends after block \d+/);
    expect(soon.proposalState).toBe("pending");
    expect(await refused(at("execute"), {}, 409, "proposal_not_ready")).toMatchObject({
      proposalState: "pending",
      eta: null,
    });
    await refused(at("queue", 12345n), {}, 404, "resource_not_found");
    await refused(at("execute", 12345n), {}, 404, "resource_not_found");
    await refused(at("queue", "twelve"), {}, 400, "validation_failed");
    expect(await storage.db.query("SELECT 1 FROM governance_proposal_actions")).toEqual([]);
    await eventOf("governance.proposal.created", first);
  });

  it("relays three holders' ballots; the API's tallies equal the governor's at each stage", async () => {
    // Both open once the later snapshot (the second proposal's) is past.
    const opens = await g().read.proposalSnapshot([second]);
    await s.mineBlocks(Number(opens - (await s.publicClient.getBlockNumber())) + 1);
    expect([await g().read.state([first]), await g().read.state([second])]).toEqual([1, 1]);

    // Carol signs a ballot on the second proposal at her sequential nonce 0 …
    const stale = await ballot(carol, second, "for", 0n);
    // … then votes on the first one at the same sequential nonce, through the relay.
    votes.carol = await vote({
      proposalId: first,
      support: "abstain",
      voter: carol.address,
      signature: await ballot(carol, first, "abstain", 0n),
    });
    expect((await settled(`/v1/governance/votes/${votes.carol}`)).status).toBe("confirmed");
    await expectTallies(first);
    // Her older ballot can never go through now (OpenZeppelin issue 5565) …
    await refused(
      "/v1/governance/votes",
      { proposalId: second.toString(), support: "for", voter: carol.address, signature: stale },
      409,
      "nonce_used",
    );
    // … while one at the nonce keyed by that proposal can.
    const keyed = await vote({
      proposalId: second,
      support: "for",
      voter: carol.address,
      signature: await ballot(carol, second, "for", await keyedNonce(carol.address, second)),
    });
    expect((await settled(`/v1/governance/votes/${keyed}`)).status).toBe("confirmed");

    // Alice signs both proposals' ballots first, then they are relayed the other way round.
    const forFirst = await ballot(alice, first, "for", await keyedNonce(alice.address, first));
    const forSecond = await ballot(alice, second, "against", await keyedNonce(alice.address, second));
    const secondVote = await vote({
      proposalId: second,
      support: "against",
      voter: alice.address,
      signature: forSecond,
    });
    expect((await settled(`/v1/governance/votes/${secondVote}`)).status).toBe("confirmed");
    votes.alice = await vote({ proposalId: first, support: "for", voter: alice.address, signature: forFirst });
    const aliceVote = await settled(`/v1/governance/votes/${votes.alice}`);
    expect(aliceVote).toMatchObject({ status: "confirmed", weight: "300000", support: "for" });
    expect(await g().read.hasVoted([first, alice.address])).toBe(true);
    expect(await g().read.hasVoted([second, alice.address])).toBe(true);
    await expectTallies(first);
    await expectTallies(second);

    votes.bob = await vote({
      proposalId: first,
      support: "against",
      voter: bob.address,
      signature: await extendedBallot(bob, first, "against", "Too soon after the last change."),
      reason: "Too soon after the last change.",
    });
    expect((await settled(`/v1/governance/votes/${votes.bob}`)).status).toBe("confirmed");
    const p = await expectTallies(first);
    expect(p.tally).toEqual({ for: "300000", against: "200000", abstain: "100000" });
    expect(p.quorumReached).toBe(true);
    expect(p.votes.data.map((v) => [v.voter, v.support, v.weight, v.reason])).toEqual([
      [carol.address, "abstain", "100000", ""],
      [alice.address, "for", "300000", ""],
      [bob.address, "against", "200000", "Too soon after the last change."],
    ]);
    const page = (await (
      await api.call(`/v1/governance/proposals/${first}/votes?limit=2&startingAfter=${carol.address}`)
    ).json()) as { data: { voter: string }[]; hasMore: boolean };
    expect([page.data.map((v) => v.voter), page.hasMore]).toEqual([[alice.address, bob.address], false]);

    const confirmed = await eventually(
      async () => events().filter((e) => e.type === "governance.vote.confirmed"),
      (list) => list.length >= 5,
      "five governance.vote.confirmed events",
    );
    expect(confirmed.find((e) => e.data.voteId === votes.bob)?.data).toMatchObject({
      proposalId: first.toString(),
      voter: bob.address,
      support: "against",
      weight: "200000",
      reason: "Too soon after the last change.",
    });
  });

  it("refuses ballots with a code per cause, before anything is spent", async () => {
    const count = async () =>
      Number((await storage.db.query<{ n: string }>("SELECT count(*) AS n FROM governance_votes"))[0]!.n);
    const before = await count();
    const path = "/v1/governance/votes";
    const body = async (signer: HDAccount, support: Support, voter: Address, id: bigint, nonce?: bigint) => ({
      proposalId: id.toString(),
      support,
      voter,
      signature: await ballot(signer, id, support, nonce ?? (await keyedNonce(voter, id)), voter),
    });
    // Alice's vote on the first proposal is counted.
    await refused(path, await body(alice, "against", alice.address, first), 409, "already_voted");
    // The deployer holds tokens but never delegated: no votes at the snapshot.
    await refused(path, await body(deployer, "for", deployer.address, second), 422, "no_voting_power");
    // Bob has not voted on the second proposal: Alice's signature for him, and his for another support.
    await refused(path, await body(alice, "for", bob.address, second), 422, "ballot_signature_invalid");
    const otherSupport = { ...(await body(bob, "for", bob.address, second)), support: "against" };
    await refused(path, otherSupport, 422, "ballot_signature_invalid");
    // A ballot signed at a nonce ahead of the governor's, said so.
    const ahead = (await keyedNonce(bob.address, second)) + 5n;
    await refused(
      path,
      { ...(await body(bob, "for", bob.address, second, ahead)), nonce: ahead.toString() },
      422,
      "nonce_invalid",
    );
    // No such proposal.
    await refused(
      path,
      { ...(await body(bob, "for", bob.address, second)), proposalId: "12345" },
      404,
      "resource_not_found",
    );
    expect(await count()).toBe(before);
  });

  it("reconciles a ballot the chain took meanwhile: a copy of its call confirms it, the voter's own vote fails it", async () => {
    await api.worker!.stop();
    // Bob's ballot on the second proposal is queued; someone sends the very same call first.
    const signature = await ballot(bob, second, "for", await keyedNonce(bob.address, second));
    const copied = await vote({ proposalId: second, support: "for", voter: bob.address, signature });
    const copy = await s.receipt(
      await s.as(carol).governor.write.castVoteBySig([second, SUPPORT.for, bob.address, signature]),
    );

    // Dave delegates, a third proposal opens, his ballot is queued, and he then votes in person.
    const dave = accounts.pauser;
    await s.receipt(await s.as(deployer).governanceToken.write.transfer([dave.address, 50_000n * ZSDG]));
    await s.receipt(await s.as(dave).governanceToken.write.delegate([dave.address]));
    const calldata = encodeFunctionData({ abi: priceFeedAbi, functionName: "setMaxPriceAge", args: [1_800n] });
    await s.receipt(
      await s.as(deployer).governor.write.propose([[s.read.priceFeed.address], [0n], [calldata], "Price age 30 min"]),
    );
    const third = await g().read.hashProposal([
      [s.read.priceFeed.address],
      [0n],
      [calldata],
      keccak256(toHex("Price age 30 min")),
    ]);
    const opens = await g().read.proposalSnapshot([third]);
    await s.mineBlocks(Number(opens - (await s.publicClient.getBlockNumber())) + 1);
    const overtaken = await vote({
      proposalId: third,
      support: "for",
      voter: dave.address,
      signature: await ballot(dave, third, "for", await keyedNonce(dave.address, third)),
    });
    await s.receipt(await s.as(dave).governor.write.castVote([third, SUPPORT.against]));

    api.worker!.start();
    expect(await settled(`/v1/governance/votes/${copied}`)).toMatchObject({
      status: "confirmed",
      txHash: copy.transactionHash,
    });
    expect(await settled(`/v1/governance/votes/${overtaken}`)).toMatchObject({
      status: "failed",
      failureCode: "already_voted",
    });
    // Counted once each: Bob's for on the second proposal, Dave's own against on the third.
    expect((await g().read.proposalVotes([third]))[0]).toBe(50_000n * ZSDG);
    await expectTallies(second);
  });

  it("queues and executes the proposal through the relay when the governor takes it: the position manager's ratio changes, and agents hear of it", async () => {
    const at = (action: "queue" | "execute", id = first) => `/v1/governance/proposals/${id}/${action}`;
    const actions = async () =>
      Number((await storage.db.query<{ n: string }>("SELECT count(*) AS n FROM governance_proposal_actions"))[0]!.n);
    await s.mineBlocks(Number(await g().read.votingPeriod()));
    expect((await proposal(first)).state).toBe("succeeded");
    // Succeeded: queued first, then executed.
    expect((await refused(at("execute"), {}, 409, "proposal_not_ready")).proposalState).toBe("succeeded");
    await api.worker!.stop();
    const asked = await post(at("queue"), {});
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    expect(asked.body).toMatchObject({ object: "proposal_action", action: "queue", status: "queued", eta: null });
    const queueId = asked.body.actionId;
    // Asked again while it is relayed: that one is named, to this account only.
    expect((await refused(at("queue"), {}, 409, "proposal_action_pending")).actionId).toBe(queueId);
    const other = await api.keys.createAccount("another desk");
    const { secret: otherKey } = await api.keys.create(other.id, api.config.ENVIRONMENT, "governance");
    const theirs = await api.call(at("queue"), { ...json({}), key: otherKey });
    const theirProblem = (await theirs.json()) as Problem;
    expect([theirs.status, theirProblem.code, theirProblem.actionId]).toEqual([
      409,
      "proposal_action_pending",
      undefined,
    ]);
    expect((await api.call(`/v1/governance/actions/${queueId}`, { key: otherKey })).status).toBe(404);
    api.worker!.start();
    const queuedAction = await settled(`/v1/governance/actions/${queueId}`);
    const eta = await g().read.proposalEta([first]);
    expect(queuedAction).toMatchObject({
      status: "confirmed",
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      eta: new Date(Number(eta) * 1000).toISOString(),
    });
    const queued = await expectTallies(first);
    expect(queued.state).toBe("queued");
    expect(queued.eta).toBe(new Date(Number(eta) * 1000).toISOString());
    await eventOf("governance.proposal.queued", first);

    // In the timelock: refused until its delay is over, and told when that is.
    expect(await refused(at("execute"), {}, 409, "proposal_not_ready")).toMatchObject({
      proposalState: "queued",
      eta: new Date(Number(eta) * 1000).toISOString(),
    });
    await s.increaseTime(Number(await s.read.timelock.read.getMinDelay()) + 1);
    await api.worker!.stop();
    const executing = await post(at("execute"), {});
    expect(executing.status, JSON.stringify(executing.body)).toBe(202);
    // Anyone may execute it: Alice does, before the relay sends ours, which is then confirmed by her transaction.
    const { targets, values, calldatas, descriptionHash } = action;
    const hers = await s.receipt(
      await s.as(alice).governor.write.execute([targets, values, calldatas, descriptionHash]),
    );
    api.worker!.start();
    expect(await settled(`/v1/governance/actions/${executing.body.actionId}`)).toMatchObject({
      action: "execute",
      status: "confirmed",
      txHash: hers.transactionHash,
      eta: null,
    });
    expect(await s.read.positions.read.minCollateralRatioBps()).toBe(17_000n);
    expect((await proposal(first)).state).toBe("executed");
    const executed = await eventOf("governance.proposal.executed", first);
    expect(executed?.data.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Done: neither can be asked again.
    expect((await refused(at("queue"), {}, 409, "proposal_not_succeeded")).proposalState).toBe("executed");
    expect((await refused(at("execute"), {}, 409, "proposal_not_ready")).proposalState).toBe("executed");

    // Each event exactly once, and as the document's webhooks describe it.
    const created = events().filter((e) => e.type === "governance.proposal.created");
    const ids = created.map((e) => e.data.proposalId);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toEqual(expect.arrayContaining([first.toString(), second.toString()]));
    const check = webhookSchemaCheck(await (await api.call("/v1/openapi.json")).json());
    expect(receiver.received.flatMap((r) => check(JSON.parse(r.body)))).toEqual([]);
  });
  it("fails a queued delegation whose nonce another signature of the delegator used first", async () => {
    await api.worker!.stop();
    // A fresh account (the daily allowance of three is spent): the same database, its own key.
    const other = await api.keys.createAccount("second desk");
    const { secret: key } = await api.keys.create(other.id, api.config.ENVIRONMENT, "delegations");
    const nonce = await s.read.governanceToken.read.nonces([alice.address]);
    const body = await delegation(alice, { nonce });
    const answer = await api.call("/v1/governance/delegations", { ...json(body), key });
    expect(answer.status).toBe(202);
    const { delegationId } = (await answer.json()) as { delegationId: string };
    // Alice signs again at the same nonce and sends it herself.
    const again = await delegation(alice, { nonce, expiry: BigInt(body.expiry) + 1n });
    const { v, r, s: sigS } = parseSignature(again.signature);
    await s.receipt(
      await s
        .as(alice)
        .governanceToken.write.delegateBySig([alice.address, nonce, BigInt(again.expiry), Number(v), r, sigS]),
    );
    api.worker!.start();
    const settledDelegation = await eventually(
      async () => (await (await api.call(`/v1/governance/delegations/${delegationId}`, { key })).json()) as Relayed,
      (d) => d.status === "confirmed" || d.status === "failed",
      "the delegation to settle",
    );
    expect(settledDelegation).toMatchObject({ status: "failed", failureCode: "nonce_used" });
  });
});
