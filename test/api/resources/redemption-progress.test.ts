// A burned redemption says what its payout waits for (GET /v1/redemptions/{id}'s `payout`): the
// burn's confirmations counted from its block up to PAYOUT_CONFIRMATIONS, then custody paying and
// the settlement; null before the burn and once paid. The CLI tells it (test/sdk/cli-progress.test.ts).
import { describe, expect, it } from "vitest";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";

const { alice } = accounts;
const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const REQUIRED = 4;

interface Progress {
  stage: string;
  confirmations: number | null;
  confirmationsRequired: number;
}

describe("a burned redemption's payout progress", () => {
  let s: System;
  let api: RunningApi;

  useRelayApi({ env: { PAYOUT_CONFIRMATIONS: String(REQUIRED) }, startWorker: true }, async (stack) => {
    ({ s, api } = stack);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
  });

  const read = async (id: string) =>
    (await (await api.call(`/v1/redemptions/${id}`)).json()) as { status: string; payout: Progress | null };

  it("counts the burn's confirmations up to PAYOUT_CONFIRMATIONS, then is paid and says nothing more", async () => {
    const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, 10n * ZSD, sealedAddress, alice.address);
    const response = await api.call(
      "/v1/redeem",
      json({ amount: 10, sealedAddress, owner: alice.address, permit: { deadline: Number(deadline), ...sig } }),
    );
    expect(response.status).toBe(202);
    const { id, payout } = (await response.json()) as { id: string; payout: unknown };
    expect(payout).toBeNull();

    const burned = await eventually(
      () => read(id),
      (r) => r.status !== "requested",
      `redemption ${id} burned`,
    );
    expect(burned.status).toBe("burned");
    // Counted from the burn's own block; nothing else mines here but the relay's own transactions.
    expect(burned.payout).toMatchObject({ stage: "confirming", confirmationsRequired: REQUIRED });
    const first = burned.payout!.confirmations!;
    expect(first).toBeGreaterThanOrEqual(1);
    expect(first).toBeLessThan(REQUIRED);

    await s.mineBlocks(1);
    const more = await eventually(
      () => read(id),
      (r) => r.status !== "burned" || (r.payout?.confirmations ?? 0) > first,
      `redemption ${id} to count a block more`,
    );
    if (more.status === "burned") {
      expect(more.payout!.confirmations).toBeGreaterThan(first);
      expect(more.payout!.confirmations).toBeLessThanOrEqual(REQUIRED);
    }

    // Past its confirmations the payout goes on through custody's stages to paid, each read saying where it is.
    await s.mineBlocks(REQUIRED);
    const paid = await eventually(
      async () => {
        const r = await read(id);
        if (r.status === "burned") {
          expect(["confirming", "paying", "settling"]).toContain(r.payout?.stage);
        }
        return r;
      },
      (r) => r.status === "paid" || r.status === "failed",
      `redemption ${id} paid`,
    );
    expect(paid).toMatchObject({ status: "paid", payout: null });
  });
});
