// Compliance on the local chain: agents hear of every mint and redemption
// through signed webhooks (verified with the standardwebhooks library), a
// screener's hold stops a mint or a redemption until it is released or
// rejected, the built-in rules agent fires on the sandbox's magic values,
// a position action is held as a mint is, and required screening waits for
// a verdict or applies the default.
import { parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  positionManagerAbi,
  positionOwnerKey,
  redemptionsAbi,
  redirectTypedData,
  repayTypedData,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { Zsd, describeHold } from "@zsd/sdk/client";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { formatZec, formatZsd } from "@zsd/sdk/units";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, openStorage, startRelayApi } from "../helpers.ts";
import { type Receiver, startReceiver, verify, webhookSchemaCheck } from "../webhook-receiver.ts";

const { alice, bob } = accounts;
const WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
/** Where an owner redirects a refused payout. */
const OTHER =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
/** An address the sandbox's deny-list rule takes as denied (it ends in "dead"). */
const DENIED = "0x000000000000000000000000000000000000dEaD";
const EVENTS = [
  "mint.queued",
  "mint.confirmed",
  "mint.failed",
  "mint.held",
  "mint.released",
  "redemption.requested",
  "redemption.paid",
  "redemption.failed",
  "redemption.held",
  "redemption.released",
  "alert.raised",
  "alert.updated",
  "deposit.recorded",
  "position.action.confirmed",
  "position.action.failed",
  "position.action.held",
  "position.action.released",
];

interface Event {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

async function setUp(s: System, env: Record<string, string> = {}) {
  const storage = await openStorage("postgres");
  const api = await startRelayApi(s, storage.db, {
    WEBHOOK_POLL_MS: "50",
    WEBHOOK_RETRY_SCALE: "0.001",
    MINT_WAIT_MS: "20000",
    ...env,
  });
  api.webhooks.start();
  const receiver = await startReceiver();
  // Other agents post to a receiver of their own: the screener's receiver holds only what was signed for it.
  const others = await startReceiver();
  const agent = async (role: "screener" | "observer", webhookUrl = others.url) => {
    const response = await api.call(
      "/v1/agents/register",
      json({ name: `${role} desk`, webhookUrl, events: EVENTS, role }),
    );
    expect(response.status).toBe(201);
    return (await response.json()) as { agentId: string; secret: string };
  };
  const screener = await agent("screener", receiver.url);
  /** Every verified event the screener received (a bad signature throws). */
  const events = () => receiver.received.map((r) => verify(screener.secret, r) as Event);
  const eventOf = (type: string, match: (data: Record<string, unknown>) => boolean) =>
    eventually(
      async () => events().find((e) => e.type === type && match(e.data)),
      (e) => e !== undefined,
      `a ${type} event`,
    ) as Promise<Event>;
  /**
   * What is wrong with any event either receiver got, against its webhook in
   * /v1/openapi.json (the observers' secrets are theirs: read unsigned), and
   * the types checked.
   */
  const conformance = async () => {
    const check = webhookSchemaCheck(await (await api.call("/v1/openapi.json")).json());
    const delivered = [...receiver.received, ...others.received].map((r) => JSON.parse(r.body) as Event);
    return { problems: delivered.flatMap(check), types: new Set(delivered.map((e) => e.type)) };
  };
  return {
    api,
    receiver,
    screener,
    agent,
    events,
    eventOf,
    conformance,
    db: storage.db,
    close: async () => {
      await api.close();
      await receiver.close();
      await others.close();
      await storage.close();
    },
  };
}

/** Deposit, prove and submit: a verified proof of `amount` ZSD to `recipient`. */
async function proofFor(api: RunningApi, s: System, amount: bigint, recipient: `0x${string}`): Promise<string> {
  const note = createNote();
  const deposit = await api.call(
    "/v1/sandbox/deposits",
    json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
  );
  expect(deposit.status).toBe(201);
  const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: amount, recipient });
  const submitted = await api.call(
    "/v1/proofs/submit",
    json({
      proof: proved.raw.proof,
      publicSignals: publicSignalsToArray(proved.raw.publicSignals),
      owner: proved.binding.owner,
      mintAmount: formatZsd(amount),
      recipient,
    }),
  );
  expect(submitted.status).toBe(201);
  return ((await submitted.json()) as { proofId: string }).proofId;
}

async function mint(api: RunningApi, proofId: string, amount: bigint, recipient: string): Promise<string> {
  const response = await api.call(
    "/v1/mint",
    json({ amount: formatZsd(amount), collateralType: "ZEC", proofId, recipient }),
  );
  expect(response.status).toBe(202);
  return ((await response.json()) as { mintId: string }).mintId;
}

const mintOf = async (api: RunningApi, id: string) =>
  (await (await api.call(`/v1/mints/${id}`)).json()) as Record<string, unknown>;

