// Positions through the API: read live from the position manager, acted on by signed
// requests the relay sends (repay, withdraw, close, liquidate), note spends
// proven for their action (top-up, withdrawal), the keeper's liquidations,
// and hostile requests answered with a problem that changes nothing.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Address, type Hex, decodeFunctionData, parseEventLogs } from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  type Note,
  closeTypedData,
  collateralRegistryAbi,
  liquidateTypedData,
  createNote,
  depositLeaf,
  noteCommitment,
  positionManagerAbi,
  positionOwnerKey,
  publicSignalsToArray,
  repayTypedData,
  stableMinterAbi,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";
import { addressesIn, captureLogs } from "../log-capture.ts";
import { formatZec, formatZsd, usdValueOfZat } from "@zsd/sdk/units";

const { alice, relayer, pauser } = accounts;
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const TRANSPARENT = "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd";

type Signer = Pick<PrivateKeyAccount, "address" | "signTypedData">;

interface Action {
  actionId: string;
  status: string;
  payoutId: string | null;
  released: string | null;
  noteSequence: string | null;
  failureCode: string | null;
  txHash: string | null;
}

describe("positions through the relay", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;
  const aliceKey: Signer = alice;
  // Every line the API logs (debug and up), and every owner address the run used.
  const logs = captureLogs("debug");
  const owners = new Set<string>([alice.address]);

  useRelayApi(
    { env: { KEEPER_PAYOUT_ADDRESS: SAPLING, KEEPER_POLL_MS: "100" }, logger: logs.logger, startWorker: true },
    (stack) => ({ s, api, db } = stack),
  );

  const get = async <T>(path: string) => {
    const response = await api.call(path);
    return { status: response.status, body: (await response.json()) as T };
  };
  const post = async (path: string, body: unknown) => {
    const response = await api.call(path, json(body));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const domain = () => ({ chainId: s.chainId, verifyingContract: s.read.minter.address });
  const deadline = async () => (await s.publicClient.getBlock()).timestamp + 3600n;
  const nonceOf = async (signer: Address) =>
    BigInt((await get<{ nonce: string }>(`/v1/positions/terms?signer=${signer}`)).body.nonce);
  const ownerOf = (note: Note) => {
    const owner = privateKeyToAccount(positionOwnerKey(note));
    owners.add(owner.address);
    return owner;
  };
  const rows = async () =>
    Number((await db.query<{ n: string }>("SELECT count(*)::text AS n FROM position_actions"))[0]!.n);

  async function open(amountZat: bigint, mint: bigint) {
    const minted = await s.depositAndMint({ amountZat, mintAmount: mint, recipient: alice.address });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    return { note: minted.note, id: opened!.args.positionId };
  }

  async function repay(id: bigint, amount: bigint, payer: Signer = aliceKey) {
    const d = await deadline();
    const typed = repayTypedData(domain(), {
      positionId: id,
      maxAmount: amount,
      payer: payer.address,
      nonce: await nonceOf(payer.address),
      deadline: d,
    });
    const body = {
      amount: formatZsd(amount),
      payer: payer.address,
      deadline: Number(d),
      signature: await payer.signTypedData(typed),
    };
    return { body, answer: await post(`/v1/positions/${id}/repay`, body) };
  }

  /** A withdrawal signed by the position's owner, to `to.zcashAddress` sealed for that owner. */
  async function withdraw(note: Note, id: bigint, amountZat: bigint, to: { zcashAddress: string }) {
    const owner = ownerOf(note);
    const d = await deadline();
    const sealedAddress = s.seal(to.zcashAddress, owner.address);
    const typed = withdrawCollateralTypedData(domain(), {
      positionId: id,
      amountZat,
      sealedAddress,
      noteCommitment: 0n,
      nonce: await nonceOf(owner.address),
      deadline: d,
    });
    return post(`/v1/positions/${id}/withdraw`, {
      amount: (Number(amountZat) / 1e8).toString(),
      destination: { sealedAddress },
      deadline: Number(d),
      signature: await owner.signTypedData(typed),
    });
  }

  const settled = (id: bigint, actionId: string) =>
    eventually(
      async () => (await get<Action>(`/v1/positions/${id}/actions/${actionId}`)).body,
      (a) => a.status === "confirmed" || a.status === "failed",
      `action ${actionId}`,
      30_000,
    );

  it("reads a position live: collateral, debt, ratio, liquidation price", async () => {
    const { id } = await open(5n * ZEC, 100n * ZSD);
    const { status, body } = await get<Record<string, unknown>>(`/v1/positions/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "position",
      id: id.toString(),
      status: "open",
      collateral: "5",
      debt: "100",
      collateralValueUsd: "250",
      collateralRatio: "2.5",
      // 100 ZSD × 120% over 5 ZEC.
      liquidationPrice: "24",
      liquidatable: false,
      minCollateralRatio: "1.5",
      liquidationRatio: "1.2",
    });
    expect((await get(`/v1/positions/999999`)).status).toBe(404);
  });

  it("repays with any payer's signature, withdraws to a paid Zcash address, and closes into a note", async () => {
    const { note, id } = await open(6n * ZEC, 100n * ZSD);
    const first = await repay(id, 30n * ZSD);
    expect(first.answer.status).toBe(202);
    expect(first.answer.body).toMatchObject({ object: "position_action", action: "repay", status: "queued" });
    expect((await settled(id, first.answer.body.actionId as string)).status).toBe("confirmed");
    expect((await get<{ debt: string }>(`/v1/positions/${id}`)).body.debt).toBe("70");

    const out = await withdraw(note, id, ZEC, { zcashAddress: SAPLING });
    expect(out.status).toBe(202);
    // The account's own answer shows the address custody opened.
    expect(out.body.destination).toEqual({ zcashAddress: SAPLING });
    const withdrawn = await settled(id, out.body.actionId as string);
    expect(withdrawn).toMatchObject({ status: "confirmed", released: "1" });
    expect(withdrawn.payoutId).not.toBeNull();
    // Custody pays it through the redemptions' durable payout path.
    await eventually(
      () => db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = $1", [withdrawn.payoutId]),
      (r) => r[0]?.status === "completed",
      "the payout",
      30_000,
    );
    // Its webhook does not carry the address.
    const payloads = await db.query<{ payload: string }>(
      "SELECT payload FROM webhook_events WHERE account_id = $1 AND type = 'position.action.confirmed'",
      [api.accountId],
    );
    const confirmed = payloads
      .map((p) => JSON.parse(p.payload) as { data: { actionId: string; destination: unknown } })
      .find((e) => e.data.actionId === out.body.actionId);
    expect(confirmed!.data.destination).toEqual({ zcashAddress: "sealed" });
    expect(JSON.stringify(payloads)).not.toContain(SAPLING);

    const rest = await repay(id, 70n * ZSD);
    expect((await settled(id, rest.answer.body.actionId as string)).status).toBe("confirmed");
    const owner = ownerOf(note);
    const later = createNote();
    const d = await deadline();
    // Bounded at the position as read: no debt left, all its collateral.
    const seen = await s.read.positions.read.getPosition([id]);
    const typed = closeTypedData(domain(), {
      positionId: id,
      maxDebt: seen.debt,
      minZatOut: seen.collateralZat,
      sealedAddress: "0x",
      noteCommitment: noteCommitment(later),
      nonce: await nonceOf(owner.address),
      deadline: d,
    });
    const closed = await post(`/v1/positions/${id}/close`, {
      maxDebt: formatZsd(seen.debt),
      minZec: formatZec(seen.collateralZat),
      destination: { noteCommitment: noteCommitment(later).toString() },
      deadline: Number(d),
      signature: await owner.signTypedData(typed),
    });
    expect(closed.status).toBe(202);
    const done = await settled(id, closed.body.actionId as string);
    expect(done).toMatchObject({ status: "confirmed", released: "5", payoutId: null });
    // The note's leaf waits in the registry's queue at the sequence the action names, for the 5 ZEC released.
    const queued = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      eventName: "LeafQueued",
      fromBlock: 0n,
      args: { sequence: BigInt(done.noteSequence!) },
    });
    expect(queued.map((e) => e.args)).toEqual([
      { sequence: BigInt(done.noteSequence!), amountZat: 5n * ZEC, leaf: depositLeaf(5n * ZEC, noteCommitment(later)) },
    ]);
    expect((await get<{ status: string }>(`/v1/positions/${id}`)).body.status).toBe("closed");
    const events = await db.query<{ type: string }>(
      "SELECT type FROM webhook_events WHERE account_id = $1 AND type LIKE 'position.%'",
      [api.accountId],
    );
    expect(events.map((e) => e.type).filter((t) => t === "position.action.confirmed")).toHaveLength(4);
  });

  it("relays a repayment with the hint of the position's new place in the ratio order", async () => {
    // Three positions of 7 ZEC in one bucket (keys 6.94e7-7e7 zatoshi per ZSD): 100, 100.4 and 100.8 ZSD.
    await open(7n * ZEC, 100n * ZSD);
    const middle = await open(7n * ZEC, 1004n * (ZSD / 10n));
    const riskiest = await open(7n * ZEC, 1008n * (ZSD / 10n));
    // 0.6 ZSD repaid takes the riskiest to 100.2 ZSD: between the others, after the middle one.
    const { answer } = await repay(riskiest.id, 6n * (ZSD / 10n));
    expect(answer.status).toBe(202);
    const action = await settled(riskiest.id, answer.body.actionId as string);
    expect(action.status).toBe("confirmed");
    const sent = await s.publicClient.getTransaction({ hash: action.txHash as Hex });
    const call = decodeFunctionData({ abi: stableMinterAbi, data: sent.input });
    expect(call.functionName).toBe("repayWithSig");
    expect(call.args.at(-1)).toBe(middle.id);
  });

  it("answers hostile actions with a problem and changes nothing", async () => {
    const { note, id } = await open(3n * ZEC, 60n * ZSD);
    const before = { rows: await rows(), position: await s.read.positions.read.getPosition([id]) };
    const owner = ownerOf(note);
    const d = await deadline();
    const sealedAddress = s.seal(SAPLING, owner.address);
    const sign = (by: Signer, amountZat: bigint, at = d, nonce = 0n) =>
      by.signTypedData(
        withdrawCollateralTypedData(domain(), {
          positionId: id,
          amountZat,
          sealedAddress,
          noteCommitment: 0n,
          nonce,
          deadline: at,
        }),
      );
    const body = async (by: Signer, amountZat: bigint, at = d) => ({
      amount: (Number(amountZat) / 1e8).toString(),
      destination: { sealedAddress },
      deadline: Number(at),
      signature: await sign(by, amountZat, at),
    });
    const expectProblem = async (path: string, payload: unknown, status: number, code: string) => {
      const answer = await post(path, payload);
      expect([answer.status, answer.body.code]).toEqual([status, code]);
      return answer.body;
    };
    const path = `/v1/positions/${id}/withdraw`;
    // Signed by someone else than the owner.
    await expectProblem(path, await body(aliceKey, ZEC / 10n), 422, "position_signature_invalid");
    // Past its deadline.
    const past = d - 7200n;
    await expectProblem(path, await body(owner, ZEC / 10n, past), 422, "expired_signature");
    // Would take the position under the minimum ratio: simulated and refused with the contract's reason.
    const refused = await expectProblem(path, await body(owner, 2n * ZEC), 422, "position_action_would_revert");
    expect(refused.failureCode).toBe("position_undercollateralized");
    // A repayment that would leave under a ZSD owed (the position manager's least debt): refused with the rule, queued nowhere.
    const repayTerms = repayTypedData(domain(), {
      positionId: id,
      maxAmount: 60n * ZSD - ZSD / 2n,
      payer: aliceKey.address,
      nonce: await nonceOf(aliceKey.address),
      deadline: d,
    });
    const dust = await expectProblem(
      `/v1/positions/${id}/repay`,
      {
        amount: "59.5",
        payer: aliceKey.address,
        deadline: Number(d),
        signature: await aliceKey.signTypedData(repayTerms),
      },
      422,
      "position_action_would_revert",
    );
    expect(dust.failureCode).toBe("debt_below_minimum");
    expect(dust.detail).toContain("at least 1 ZSD");
    // Both destinations, a transparent address, a commitment past the field, a malformed signature.
    const valid = await body(owner, ZEC / 10n);
    await expectProblem(
      path,
      { ...valid, destination: { sealedAddress, noteCommitment: "1" } },
      400,
      "validation_failed",
    );
    const transparent = { sealedAddress: s.seal(TRANSPARENT, owner.address) };
    await expectProblem(path, { ...valid, destination: transparent }, 422, "transparent_address");
    // Sealed for another owner than the position's: custody cannot open it for this payout.
    const forAlice = { sealedAddress: s.seal(SAPLING, alice.address) };
    await expectProblem(path, { ...valid, destination: forAlice }, 422, "unreadable_address");
    await expectProblem(path, { ...valid, destination: { sealedAddress: "0x0100" } }, 400, "validation_failed");
    await expectProblem(path, { ...valid, destination: { noteCommitment: "9".repeat(78) } }, 400, "validation_failed");
    await expectProblem(path, { ...valid, signature: "0x1234" }, 400, "validation_failed");
    await expectProblem(path, { ...valid, amount: "-1" }, 400, "validation_failed");
    await expectProblem(`/v1/positions/0/withdraw`, valid, 400, "validation_failed");
    await expectProblem(`/v1/positions/424242/withdraw`, valid, 404, "resource_not_found");
    expect(await rows()).toBe(before.rows);
    expect(await s.read.positions.read.getPosition([id])).toEqual(before.position);

    // The same signature twice: relayed once.
    const accepted = await post(path, valid);
    expect(accepted.status).toBe(202);
    const again = await expectProblem(path, valid, 409, "position_action_already_submitted");
    expect(again.id).toBe(accepted.body.actionId);
    expect((await settled(id, accepted.body.actionId as string)).status).toBe("confirmed");
    await expectProblem(path, valid, 409, "position_action_already_submitted");
    expect(await rows()).toBe(before.rows + 1);
  });

  it("names every signed bound in the terms, and refuses a close or liquidation outside them naming the bound, moving nothing", async () => {
    const terms = (
      await get<{ bounds: Record<string, Record<string, string>>; types: Record<string, { name: string }[]> }>(
        `/v1/positions/terms?signer=${alice.address}`,
      )
    ).body;
    expect(Object.fromEntries(Object.entries(terms.bounds).map(([k, v]) => [k, Object.keys(v)]))).toEqual({
      repay: ["maxAmount"],
      withdraw: [],
      close: ["maxDebt", "minZatOut"],
      liquidate: ["maxDebt", "minSeizedZat", "minSeizedValue"],
    });
    // Each says the request field that carries it.
    expect(terms.bounds.close!.minZatOut).toMatch(/^minZec: /);
    expect(terms.bounds.liquidate!.minSeizedZat).toMatch(/^minSeizedZec: /);
    for (const [action, fields] of Object.entries(terms.bounds)) {
      for (const field of Object.keys(fields)) {
        const type = action === "repay" ? "Repay" : action === "close" ? "Close" : "Liquidate";
        expect(terms.types[type]!.map((f) => f.name)).toContain(field);
      }
    }

    // A debt the keeper (the relayer's ZSD) cannot afford, so that only alice liquidates it.
    await s.setPrice(50n * 100_000_000n);
    const relayerZsd = await s.read.token.read.balanceOf([relayer.address as Hex]);
    const mint = (relayerZsd / ZSD + 200n) * ZSD;
    // 166.7% at $50, 116.7% at $35.
    const { note, id } = await open((mint / ZSD) * (ZEC / 30n), mint);
    const owner = ownerOf(note);
    const later = createNote();
    const toNote = { noteCommitment: noteCommitment(later).toString() };
    const expectBreach = async (path: string, body: unknown, failureCode: string, bound: string) => {
      const answer = await api.call(path, json(body));
      expect(answer.status).toBe(422);
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await answer.json()).toMatchObject({ code: "position_action_would_revert", failureCode, bound });
    };
    const snapshot = async () => ({
      rows: await rows(),
      position: await s.read.positions.read.getPosition([id]),
      alice: await s.read.token.read.balanceOf([alice.address]),
    });
    const before = await snapshot();
    const { debt, collateralZat } = before.position;

    // The owner's close, bounded one wei under the debt, then a zatoshi over the collateral.
    const close = async (maxDebt: bigint, minZatOut: bigint) => {
      const d = await deadline();
      const typed = closeTypedData(domain(), {
        positionId: id,
        maxDebt,
        minZatOut,
        sealedAddress: "0x",
        noteCommitment: noteCommitment(later),
        nonce: await nonceOf(owner.address),
        deadline: d,
      });
      return {
        maxDebt: formatZsd(maxDebt),
        minZec: formatZec(minZatOut),
        destination: toNote,
        deadline: Number(d),
        signature: await owner.signTypedData(typed),
      };
    };
    await expectBreach(
      `/v1/positions/${id}/close`,
      await close(debt - 1n, collateralZat),
      "debt_above_maximum",
      "maxDebt",
    );
    await expectBreach(
      `/v1/positions/${id}/close`,
      await close(debt, collateralZat + 1n),
      "zat_out_below_minimum",
      "minZec",
    );

    // $35: 116.7%, liquidatable. What a liquidation takes: the debt's worth and the bonus (5%) in ZEC.
    await s.setPrice(35n * 100_000_000n);
    try {
      const unit = usdValueOfZat(1n, 35n * 100_000_000n);
      const seized = (debt * 10_500n) / 10_000n / unit;
      const liquidate = async (bounds: { maxDebt: bigint; minSeizedZat: bigint; minSeizedValue: bigint }) => {
        const d = await deadline();
        const typed = liquidateTypedData(domain(), {
          positionId: id,
          ...bounds,
          sealedAddress: "0x",
          noteCommitment: noteCommitment(later),
          nonce: await nonceOf(alice.address),
          deadline: d,
        });
        return {
          liquidator: alice.address,
          maxDebt: formatZsd(bounds.maxDebt),
          minSeizedZec: formatZec(bounds.minSeizedZat),
          minSeizedValue: formatZsd(bounds.minSeizedValue),
          destination: toNote,
          deadline: Number(d),
          signature: await alice.signTypedData(typed),
        };
      };
      const path = `/v1/positions/${id}/liquidate`;
      const within = { maxDebt: debt, minSeizedZat: seized, minSeizedValue: debt };
      await expectBreach(path, await liquidate({ ...within, maxDebt: debt - 1n }), "debt_above_maximum", "maxDebt");
      await expectBreach(
        path,
        await liquidate({ ...within, minSeizedZat: seized + 1n }),
        "zat_out_below_minimum",
        "minSeizedZec",
      );
      await expectBreach(
        path,
        await liquidate({ ...within, minSeizedValue: 2n * debt }),
        "seized_value_below_minimum",
        "minSeizedValue",
      );
      // Nothing queued, burned or moved.
      expect(await snapshot()).toEqual(before);

      // Within the bounds of what alice read, it goes through: she burns the debt and takes what she counted on.
      const accepted = await post(path, await liquidate(within));
      expect(accepted.status).toBe(202);
      const done = await settled(id, accepted.body.actionId as string);
      expect(done).toMatchObject({ status: "confirmed", released: formatZec(seized) });
      expect(await s.read.token.read.balanceOf([alice.address])).toBe(before.alice - debt);
      expect((await s.read.positions.read.getPosition([id])).status).toBe(2);
    } finally {
      await s.setPrice(50n * 100_000_000n);
    }
  });

  it("withdraws an unminted note's ZEC to the address its proof binds, once, keeping the change", async () => {
    const note = createNote();
    await s.deposit(note, 3n * ZEC);
    const unmintedBefore = await s.read.registry.read.unmintedZat();
    // The payout's owner (who may redirect it if custody cannot pay) is bound with the address.
    const owner = ownerOf(note).address;
    const sealedAddress = s.seal(SAPLING, owner);
    const spent = await s.proveWithdraw({
      note,
      amountZat: 3n * ZEC,
      collateralFloorZat: 2n * ZEC,
      sealedAddress,
      owner,
    });
    const body = {
      proof: spent.raw.proof,
      publicSignals: publicSignalsToArray(spent.raw.publicSignals),
      sealedAddress,
      owner,
    };
    // A proof bound to one sealed address pays no other (the same address sealed again included), and
    // names no other owner.
    const misdirected = await post("/v1/withdrawals", { ...body, sealedAddress: s.seal(SAPLING, owner) });
    expect([misdirected.status, misdirected.body.code]).toEqual([422, "binding_mismatch"]);
    const unreadable = await post("/v1/withdrawals", { ...body, sealedAddress: s.seal(SAPLING, alice.address) });
    expect([unreadable.status, unreadable.body.code]).toEqual([422, "unreadable_address"]);
    // For another owner the envelope does not open: refused before the proof is checked.
    const otherOwner = await post("/v1/withdrawals", { ...body, owner: alice.address });
    expect([otherOwner.status, otherOwner.body.code]).toEqual([422, "unreadable_address"]);
    const { owner: _owner, ...ownerless } = body;
    expect((await post("/v1/withdrawals", ownerless)).status).toBe(400);
    const queued = await post("/v1/withdrawals", body);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      object: "withdrawal",
      amount: "2",
      status: "queued",
      owner,
      zcashAddress: SAPLING,
    });
    const done = await eventually(
      async () =>
        (
          await get<{ status: string; payoutId: string | null }>(
            `/v1/withdrawals/${queued.body.withdrawalId as string}`,
          )
        ).body,
      (w) => w.status === "confirmed" || w.status === "failed",
      "the withdrawal",
      30_000,
    );
    expect(done.status).toBe("confirmed");
    expect(done.payoutId).not.toBeNull();
    expect((await s.read.redemptions.read.getPayout([BigInt(done.payoutId!)])).owner).toBe(owner);
    // The 1 ZEC rest stays as a change note; the 2 ZEC left the unminted pool.
    expect(await s.read.registry.read.unmintedZat()).toBe(unmintedBefore - 2n * ZEC);
    const twice = await post("/v1/withdrawals", body);
    expect([twice.status, twice.body.code]).toEqual([409, "nullifier_spent"]);
  });

  it("tops up a position with a note proven for that position only", async () => {
    const { id } = await open(3n * ZEC, 50n * ZSD);
    const note = createNote();
    await s.deposit(note, ZEC);
    const binding = { chainId: BigInt(s.chainId), minter: s.read.minter.address, positionId: id };
    const spent = await s.proveSpend({ note, amountZat: ZEC, collateralFloorZat: ZEC, binding });
    const body = { proof: spent.raw.proof, publicSignals: publicSignalsToArray(spent.raw.publicSignals) };
    const wrong = await post(`/v1/positions/${id - 1n}/top-up`, body);
    expect([wrong.status, wrong.body.code]).toEqual([422, "binding_mismatch"]);
    const queued = await post(`/v1/positions/${id}/top-up`, body);
    expect(queued.status).toBe(202);
    expect((await settled(id, queued.body.actionId as string)).status).toBe("confirmed");
    expect((await get<{ collateral: string }>(`/v1/positions/${id}`)).body.collateral).toBe("4");
  });

  it("the keeper liquidates a position under the liquidation ratio with the relayer's ZSD", async () => {
    const { id } = await open(4n * ZEC, 130n * ZSD);
    // The relayer earns ZSD in fees; here alice hands it enough to repay the debt.
    await s.receipt(await s.as(alice).token.write.transfer([relayer.address, 130n * ZSD]));
    // $38: 4 ZEC are worth $152, under 120% of 130 ZSD.
    await s.setPrice(38n * 100_000_000n);
    expect((await get<{ liquidatable: boolean }>(`/v1/positions/${id}`)).body.liquidatable).toBe(true);
    await eventually(
      async () => (await get<{ status: string }>(`/v1/positions/${id}`)).body.status,
      (status) => status === "liquidated",
      "the keeper's liquidation",
      30_000,
    );
    const [row] = await db.query<{ account_id: string | null; status: string; payout_id: string | null }>(
      "SELECT account_id, status, payout_id FROM position_actions WHERE action = 'liquidate' AND position_id = $1",
      [id.toString()],
    );
    expect(row).toMatchObject({ account_id: null });
    await eventually(
      async () =>
        (
          await db.query<{ status: string; payout_id: string | null }>(
            "SELECT status, payout_id FROM position_actions WHERE action = 'liquidate' AND position_id = $1",
            [id.toString()],
          )
        )[0]!,
      (r) => r.status === "confirmed" && r.payout_id !== null,
      "the liquidation's confirmation",
    );
    // The keeper sealed its own address for the relayer: custody opens it and pays the seized ZEC.
    const [liquidation] = await db.query<{ payout_id: string }>(
      "SELECT payout_id FROM position_actions WHERE action = 'liquidate' AND position_id = $1",
      [id.toString()],
    );
    const payout = await eventually(
      async () =>
        (
          await db.query<{ status: string; withdraw_address: string | null }>(
            "SELECT status, withdraw_address FROM payouts WHERE redemption_id = $1",
            [liquidation!.payout_id],
          )
        )[0],
      (p) => p?.status === "completed" || p?.status === "held",
      "the keeper's payout",
      30_000,
    );
    expect(payout).toMatchObject({ status: "completed", withdraw_address: expect.stringMatching(/^ztestsapling1/) });
    expect(await s.read.token.read.balanceOf([relayer.address as Hex])).toBeLessThan(130n * ZSD + 1n);
  });

  it("the keeper redistributes a position under 100% over the others (not liquidated at a loss), its reward to the keeper's address", async () => {
    await s.setPrice(100n * 100_000_000n);
    const keep = await open(20n * ZEC, 100n * ZSD);
    const { id } = await open(4n * ZEC, 130n * ZSD);
    const relayerZsd = await s.read.token.read.balanceOf([relayer.address as Hex]);
    const keptDebt = (await s.read.positions.read.getPosition([keep.id])).debt;
    // $30: 4 ZEC are worth $120, under the 130 ZSD it owes; 20 ZEC ($600) stay well over 100 ZSD.
    await s.setPrice(30n * 100_000_000n);
    await eventually(
      async () => (await get<{ status: string }>(`/v1/positions/${id}`)).body.status,
      (status) => status === "liquidated",
      "the keeper's redistribution",
      30_000,
    );
    const row = await eventually(
      async () =>
        (
          await db.query<{
            action: string;
            account_id: string | null;
            status: string;
            payout_id: string | null;
          }>(
            "SELECT action, account_id, status, payout_id FROM position_actions WHERE position_id = $1 AND action IN ('liquidate', 'redistribute')",
            [id.toString()],
          )
        )[0],
      (r) => r?.status === "confirmed",
      "the redistribution's confirmation",
    );
    expect(row).toMatchObject({ action: "redistribute", account_id: null, status: "confirmed" });
    const [event] = await s.publicClient.getContractEvents({
      address: s.read.positions.address,
      abi: positionManagerAbi,
      eventName: "PositionRedistributed",
      args: { positionId: id },
      fromBlock: 0n,
    });
    expect(event!.args).toMatchObject({ caller: relayer.address, debt: 130n * ZSD });
    expect(event!.args.rewardZat!).toBeGreaterThan(0n);
    // The reward is a payout to the keeper's address; the relayer spent no ZSD; the others took the debt.
    const reward = await s.read.redemptions.read.getPayout([BigInt(row!.payout_id!)]);
    expect(reward.zatDue).toBe(event!.args.rewardZat);
    expect(await s.read.token.read.balanceOf([relayer.address as Hex])).toBe(relayerZsd);
    expect((await s.read.positions.read.getPosition([keep.id])).debt).toBeGreaterThan(keptDebt);
    expect(await s.read.positions.read.getPosition([id])).toMatchObject({ status: 2, debt: 0n, collateralZat: 0n });
  });

  it("while the minter is paused the keeper sends nothing (it would revert), and acts once it resumes", async () => {
    await s.setPrice(100n * 100_000_000n);
    await open(20n * ZEC, 100n * ZSD);
    const { id } = await open(4n * ZEC, 130n * ZSD);
    await s.receipt(await s.as(pauser).minter.write.pause());
    try {
      await s.setPrice(30n * 100_000_000n); // under 100%: redistributable but for the pause
      expect(await s.read.positions.read.redistributable([id])).toBe(false);
      // Twenty keeper passes at 100 ms.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const sent = await db.query<{ action: string }>(
        "SELECT action FROM position_actions WHERE position_id = $1 AND account_id IS NULL",
        [id.toString()],
      );
      expect(sent).toEqual([]);
    } finally {
      await s.receipt(await s.as(pauser).minter.write.unpause());
    }
    await eventually(
      async () => (await get<{ status: string }>(`/v1/positions/${id}`)).body.status,
      (status) => status === "liquidated",
      "the keeper's redistribution after the pause",
      30_000,
    );
  });

  it("the keeper spreads dust the position manager calls redistributable though it is not liquidatable", async () => {
    // books.test case 9 through the relay: a par redemption shrinks every debt alike, here under a ZSD, the owner
    // withdraws down to a zatoshi at over 150%, and 25 such positions would hold up every par redemption. The keeper
    // spreads it over the others, though it is far from the liquidation ratio.
    // At $200 one zatoshi is $0.000002: over 150% of what the dust will owe.
    await s.setPrice(200n * 100_000_000n);
    const dust = await open(ZEC / 100n, ZSD);
    // Leaves each debt about 3.3e-7 of what it was: this one 3.3e-7 ZSD.
    const total = await s.read.positions.read.totalDebt();
    const redeemed = total - (total * 33n) / 100_000_000n;
    expect(await s.read.token.read.balanceOf([alice.address])).toBeGreaterThanOrEqual(redeemed);
    await s.receipt(await s.as(alice).redemptions.write.redeem([redeemed, s.sealed(SAPLING, alice.address)]));
    const shrunk = await s.read.positions.read.getPosition([dust.id]);
    expect(shrunk.debt).toBeLessThan(ZSD / 1_000_000n);
    const withdrawn = await withdraw(dust.note, dust.id, shrunk.collateralZat - 1n, { zcashAddress: SAPLING });
    expect(withdrawn.status).toBe(202);
    // One zatoshi for 3.3e-7 ZSD: about 600%, not liquidatable, and within a redemption's margin (4 zatoshi).
    await eventually(
      async () => (await get<{ status: string }>(`/v1/positions/${dust.id}`)).body.status,
      (status) => status === "liquidated",
      "the keeper's redistribution of the dust",
      30_000,
    );
    const actions = await db.query<{ action: string; status: string }>(
      "SELECT action, status FROM position_actions WHERE position_id = $1 AND account_id IS NULL",
      [dust.id.toString()],
    );
    expect(actions).toEqual([{ action: "redistribute", status: expect.any(String) }]);
    const [event] = await s.publicClient.getContractEvents({
      address: s.read.positions.address,
      abi: positionManagerAbi,
      eventName: "PositionRedistributed",
      args: { positionId: dust.id },
      fromBlock: 0n,
    });
    expect(event!.args).toMatchObject({ caller: relayer.address, debt: shrunk.debt });
  });

  it("the keeper clears several positions under 100% in one redistributeMany, one payout to the keeper's address", async () => {
    await s.setPrice(100n * 100_000_000n);
    await open(40n * ZEC, 100n * ZSD);
    const under = [
      await open(4n * ZEC, 130n * ZSD),
      await open(4n * ZEC, 130n * ZSD),
      await open(4n * ZEC, 130n * ZSD),
    ];
    const ids = under.map((p) => p.id);
    const floor = await s.read.positions.read.keeperRewardFloorZat();
    expect(floor).toBe(125_000n);
    // Paused while the price falls, so that one keeper pass finds all three under 100% at once.
    await s.receipt(await s.as(pauser).minter.write.pause());
    try {
      await s.setPrice(30n * 100_000_000n);
    } finally {
      await s.receipt(await s.as(pauser).minter.write.unpause());
    }
    const rows = await eventually(
      () =>
        db.query<{ position_id: string; status: string; tx_hash: string; payout_id: string | null }>(
          "SELECT position_id, status, tx_hash, payout_id FROM position_actions WHERE action = 'redistribute' AND position_id = ANY($1)",
          [ids.map(String)],
        ),
      (r) => r.length === 3 && r.every((row) => row.status === "confirmed"),
      "the batch's confirmation",
      30_000,
    );
    // One transaction, one payout, for all three.
    expect(new Set(rows.map((r) => r.tx_hash)).size).toBe(1);
    expect(new Set(rows.map((r) => r.payout_id)).size).toBe(1);
    const hash = rows[0]!.tx_hash as Hex;
    const tx = await s.publicClient.getTransaction({ hash });
    expect(decodeFunctionData({ abi: stableMinterAbi, data: tx.input })).toMatchObject({
      functionName: "redistributeMany",
      args: [expect.arrayContaining(ids), expect.anything()],
    });
    const receipt = await s.publicClient.getTransactionReceipt({ hash });
    const spread = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionRedistributed" });
    expect(spread.map((e) => e.args.positionId).sort()).toEqual([...ids].sort());
    for (const e of spread) {
      // Each cleared carries the debt spread onto it by those cleared before it in the batch.
      expect(e.args.caller).toBe(relayer.address);
      expect(e.args.debt!).toBeGreaterThanOrEqual(130n * ZSD);
      // 0.5% of 4 ZEC is 2,000,000 zatoshi, over the floor: the position pays its own reward.
      expect(e.args.rewardZat!).toBeGreaterThanOrEqual(floor);
    }
    // Its one release names position 0; the keeper's payout carries every reward.
    const [release] = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "CollateralReleased" });
    expect(release!.args.positionId).toBe(0n);
    expect(release!.args.payoutId).toBe(BigInt(rows[0]!.payout_id!));
    const payout = await s.read.redemptions.read.getPayout([release!.args.payoutId!]);
    expect(payout.zatDue).toBe(spread.reduce((sum, e) => sum + e.args.rewardZat!, 0n));
    expect(payout.zatDue).toBe(release!.args.amountZat);
    // Custody opens the keeper's envelope for the relayer and pays it to the keeper's address.
    const paid = await eventually(
      async () =>
        (
          await db.query<{ status: string; withdraw_address: string | null }>(
            "SELECT status, withdraw_address FROM payouts WHERE redemption_id = $1",
            [rows[0]!.payout_id],
          )
        )[0],
      (p) => p?.status === "completed" || p?.status === "held",
      "the keeper's payout",
      30_000,
    );
    expect(paid).toEqual({ status: "completed", withdraw_address: SAPLING });
    for (const id of ids) expect((await s.read.positions.read.getPosition([id])).status).toBe(2);
  });

  // Withdrawals and closes to an address, note withdrawals, failures and the keeper's
  // payouts above logged no Zcash address and no owner's EVM address, in any form.
  it("logs no address of the run: no withdraw address, no owner", () => {
    expect(logs.lines.length).toBeGreaterThan(10);
    expect(addressesIn(logs.lines.join(""), [SAPLING, TRANSPARENT, ...owners])).toEqual([]);
  });
});
