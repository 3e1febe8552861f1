// The logger replaces every address in what it writes, the
// messages of errors quoted from the chain node included: a viem error names
// the call's arguments, its sender and its calldata, where a withdraw address
// and an owner sit in clear text and in hex.
import { ContractFunctionExecutionError, ContractFunctionRevertedError, encodeFunctionData } from "viem";
import { describe, expect, it } from "vitest";
import { redemptionsAbi, stableMinterAbi } from "@zsd/sdk";
import { DEV_SEAL_KEY, sealBytes } from "@zsd/sdk/seal";
import { ZcashdClient, ZcashdError } from "../../../api/src/adapters/custody/zcashd.ts";
import { redactAddresses } from "../../../api/src/observability/logger.ts";
import { startSimulatedZcashd } from "../../../api/src/sandbox/zcashd-sim/server.ts";
import { addressesIn, captureLogs } from "../log-capture.ts";

const OWNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RELAYER = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const MINTER = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const MAINNET = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya";
const UNIFIED =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
const TRANSPARENT = "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd";
const TXID = "0x8f3c2a9e1b7d4f6a0c5e8b2d9f1a3c7e5b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a";

describe("log redaction", () => {
  it("writes no address of a failed contract call's error, nor of a zcashd refusal: arguments, sender, contract, calldata", async () => {
    // The chain carries the address sealed; the log must still hide the sender and contract.
    const sealed = sealBytes(
      DEV_SEAL_KEY,
      { chainId: 31337, redemptions: MINTER, owner: OWNER },
      new TextEncoder().encode(SAPLING),
    );
    const args = [OWNER, 10n ** 18n, 0n, sealed, 1_900_000_000n, 27, TXID, TXID] as const;
    const error = new ContractFunctionExecutionError(
      new ContractFunctionRevertedError({ abi: redemptionsAbi, functionName: "redeemWithPermit" }),
      { abi: redemptionsAbi, functionName: "redeemWithPermit", args, contractAddress: MINTER, sender: RELAYER },
    );
    const data = encodeFunctionData({ abi: redemptionsAbi, functionName: "redeemWithPermit", args });
    // The error's own message does hold them: what the logger is there for.
    expect(addressesIn(error.message, [OWNER])).not.toEqual([]);
    // zcashd quotes an address it refuses (here a mainnet one, to a testnet node), in the words custody logs.
    const zcashd = await startSimulatedZcashd({ wallets: [{ user: "custody" }] });
    let refusal: ZcashdError;
    let custody: string;
    try {
      const client = new ZcashdClient(zcashd.url, { user: "custody", password: zcashd.wallet("custody").password });
      custody = await client.call<string>("z_getnewaddress");
      refusal = (await client
        .call("z_sendmany", [custody, [{ address: MAINNET, amount: 1 }], 1, null, "FullPrivacy"])
        .catch((e: unknown) => e)) as ZcashdError;
    } finally {
      await zcashd.close();
    }
    expect(refusal).toBeInstanceOf(ZcashdError);
    expect(refusal.message).toContain(MAINNET);
    const logs = captureLogs("info");
    logs.logger.warn({ err: error, data }, "relay worker pass failed");
    logs.logger.error({ err: refusal, reason: `z_sendmany refused: ${refusal.message}`, from: custody }, "review");
    logs.logger.info(`paid ${UNIFIED} and ${TRANSPARENT} from ${OWNER.toLowerCase()}`);
    const written = logs.lines.join("");
    expect(logs.lines).toHaveLength(3);
    expect(addressesIn(written, [OWNER, RELAYER, MINTER, SAPLING, MAINNET, UNIFIED, TRANSPARENT, custody])).toEqual([]);
    // What is not an address stays: the message, the function, a 32-byte hash.
    expect(written).toContain("relay worker pass failed");
    expect(written).toContain("redeemWithPermit");
    expect(written).toContain(TXID);
    expect(written).toContain("[evm address]");
    expect(written).toContain("[zcash address]");
    expect(written).toContain("[hex data]");
  });

  it("leaves ids, route templates, hashes and words alone", () => {
    const line = JSON.stringify({
      msg: "request",
      route: "/v1/positions/:positionId/actions/:actionId",
      requestId: "req_7KpX2mN9qR4tV6wY8zA1",
      mintId: "mint_7KpX2mN9qR4tV6wY8zA1",
      txHash: TXID,
      note: "the u1 and t1 words, 0x1234, utilisation",
    });
    expect(redactAddresses(line)).toBe(line);
    expect(redactAddresses(encodeFunctionData({ abi: stableMinterAbi, functionName: "pause" }))).toBe("0x8456cb59");
  });
});