describe("compliance agents on the local chain", () => {
  let s: System;
  let t: Awaited<ReturnType<typeof setUp>>;
  /** The redemption a screener rejected after its burn, and its on-chain payout (failed, its ZEC held). */
  let refused: { id: string; payoutId: bigint } | undefined;

  beforeAll(async () => {
    s = await deploySystem();
    // Payouts wait for 4 blocks: time to hold a burned redemption before it is paid.
    t = await setUp(s, { PAYOUT_CONFIRMATIONS: "4" });
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
    t.api.worker!.start();
  });
  afterAll(async () => {
    await t?.close();
    await releaseProver();
  });

  it("tells agents of a mint queued and confirmed, signed, with nothing that links it to its deposit", async () => {
    const proofId = await proofFor(t.api, s, 50n * ZSD, alice.address);
    const mintId = await mint(t.api, proofId, 50n * ZSD, alice.address);
    const confirmed = await t.eventOf("mint.confirmed", (d) => d.mintId === mintId);
    const queued = await t.eventOf("mint.queued", (d) => d.mintId === mintId);
    expect(queued.data).toEqual({ mintId, amount: "50", recipient: alice.address });
    // The deposit is told of on its own, by its leaf: nothing in either event names the other.
    const deposits = t.events().filter((e) => e.type === "deposit.recorded");
    expect(deposits.at(-1)!.data).toEqual({
      leafIndex: expect.any(Number),
      amount: "4",
      amountZat: "400000000",
      noteCommitment: expect.stringMatching(/^\d+$/),
    });
    expect(confirmed.data).toMatchObject({ mintId, amount: "50", txHash: expect.stringMatching(/^0x/) });
    const text = JSON.stringify(t.events());
    expect(text).not.toContain(proofId);
    const mintEvents = JSON.stringify(t.events().filter((e) => e.type.startsWith("mint.")));
    expect(mintEvents).not.toMatch(/nullifier|commitment|leaf|proof/i);
  });

  it("holds a mint to a denied address (the rules agent), and a screener's release lets it confirm", async () => {
    const proofId = await proofFor(t.api, s, 20n * ZSD, DENIED);
    const queued = await t.api.call(
      "/v1/mint",
      json({ amount: "20", collateralType: "ZEC", proofId, recipient: DENIED }),
    );
    expect(queued.status).toBe(202);
    const answer = (await queued.json()) as { mintId: string; hold: Record<string, unknown> | null };
    const mintId = answer.mintId;
    const raised = await t.eventOf(
      "alert.raised",
      (d) => (d.alert as { subject: { id: string } }).subject.id === mintId,
    );
    const alert = raised.data.alert as { alertId: string; raisedBy: string; category: string; hold: string };
    // The event carries the hold as it was committed with the alert, not the moment before it.
    expect(alert).toMatchObject({
      raisedBy: "rules",
      category: "denied_address",
      severity: "severe",
      action: "hold",
      hold: "held",
      reason: `${DENIED} ends in "dead", the sandbox's magic value for the deny list.`,
    });
    // The answer to the mint, and the mint read later, say it is held and by whom.
    const hold = { state: "held", alertId: alert.alertId, by: "rules", since: expect.stringMatching(/^\d{4}-/) };
    expect(answer.hold).toEqual(hold);
    await t.eventOf("mint.held", (d) => d.mintId === mintId);
    // The worker passes every 50 ms: a second later the mint is still queued, nothing sent.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await mintOf(t.api, mintId)).toMatchObject({ status: "queued", txHash: null, hold });
    // The SDK's follower (and so `zsd mint`) tells the hold in words instead of a bare "queued".
    const steps: string[] = [];
    const zsd = new Zsd(t.api.secret, { baseUrl: t.api.url });
    await expect(
      zsd.waitForMint(mintId, {
        timeoutMs: 300,
        onProgress: (step) => {
          if (step.step === "confirming") steps.push(step.hold ? describeHold(step.hold) : step.status);
        },
      }),
    ).rejects.toThrow(/still queued/);
    expect(steps).toEqual([`held for review by rules (alert ${alert.alertId})`]);

    const observer = await t.agent("observer");
    const refused = await t.api.call(`/v1/alerts/${alert.alertId}/release`, json({ agentId: observer.agentId }));
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { code: string }).code).toBe("screener_required");

    const released = await t.api.call(
      `/v1/alerts/${alert.alertId}/release`,
      json({ agentId: t.screener.agentId, note: "a test address" }),
    );
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({
      hold: "released",
      history: [
        { status: "open", by: "rules" },
        { status: "released", by: t.screener.agentId, note: "a test address" },
      ],
    });
    await t.eventOf("mint.released", (d) => d.mintId === mintId);
    await t.eventOf("mint.confirmed", (d) => d.mintId === mintId);
    expect(await mintOf(t.api, mintId)).toMatchObject({ status: "confirmed", hold: null });
    expect(await s.read.token.read.balanceOf([DENIED])).toBe(20n * ZSD);
    // Released once: a second decision finds nothing held.
    const again = await t.api.call(
      `/v1/alerts/${alert.alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "late" }),
    );
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("not_held");
  });

  it("fails a mint a screener holds and rejects, giving its proof back", async () => {
    t.api.worker!.stop();
    const proofId = await proofFor(t.api, s, 10n * ZSD, bob.address);
    const mintId = await mint(t.api, proofId, 10n * ZSD, bob.address);
    const raised = await t.api.call(
      "/v1/agents/alerts",
      json({
        agentId: t.screener.agentId,
        subject: { type: "mint", id: mintId },
        severity: "high",
        category: "sanctions",
        reason: "The recipient matches a list entry.",
        action: "hold",
      }),
    );
    expect(raised.status).toBe(201);
    const { alertId } = (await raised.json()) as { alertId: string };
    t.api.worker!.start();
    const rejected = await t.api.call(
      `/v1/alerts/${alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "sanctions_match" }),
    );
    expect(rejected.status).toBe(200);
    expect(await mintOf(t.api, mintId)).toMatchObject({
      status: "failed",
      txHash: null,
      failureCode: "compliance_rejected",
      failureReason: expect.stringContaining("sanctions_match"),
    });
    await t.eventOf("mint.failed", (d) => d.mintId === mintId && d.failureCode === "compliance_rejected");
    const proof = (await (await t.api.call(`/v1/proofs/${proofId}`)).json()) as { status: string };
    expect(proof.status).toBe("verified");
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(0n);

    // The alert is then closed by the agent, with its reason; a closed alert does not move again.
    const closed = await t.api.call(
      `/v1/alerts/${alertId}`,
      json({ agentId: t.screener.agentId, status: "confirmed", closeReason: "True match." }),
    );
    expect(await closed.json()).toMatchObject({ status: "confirmed", closeReason: "True match." });
    const reopened = await t.api.call(
      `/v1/alerts/${alertId}`,
      json({ agentId: t.screener.agentId, status: "in_review" }),
    );
    expect(reopened.status).toBe(409);
    await t.eventOf("alert.updated", (d) => (d.alert as { status: string }).status === "confirmed");
  });

  it("raises the rules' alerts on magic amounts without holding, and lists alerts with filters", async () => {
    const proofId = await proofFor(t.api, s, 10_130n * (ZSD / 1000n), alice.address);
    const mintId = await mint(t.api, proofId, 10_130n * (ZSD / 1000n), alice.address);
    await t.eventOf("mint.confirmed", (d) => d.mintId === mintId);
    const fastAmount = 1_114n * (ZSD / 100n); // 11.14: the velocity rule's magic cents
    const fast = await mint(t.api, await proofFor(t.api, s, fastAmount, alice.address), fastAmount, alice.address);
    const velocity = await t.eventOf(
      "alert.raised",
      (d) => (d.alert as { subject: { id: string } }).subject.id === fast,
    );
    // Alerted, not held: it mints (and later balances count it).
    await t.eventOf("mint.confirmed", (d) => d.mintId === fast);
    expect(velocity.data.alert).toMatchObject({
      raisedBy: "rules",
      category: "velocity",
      severity: "medium",
      action: "none",
      // A magic value fired it, and the reason says so rather than quoting a count under the limit.
      reason: expect.stringMatching(
        /^The sandbox's magic cents \.14 fire this rule for a mint of 11\.14 ZSD \(\d+ mints for 0x/,
      ),
    });
    const list = (await (await t.api.call(`/v1/agents/alerts?subjectId=${mintId}&raisedBy=rules`)).json()) as {
      data: { category: string; action: string; hold: string | null; reason: string }[];
    };
    expect(list.data).toEqual([expect.objectContaining({ category: "large_amount", action: "none", hold: null })]);
    expect(list.data[0]!.reason).toBe(
      "The sandbox's magic cents .13 fire this rule for a mint of 10.13 ZSD (the threshold is 10000 ZSD).",
    );
    const severe = (await (await t.api.call("/v1/agents/alerts?severity=severe")).json()) as {
      data: { category: string }[];
    };
    expect(severe.data.map((a) => a.category)).toEqual(["denied_address"]);
    const page = (await (await t.api.call("/v1/agents/alerts?limit=1")).json()) as {
      data: { alertId: string }[];
      hasMore: boolean;
    };
    expect(page.hasMore).toBe(true);
    const next = (await (
      await t.api.call(`/v1/agents/alerts?limit=100&startingAfter=${page.data[0]!.alertId}`)
    ).json()) as { data: { alertId: string }[] };
    expect(next.data.map((a) => a.alertId)).not.toContain(page.data[0]!.alertId);
  });

  it("fails on-chain a burned redemption a screener holds and rejects, its ZEC held for the owner (no ZSD back)", async () => {
    const amount = 30n * ZSD;
    const before = await s.read.token.read.balanceOf([alice.address]);
    const sealedAddress = s.seal(WITHDRAW, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
    const response = await t.api.call(
      "/v1/redeem",
      json({
        amount: formatZsd(amount),
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      }),
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await t.eventOf("redemption.requested", (d) => d.redemptionId === id);
    const burned = await eventually(
      async () => (await (await t.api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => r.status === "burned",
      "the burn",
    );
    const raised = await t.api.call(
      "/v1/agents/alerts",
      json({
        agentId: t.screener.agentId,
        subject: { type: "redemption", id },
        severity: "severe",
        category: "sanctions",
        reason: "The owner matches a list entry.",
        action: "hold",
      }),
    );
    expect(raised.status).toBe(201);
    const { alertId } = (await raised.json()) as { alertId: string };
    await t.eventOf("redemption.held", (d) => d.redemptionId === id);
    expect(burned.hold).toBeNull();
    // Past its confirmations, a held payout still is not paid, and the redemption says why.
    await s.mineBlocks(6);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await (await t.api.call(`/v1/redemptions/${id}`)).json()).toMatchObject({
      status: "burned",
      hold: { state: "held", alertId, by: t.screener.agentId, since: expect.any(String) },
    });

    const rejected = await t.api.call(
      `/v1/alerts/${alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "sanctions_match" }),
    );
    expect(rejected.status).toBe(200);
    const held = await eventually(
      async () => (await (await t.api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => r.status === "failed",
      "the failure",
    );
    expect(held).toMatchObject({ zecHeld: burned.zecDue, failureCode: "compliance_rejected" });
    expect(held.failureReason).toMatch(
      /^Compliance review refused this payout\. Its ZEC is held on-chain for the owner/,
    );
    expect((await s.payoutFailed(BigInt(burned.redemptionId as string)))?.reason).toBe("compliance_rejected");
    refused = { id, payoutId: BigInt(burned.redemptionId as string) };
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(before - amount);
    await t.eventOf(
      "redemption.failed",
      (d) =>
        d.redemptionId === id &&
        d.zecHeld === burned.zecDue &&
        d.payoutId === burned.redemptionId &&
        typeof d.redirect === "string",
    );
  });

  it("refuses through the API a redirect of a payout compliance refused to an address, and holds one made on-chain: rejected, it fails again; released, it is paid", async () => {
    const { id, payoutId } = refused!;
    const payoutStatus = async (payout: bigint) => (await s.read.redemptions.read.getPayout([payout])).status;
    // Through the API: a clear refusal, nothing queued (into a note it would be allowed: it stays in the pool).
    const nonce = await s.read.redemptions.read.nonces([alice.address]);
    const deadline = (await s.publicClient.getBlock()).timestamp + 3600n;
    const redirectTo = s.seal(OTHER, alice.address);
    const signature = await alice.signTypedData(
      redirectTypedData(
        { chainId: s.chainId, verifyingContract: s.read.redemptions.address },
        { id: payoutId, sealedAddress: redirectTo, noteCommitment: 0n, nonce, deadline },
      ),
    );
    const viaApi = await t.api.call(
      `/v1/redemptions/${id}/redirect`,
      json({ sealedAddress: redirectTo, deadline: Number(deadline), signature }),
    );
    expect(viaApi.status).toBe(409);
    expect(await viaApi.json()).toMatchObject({
      code: "payout_compliance_rejected",
      payoutId: payoutId.toString(),
      detail: expect.stringContaining("into a note"),
    });
    expect(await payoutStatus(payoutId)).toBe(3);

    /** The owner redirects `from` to OTHER on-chain herself; the new payout is held under an alert. */
    const redirectOnChain = async (from: bigint) => {
      const receipt = await s.receipt(
        await s.as(alice).redemptions.write.redirect([from, s.seal(OTHER, alice.address), 0n]),
      );
      const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRedirected" });
      const newId = event!.args.newId;
      // Past its confirmations (the payouts wait for 4) it is found, held, and still not paid.
      await s.mineBlocks(6);
      const held = await t.eventOf("redemption.held", (d) => d.payoutId === newId.toString());
      expect(held.data).toMatchObject({ redemptionId: id, awaitingVerdict: false });
      const raised = await t.eventOf(
        "alert.raised",
        (d) => (d.alert as { alertId: string }).alertId === held.data.alertId,
      );
      expect(raised.data.alert).toMatchObject({ action: "hold", hold: "held" });
      const alert = (await (await t.api.call(`/v1/alerts/${held.data.alertId as string}`)).json()) as Record<
        string,
        unknown
      >;
      expect(alert).toMatchObject({
        raisedBy: "payouts",
        subject: { type: "payout", id: newId.toString() },
        action: "hold",
        hold: "held",
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await payoutStatus(newId)).toBe(1);
      return { newId, alertId: held.data.alertId as string };
    };

    // Rejected: failed on-chain again, compliance_rejected, its ZEC held for the owner.
    const first = await redirectOnChain(payoutId);
    const rejected = await t.api.call(
      `/v1/alerts/${first.alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "sanctions_match" }),
    );
    expect(rejected.status).toBe(200);
    await t.eventOf("redemption.failed", (d) => d.payoutId === first.newId.toString() && d.redemptionId === id);
    expect((await s.payoutFailed(first.newId))?.reason).toBe("compliance_rejected");

    // Redirected on-chain again: held again (the refusal follows the ZEC); released, it is paid.
    const second = await redirectOnChain(first.newId);
    const released = await t.api.call(
      `/v1/alerts/${second.alertId}/release`,
      json({ agentId: t.screener.agentId, note: "cleared after review" }),
    );
    expect(released.status).toBe(200);
    await t.eventOf("redemption.released", (d) => d.payoutId === second.newId.toString());
    await eventually(
      () => payoutStatus(second.newId),
      (status) => status === 2,
      "the payout settled",
    );
    expect(await s.payoutCompleted(second.newId)).toBeDefined();
  });

  it("fails a redemption rejected before its burn, and refuses the same signature posted again", async () => {
    t.api.worker!.stop();
    const amount = 7n * ZSD;
    const sealedAddress = s.seal(WITHDRAW, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
    const body = json({
      amount: formatZsd(amount),
      sealedAddress,
      owner: alice.address,
      permit: { deadline: Number(deadline), ...sig },
    });
    const response = await t.api.call("/v1/redeem", body);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const raised = await t.api.call(
      "/v1/agents/alerts",
      json({
        agentId: t.screener.agentId,
        subject: { type: "redemption", id },
        severity: "high",
        category: "sanctions",
        reason: "The owner matches a list entry.",
        action: "hold",
      }),
    );
    const { alertId } = (await raised.json()) as { alertId: string };
    const rejected = await t.api.call(
      `/v1/alerts/${alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "sanctions_match" }),
    );
    expect(rejected.status).toBe(200);
    t.api.worker!.start();
    expect(await (await t.api.call(`/v1/redemptions/${id}`)).json()).toMatchObject({
      status: "failed",
      zecHeld: null,
      failureCode: "compliance_rejected",
    });
    // The same signed permit again: refused, nothing queued, nothing burned.
    const before = await s.read.token.read.balanceOf([alice.address]);
    const again = await t.api.call("/v1/redeem", body);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "redemption_rejected", id });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(before);
    // A new signature at the same nonce is a new request, reviewed on its own (the next test's).
  });

  it("pays a redemption nobody holds and says so", async () => {
    const amount = 5n * ZSD;
    const sealedAddress = s.seal(WITHDRAW, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
    const response = await t.api.call(
      "/v1/redeem",
      json({
        amount: formatZsd(amount),
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      }),
    );
    const { id } = (await response.json()) as { id: string };
    await eventually(
      async () => (await (await t.api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => r.status === "burned",
      "the burn",
    );
    await s.mineBlocks(4);
    const paid = await t.eventOf("redemption.paid", (d) => d.redemptionId === id);
    expect(paid.data).toMatchObject({ zecPaid: "0.0995", zcashTxId: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("holds a redemption that pays a deny-listed Zcash address, as it holds a position action; released, it is paid", async () => {
    await t.db.query("INSERT INTO compliance_deny_list (address, reason) VALUES ($1, 'a flagged payee')", [OTHER]);
    try {
      const amount = 3n * ZSD;
      const sealedAddress = s.seal(OTHER, alice.address);
      const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
      const response = await t.api.call(
        "/v1/redeem",
        json({
          amount: formatZsd(amount),
          sealedAddress,
          owner: alice.address,
          permit: { deadline: Number(deadline), ...sig },
        }),
      );
      expect(response.status).toBe(202);
      const { id, hold } = (await response.json()) as { id: string; hold: { alertId: string } | null };
      const raised = await t.eventOf("alert.raised", (d) => (d.alert as { subject: { id: string } }).subject.id === id);
      expect(raised.data.alert).toMatchObject({
        raisedBy: "rules",
        subject: { type: "redemption", id },
        category: "denied_address",
        hold: "held",
        reason: "The Zcash address this redemption pays is on the deny list (a flagged payee).",
      });
      expect(hold).toMatchObject({ state: "held", by: "rules" });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await (await t.api.call(`/v1/redemptions/${id}`)).json()).toMatchObject({ status: "requested" });
      const released = await t.api.call(
        `/v1/alerts/${hold!.alertId}/release`,
        json({ agentId: t.screener.agentId, note: "a known payee" }),
      );
      expect(released.status).toBe(200);
      await eventually(
        async () => (await (await t.api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
        (r) => r.status === "burned" || r.status === "paid",
        "the burn",
      );
    } finally {
      await t.db.query("DELETE FROM compliance_deny_list WHERE address = $1", [OTHER]);
    }
  });

  it("holds a position action as a mint: the signer's later actions wait with it until released; a rejected one is never sent", async () => {
    const minted = await s.depositAndMint({ amountZat: 6n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    const positionId = opened!.args.positionId;
    const owner = privateKeyToAccount(positionOwnerKey(minted.note));
    const domain = { chainId: s.chainId, verifyingContract: s.read.minter.address };
    const deadline = (await s.publicClient.getBlock()).timestamp + 3600n;
    const nonceOf = async (signer: string) =>
      BigInt(((await (await t.api.call(`/v1/positions/terms?signer=${signer}`)).json()) as { nonce: string }).nonce);
    const actionOf = async (actionId: string) =>
      (await (await t.api.call(`/v1/positions/${positionId}/actions/${actionId}`)).json()) as Record<string, unknown>;
    const withdraw = async (amountZat: bigint, zcashAddress: string) => {
      const sealedAddress = s.seal(zcashAddress, owner.address);
      const typed = withdrawCollateralTypedData(domain, {
        positionId,
        amountZat,
        sealedAddress,
        noteCommitment: 0n,
        nonce: await nonceOf(owner.address),
        deadline,
      });
      const response = await t.api.call(
        `/v1/positions/${positionId}/withdraw`,
        json({
          amount: formatZec(amountZat),
          destination: { sealedAddress },
          deadline: Number(deadline),
          signature: await owner.signTypedData(typed),
        }),
      );
      expect(response.status).toBe(202);
      return (await response.json()) as { actionId: string; hold: Record<string, unknown> | null };
    };
    // A payee compliance flagged: the rules agent holds a withdrawal that pays it.
    await t.db.query("INSERT INTO compliance_deny_list (address, reason) VALUES ($1, 'a flagged payee')", [OTHER]);
    // Through the SDK, as `zsd position <id> withdraw` runs it: its follower says who holds the action.
    const steps: string[] = [];
    let flaggedId = "";
    const zsd = new Zsd(t.api.secret, { baseUrl: t.api.url });
    await expect(
      zsd.withdrawFromPosition({
        positionId: positionId.toString(),
        note: minted.note,
        amount: "1",
        to: { zcashAddress: OTHER },
        timeoutMs: 300,
        onProgress: (step) => {
          if (step.step !== "following") return;
          flaggedId = step.id;
          steps.push(step.hold ? describeHold(step.hold) : step.status);
        },
      }),
    ).rejects.toThrow(/still queued/);
    const flagged = (await actionOf(flaggedId)) as { actionId: string; hold: Record<string, unknown> | null };
    const raised = await t.eventOf(
      "alert.raised",
      (d) => (d.alert as { subject: { id: string } }).subject.id === flagged.actionId,
    );
    const alert = raised.data.alert as { alertId: string };
    expect(raised.data.alert).toMatchObject({
      raisedBy: "rules",
      subject: { type: "position_action", id: flagged.actionId },
      category: "denied_address",
      action: "hold",
      hold: "held",
      reason: "The Zcash address this position action pays is on the deny list (a flagged payee).",
    });
    const hold = { state: "held", alertId: alert.alertId, by: "rules", since: expect.stringMatching(/^\d{4}-/) };
    expect(flagged.hold).toEqual(hold);
    expect(steps).toEqual([`held for review by rules (alert ${alert.alertId})`]);
    await t.eventOf("position.action.held", (d) => d.actionId === flagged.actionId && d.alertId === alert.alertId);
    // The owner's next action, signed at the next nonce, is not held itself, but cannot go before the held one.
    const next = await withdraw(ZEC / 2n, WITHDRAW);
    expect(next.hold).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await actionOf(flagged.actionId)).toMatchObject({ status: "queued", txHash: null, hold });
    expect(await actionOf(next.actionId)).toMatchObject({ status: "queued", txHash: null, hold: null });

    const released = await t.api.call(
      `/v1/alerts/${alert.alertId}/release`,
      json({ agentId: t.screener.agentId, note: "a known payee" }),
    );
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ hold: "released" });
    await t.eventOf("position.action.released", (d) => d.actionId === flagged.actionId);
    for (const { actionId } of [flagged, next]) {
      await t.eventOf("position.action.confirmed", (d) => d.actionId === actionId);
    }
    expect(await actionOf(flagged.actionId)).toMatchObject({ status: "confirmed", released: "1", hold: null });
    await t.db.query("DELETE FROM compliance_deny_list WHERE address = $1", [OTHER]);

    // A screener holds a queued repayment and rejects it: it fails unsent, the debt as it was.
    t.api.worker!.stop();
    const debt = async () => (await s.read.positions.read.getPosition([positionId])).debt;
    const before = await debt();
    const typed = repayTypedData(domain, {
      positionId,
      maxAmount: 10n * ZSD,
      payer: alice.address,
      nonce: await nonceOf(alice.address),
      deadline,
    });
    const repaid = await t.api.call(
      `/v1/positions/${positionId}/repay`,
      json({
        amount: "10",
        payer: alice.address,
        deadline: Number(deadline),
        signature: await alice.signTypedData(typed),
      }),
    );
    expect(repaid.status).toBe(202);
    const repayment = (await repaid.json()) as { actionId: string; hold: unknown };
    expect(repayment.hold).toBeNull();
    const holdIt = (subject: unknown) =>
      t.api.call(
        "/v1/agents/alerts",
        json({
          agentId: t.screener.agentId,
          subject,
          severity: "high",
          category: "sanctions",
          reason: "The payer matches a list entry.",
          action: "hold",
        }),
      );
    const held = await holdIt({ type: "position_action", id: repayment.actionId });
    expect(held.status).toBe(201);
    const { alertId } = (await held.json()) as { alertId: string };
    t.api.worker!.start();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await actionOf(repayment.actionId)).toMatchObject({ status: "queued", txHash: null });
    const rejected = await t.api.call(
      `/v1/alerts/${alertId}/reject`,
      json({ agentId: t.screener.agentId, reasonCode: "sanctions_match" }),
    );
    expect(rejected.status).toBe(200);
    const failed = await t.eventOf("position.action.failed", (d) => d.actionId === repayment.actionId);
    expect(failed.data).toMatchObject({ status: "failed", txHash: null, failureCode: "compliance_rejected" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await actionOf(repayment.actionId)).toMatchObject({ status: "failed", txHash: null, hold: null });
    expect(await debt()).toBe(before);

    // Hostile subjects: a problem each, and no alert or hold written.
    const count = async () =>
      (
        await t.db.query<{ n: string }>(
          "SELECT (SELECT count(*) FROM compliance_alerts) + (SELECT count(*) FROM compliance_holds) AS n",
        )
      )[0]!.n;
    const rows = await count();
    const problem = async (response: Response, status: number, code: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(((await response.json()) as { code: string }).code).toBe(code);
    };
    await problem(await holdIt({ type: "position_action", id: "pact_nope" }), 404, "resource_not_found");
    await problem(await holdIt({ type: "position_action", id: flagged.actionId }), 409, "not_holdable");
    await problem(await holdIt({ type: "position_action", id: repayment.actionId }), 409, "not_holdable");
    await problem(await holdIt({ type: "position", id: next.actionId }), 400, "validation_failed");
    await problem(await holdIt({ type: "position_action", id: "x".repeat(201) }), 400, "validation_failed");
    const verdict = (subject: unknown) =>
      t.api.call("/v1/agents/verdicts", json({ agentId: t.screener.agentId, subject, verdict: "PASSED" }));
    await problem(await verdict({ type: "position_action", id: next.actionId }), 409, "verdict_not_awaited");
    await problem(await verdict({ type: "withdrawal", id: next.actionId }), 400, "validation_failed");
    expect(await count()).toBe(rows);
  });

  it("fires the magic values on the amount a position action names: .13 alerts a withdrawal, .15 holds a repayment", async () => {
    const minted = await s.depositAndMint({ amountZat: 6n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    const positionId = opened!.args.positionId;
    const owner = privateKeyToAccount(positionOwnerKey(minted.note));
    const domain = { chainId: s.chainId, verifyingContract: s.read.minter.address };
    const deadline = (await s.publicClient.getBlock()).timestamp + 3600n;
    const nonceOf = async (signer: string) =>
      BigInt(((await (await t.api.call(`/v1/positions/terms?signer=${signer}`)).json()) as { nonce: string }).nonce);
    const rulesAlertOn = async (actionId: string) => {
      const raised = await t.eventOf(
        "alert.raised",
        (d) => (d.alert as { subject: { id: string } }).subject.id === actionId,
      );
      return raised.data.alert as { alertId: string; category: string; action: string; reason: string };
    };

    // 1.13 ZEC out: its value in ZSD has other cents, the amount its owner named fires the large-amount rule.
    const sealedAddress = s.seal(WITHDRAW, owner.address);
    const withdrawn = await t.api.call(
      `/v1/positions/${positionId}/withdraw`,
      json({
        amount: "1.13",
        destination: { sealedAddress },
        deadline: Number(deadline),
        signature: await owner.signTypedData(
          withdrawCollateralTypedData(domain, {
            positionId,
            amountZat: 113n * (ZEC / 100n),
            sealedAddress,
            noteCommitment: 0n,
            nonce: await nonceOf(owner.address),
            deadline,
          }),
        ),
      }),
    );
    expect(withdrawn.status).toBe(202);
    const withdrawal = (await withdrawn.json()) as { actionId: string; hold: unknown };
    expect(withdrawal.hold).toBeNull();
    expect(await rulesAlertOn(withdrawal.actionId)).toMatchObject({
      category: "large_amount",
      action: "none",
      reason: expect.stringMatching(
        /^The sandbox's magic cents \.13 fire this rule for a position action, a withdrawal of 1\.13 ZEC worth [\d.]+ ZSD \(the threshold is 10000 ZSD\)\.$/,
      ),
    });
    await t.eventOf("position.action.confirmed", (d) => d.actionId === withdrawal.actionId);

    // 5.15 ZSD repaid: held by the rules, with a reason that says the magic value fired, as the action's answers say.
    const repaid = await t.api.call(
      `/v1/positions/${positionId}/repay`,
      json({
        amount: "5.15",
        payer: alice.address,
        deadline: Number(deadline),
        signature: await alice.signTypedData(
          repayTypedData(domain, {
            positionId,
            maxAmount: 515n * (ZSD / 100n),
            payer: alice.address,
            nonce: await nonceOf(alice.address),
            deadline,
          }),
        ),
      }),
    );
    expect(repaid.status).toBe(202);
    const repayment = (await repaid.json()) as { actionId: string; hold: unknown };
    const alert = await rulesAlertOn(repayment.actionId);
    expect(alert).toMatchObject({
      category: "denied_address",
      action: "hold",
      reason:
        "The sandbox's magic cents .15 fire the deny-list rule for a position action, a repayment of 5.15 ZSD " +
        `by ${alice.address} (not on the list): held for review.`,
    });
    const hold = { state: "held", alertId: alert.alertId, by: "rules", since: expect.stringMatching(/^\d{4}-/) };
    expect(repayment.hold).toEqual(hold);
    const byId = async () =>
      (await (await t.api.call(`/v1/position-actions/${repayment.actionId}`)).json()) as Record<string, unknown>;
    expect(await byId()).toMatchObject({ positionId: positionId.toString(), status: "queued", txHash: null, hold });
    const released = await t.api.call(
      `/v1/alerts/${alert.alertId}/release`,
      json({ agentId: t.screener.agentId, note: "sandbox" }),
    );
    expect(released.status).toBe(200);
    await t.eventOf("position.action.confirmed", (d) => d.actionId === repayment.actionId);
    expect(await byId()).toMatchObject({ status: "confirmed", hold: null, txHash: expect.stringMatching(/^0x/) });
    // By its id alone, another account's action or a withdrawal's id is not found.
    const missing = await t.api.call(`/v1/position-actions/pact_${"0".repeat(20)}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await t.api.call("/v1/position-actions/wdr_00000000000000000000")).status).toBe(400);
  });

  it("delivered only events that match their webhooks in /v1/openapi.json", async () => {
    const { problems, types } = await t.conformance();
    expect(problems).toEqual([]);
    // Every type the flows above make was checked (a flow that stopped making one would leave it unchecked).
    expect([...types].sort()).toEqual([...EVENTS].sort());
  });
});

