// Relayed votes survive the API being killed: the process is SIGKILLed right
// after accepting a ballot (while its worker signs, records and sends it),
// restarted, and every vote a client was told is queued ends confirmed, each
// counted once by the governor.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeFunctionData } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { openDatabase } from "../../../api/src/adapters/db/index.ts";
import { KeyService } from "../../../api/src/domain/accounts/keys.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type System, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type ApiProcess, apiProcess } from "../helpers.ts";

const { deployer, alice, bob, carol } = accounts;
const ZSDG = 10n ** 18n;

describe("relayed votes across crashes", () => {
  let s: System;
  let dir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let secret: string;
  let api: ApiProcess;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-governance-crash-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    database = await createTestDatabase("zsd_governance_crash");
    const db = await openDatabase({ url: database.url });
    const keys = new KeyService(db);
    secret = (await keys.create((await keys.createAccount("crash test")).id, "sandbox", "crash")).secret;
    await db.close();
    api = await apiProcess(secret, {
      DATABASE_URL: database.url,
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: s.rpcUrl,
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RELAY_POLL_MS: "10",
      RELAY_WORKER_ID: "governance-crash-replica",
    });
  });

  afterAll(async () => {
    await api.kill();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("confirms every accepted ballot, each counted once, after SIGKILLs", async () => {
    const voters = [alice, bob, carol];
    for (const voter of voters) {
      await s.receipt(await s.as(deployer).governanceToken.write.transfer([voter.address, 1_000n * ZSDG]));
      await s.receipt(await s.as(voter).governanceToken.write.delegate([voter.address]));
    }
    const targets = [s.read.positions.address];
    const calldatas = [
      encodeFunctionData({ abi: positionManagerAbi, functionName: "setMinCollateralRatio", args: [16_000n] }),
    ];
    const description = "Set the minimum collateral ratio to 160%";
    await s.receipt(await s.as(deployer).governor.write.propose([targets, [0n], calldatas, description]));
    const [created] = await s.publicClient.getContractEvents({
      address: s.read.governor.address,
      abi: s.read.governor.abi,
      eventName: "ProposalCreated",
      fromBlock: BigInt(s.deployment.contracts.StableGovernor.startBlock),
    });
    const proposalId = created!.args.proposalId!;
    await s.mineBlocks(Number(await s.read.governor.read.votingDelay()) + 1);
    const [, name, version, chainId, verifyingContract] = await s.read.governor.read.eip712Domain();

    const voteIds: string[] = [];
    for (const [i, voter] of voters.entries()) {
      await api.start();
      const nonce = await s.read.governor.read.nonces([voter.address, BigInt.asUintN(192, proposalId)]);
      const signature = await voter.signTypedData({
        domain: { name, version, chainId, verifyingContract },
        types: {
          Ballot: [
            { name: "proposalId", type: "uint256" },
            { name: "support", type: "uint8" },
            { name: "voter", type: "address" },
            { name: "nonce", type: "uint256" },
          ],
        },
        primaryType: "Ballot",
        message: { proposalId, support: 1, voter: voter.address, nonce },
      });
      const queued = await api.call("/v1/governance/votes", {
        proposalId: proposalId.toString(),
        support: "for",
        voter: voter.address,
        signature,
      });
      expect(queued.status, await queued.clone().text()).toBe(202);
      voteIds.push(((await queued.json()) as { voteId: string }).voteId);
      // Killed while the worker picks the ballot up: before, during or after it sends.
      await new Promise((r) => setTimeout(r, [0, 15, 40][i]));
      await api.kill();
    }

    await api.start();
    for (const voteId of voteIds) {
      let vote: { status: string; txHash: string } | undefined;
      for (let i = 0; i < 300 && vote?.status !== "confirmed"; i++) {
        vote = (await (await api.call(`/v1/governance/votes/${voteId}`)).json()) as { status: string; txHash: string };
        if (vote.status === "failed") throw new Error(`vote ${voteId} failed: ${JSON.stringify(vote)}`);
        if (vote.status !== "confirmed") await new Promise((r) => setTimeout(r, 50));
      }
      expect(vote).toMatchObject({ status: "confirmed", txHash: expect.stringMatching(/^0x/) });
    }
    const [, forVotes] = await s.read.governor.read.proposalVotes([proposalId]);
    expect(forVotes).toBe(3_000n * ZSDG);
    const cast = await s.publicClient.getContractEvents({
      address: s.read.governor.address,
      abi: s.read.governor.abi,
      eventName: "VoteCast",
      fromBlock: BigInt(s.deployment.contracts.StableGovernor.startBlock),
    });
    expect(cast.map((e) => e.args.voter).sort()).toEqual(voters.map((v) => v.address).sort());
  });
});