describe("required screening", () => {
  let s: System;
  let t: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    s = await deploySystem();
    t = await setUp(s, {
      COMPLIANCE_SCREENING: "required",
      COMPLIANCE_VERDICT_TIMEOUT_MS: "3000",
      COMPLIANCE_DEFAULT_VERDICT: "REJECTED",
    });
    t.api.worker!.start();
  });
  afterAll(async () => {
    await t?.close();
    await releaseProver();
  });

  it("waits for a screener's verdict: PASSED mints, none in time takes the default (rejected)", async () => {
    // Proved first: the verdict's clock starts when a mint is queued.
    const [proofA, proofB] = [
      await proofFor(t.api, s, 10n * ZSD, alice.address),
      await proofFor(t.api, s, 10n * ZSD, bob.address),
    ];
    const waiting = await t.api.call(
      "/v1/mint",
      json({ amount: "10", collateralType: "ZEC", proofId: proofA, recipient: alice.address }),
    );
    const waitingAnswer = (await waiting.json()) as { mintId: string; hold: unknown };
    const passedId = waitingAnswer.mintId;
    const timedOutId = await mint(t.api, proofB, 10n * ZSD, bob.address);
    const awaiting = { state: "awaiting_verdict", alertId: null, by: null, since: expect.any(String) };
    expect(waitingAnswer.hold).toEqual(awaiting);
    expect(await mintOf(t.api, passedId)).toMatchObject({ status: "queued", hold: awaiting });
    await t.eventOf("mint.held", (d) => d.mintId === passedId && d.awaitingVerdict === true);

    const verdict = await t.api.call(
      "/v1/agents/verdicts",
      json({ agentId: t.screener.agentId, subject: { type: "mint", id: passedId }, verdict: "PASSED" }),
    );
    expect(verdict.status).toBe(200);
    expect(await verdict.json()).toMatchObject({ verdict: "PASSED", hold: "released" });
    await t.eventOf("mint.confirmed", (d) => d.mintId === passedId);

    const failed = await t.eventOf("mint.failed", (d) => d.mintId === timedOutId);
    expect(failed.data).toMatchObject({ failureCode: "compliance_rejected" });
    expect(failed.data.failureReason).toContain("verdict_timeout");
    // Too late now: the default was applied.
    const late = await t.api.call(
      "/v1/agents/verdicts",
      json({ agentId: t.screener.agentId, subject: { type: "mint", id: timedOutId }, verdict: "PASSED" }),
    );
    expect(late.status).toBe(409);
    expect(((await late.json()) as { code: string }).code).toBe("verdict_not_awaited");
  });

  it("a position action waits for a verdict too: PASSED, it is sent", async () => {
    const minted = await s.depositAndMint({ amountZat: 4n * ZEC, mintAmount: 50n * ZSD, recipient: alice.address });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    const positionId = opened!.args.positionId;
    const deadline = (await s.publicClient.getBlock()).timestamp + 3600n;
    const terms = (await (await t.api.call(`/v1/positions/terms?signer=${alice.address}`)).json()) as { nonce: string };
    const typed = repayTypedData(
      { chainId: s.chainId, verifyingContract: s.read.minter.address },
      { positionId, maxAmount: 5n * ZSD, payer: alice.address, nonce: BigInt(terms.nonce), deadline },
    );
    const response = await t.api.call(
      `/v1/positions/${positionId}/repay`,
      json({
        amount: "5",
        payer: alice.address,
        deadline: Number(deadline),
        signature: await alice.signTypedData(typed),
      }),
    );
    expect(response.status).toBe(202);
    const { actionId, hold } = (await response.json()) as { actionId: string; hold: unknown };
    expect(hold).toEqual({ state: "awaiting_verdict", alertId: null, by: null, since: expect.any(String) });
    await t.eventOf("position.action.held", (d) => d.actionId === actionId && d.awaitingVerdict === true);
    const verdict = await t.api.call(
      "/v1/agents/verdicts",
      json({ agentId: t.screener.agentId, subject: { type: "position_action", id: actionId }, verdict: "PASSED" }),
    );
    expect(await verdict.json()).toMatchObject({ subject: { type: "position_action" }, hold: "released" });
    await t.eventOf("position.action.released", (d) => d.actionId === actionId);
    await t.eventOf("position.action.confirmed", (d) => d.actionId === actionId);
    expect((await s.read.positions.read.getPosition([positionId])).debt).toBe(45n * ZSD);
  });

  it("delivered only events that match their webhooks in /v1/openapi.json (waits for verdicts included)", async () => {
    const { problems, types } = await t.conformance();
    expect(problems).toEqual([]);
    expect([...types]).toEqual(expect.arrayContaining(["mint.held", "mint.released", "mint.failed"]));
  });
});
