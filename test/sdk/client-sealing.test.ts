// The JS client seals every withdraw address it sends: against a
// local fake API, what leaves the SDK is the address sealed to the relay's key
// for the payout's owner, signed as bytes; a bad address stops before anything
// is signed; an unreadable_address answer (the key rotated) is sealed once more.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Address, type Hex, getAddress, verifyTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { FlowError, InvalidRequestError, Zsd } from "@zsd/sdk/client";
import { createNote, positionOwner } from "@zsd/sdk/notes";
import {
  DEV_SEAL_KEY,
  liquidateTypedData,
  openSealedAddress,
  redeemTypedData,
  sealAddress,
  sealKeyFromSecret,
  sealedKeyId,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { parseZec, parseZsd } from "@zsd/sdk/units";

const ZADDR = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const MAINNET = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya";
const REDEMPTIONS = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
const MINTER = getAddress("0xe7f1725e7734ce288f8367e1bb143e90bb3f0512");
const CHAIN_ID = 31337;
const ROTATED = sealKeyFromSecret(2, `0x${"42".repeat(32)}`);
// Hardhat's development accounts #1 and #2: sandbox keys only.
const wallet = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const liquidator = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");

type Key = { keyId: number; publicKey: Hex };
const relay = (key: Key | null) => ({
  object: "relay",
  environment: "sandbox",
  chainId: CHAIN_ID,
  contracts: { Redemptions: { address: REDEMPTIONS, startBlock: 0 }, StableMinter: { address: MINTER, startBlock: 0 } },
  relayer: null,
  sealKey: key && { ...key, algorithm: "x25519-hkdf-sha256-chacha20poly1305" },
});
const redemptionTerms = (verifyingContract: Address = REDEMPTIONS) => ({
  object: "redemption_terms",
  owner: wallet.address,
  nonce: "7",
  chainTime: 1_700_000_000,
  suggestedDeadline: 1_700_003_600,
  typedData: {
    domain: { name: "ZSD Redemptions", version: "1", chainId: CHAIN_ID, verifyingContract },
    types: {},
    primaryType: "Redeem",
  },
});
const positionTerms = (signer: Address) => ({
  object: "position_terms",
  signer,
  nonce: "3",
  chainTime: 1_700_000_000,
  suggestedDeadline: 1_700_003_600,
  domain: { name: "ZSD Minter", version: "1", chainId: CHAIN_ID, verifyingContract: MINTER },
  types: {},
});
const unreadable = {
  status: 422,
  body: { type: "about:blank", title: "Unreadable", status: 422, code: "unreadable_address", detail: "d" },
};

describe("the JS client seals withdraw addresses", () => {
  let server: Server;
  let baseUrl: string;
  let seen: { method: string; path: string; query: URLSearchParams; body: string }[];
  /** Answers by "METHOD /path"; an array is answered in turn. */
  let routes: Record<string, { status: number; body: unknown } | { status: number; body: unknown }[]>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const { pathname: path, searchParams: query } = new URL(req.url!, "http://x");
        seen.push({ method: req.method!, path, query, body: Buffer.concat(chunks).toString() });
        const route = routes[`${req.method} ${path}`];
        const reply = (Array.isArray(route) ? route.shift() : route) ?? { status: 404, body: { code: "not_found" } };
        res.writeHead(reply.status, {
          "content-type": reply.status >= 400 ? "application/problem+json" : "application/json",
        });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen = [];
    routes = {};
  });

  const client = () => new Zsd("sk_test_abc", { baseUrl, maxNetworkRetries: 0 });
  const posted = (path: string) =>
    seen.filter((s) => s.method === "POST" && s.path === path).map((s) => JSON.parse(s.body));
  const open = (sealed: Hex, owner: Address, keys = [DEV_SEAL_KEY]) =>
    openSealedAddress(keys, { chainId: CHAIN_ID, redemptions: REDEMPTIONS, owner }, sealed);

  it("redeems with the address sealed for the owner and signed as bytes; the key is read once per client", async () => {
    routes = {
      "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) },
      "GET /v1/redemptions/terms": { status: 200, body: redemptionTerms() },
      "POST /v1/redeem": { status: 202, body: { object: "redemption", id: "red_1", status: "requested" } },
    };
    const zsd = client();
    const body = await zsd.signRedemption({ amount: "25", withdrawAddress: ZADDR.toUpperCase(), signer: wallet });
    expect(Object.keys(body).sort()).toEqual(["amount", "owner", "permit", "sealedAddress"]);
    const sealed = body.sealedAddress as Hex;
    expect(open(sealed, wallet.address)).toBe(ZADDR);
    expect((sealed.length - 2) / 2).toBe(256 + 65); // padded to a fixed size
    expect(() => open(sealed, liquidator.address)).toThrow(/does not open/);
    const { v, r, s, deadline } = body.permit as { v: number; r: Hex; s: Hex; deadline: number };
    const message = {
      owner: wallet.address,
      amount: 25n * 10n ** 18n,
      minZatOut: 0n,
      sealedAddress: sealed,
      nonce: 7n,
    };
    const typed = redeemTypedData(
      { chainId: CHAIN_ID, verifyingContract: REDEMPTIONS },
      { ...message, deadline: BigInt(deadline) },
    );
    const signature = `${r}${s.slice(2)}${v.toString(16)}` as Hex;
    expect(await verifyTypedData({ ...typed, address: wallet.address, signature })).toBe(true);

    await zsd.signRedemption({ amount: "1", withdrawAddress: ZADDR, signer: wallet });
    expect(seen.filter((s) => s.path === "/v1/relay")).toHaveLength(1);
    // Nothing sent carries the address in clear.
    expect(seen.map((s) => s.body.toLowerCase()).join(" ")).not.toContain(ZADDR);
  });

  describe("sealed by the API (the spec's body)", () => {
    const UNIFIED = // A payable testnet Unified address (test/api/resources/redeem.test.ts's).
      "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
    const context = { chainId: CHAIN_ID, redemptions: REDEMPTIONS, owner: wallet.address };
    const sealedTerms = (
      address: string,
      sealed: Hex | null = sealAddress(DEV_SEAL_KEY, context, address, "testnet"),
    ) => ({
      ...redemptionTerms(),
      ...(sealed === null ? {} : { withdrawAddress: address, sealedAddress: sealed }),
    });
    /** The wallet, counting what it is asked to sign. */
    const counting = () => {
      const signer = {
        address: wallet.address,
        signed: 0,
        signTypedData: (typed: Parameters<typeof wallet.signTypedData>[0]) => {
          signer.signed++;
          return wallet.signTypedData(typed);
        },
      };
      return signer;
    };

    it("asks the terms for the canonical address, signs their seal of it and sends the address in the clear", async () => {
      const terms = sealedTerms(ZADDR);
      routes = {
        "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) },
        "GET /v1/redemptions/terms": { status: 200, body: terms },
      };
      const body = await client().signRedemption({
        amount: "25",
        withdrawAddress: ZADDR.toUpperCase(),
        signer: wallet,
        sealedBy: "api",
      });
      expect(Object.keys(body).sort()).toEqual(["amount", "owner", "permit", "withdrawAddress"]);
      expect(body.withdrawAddress).toBe(ZADDR);
      const asked = seen.find((s) => s.path === "/v1/redemptions/terms")!;
      expect(asked.query.get("withdrawAddress")).toBe(ZADDR);
      const { v, r, s, deadline } = body.permit as { v: number; r: Hex; s: Hex; deadline: number };
      const typed = redeemTypedData(
        { chainId: CHAIN_ID, verifyingContract: REDEMPTIONS },
        {
          owner: wallet.address,
          amount: 25n * 10n ** 18n,
          minZatOut: 0n,
          sealedAddress: terms.sealedAddress!,
          nonce: 7n,
          deadline: BigInt(deadline),
        },
      );
      const signature = `${r}${s.slice(2)}${v.toString(16)}` as Hex;
      expect(await verifyTypedData({ ...typed, address: wallet.address, signature })).toBe(true);
    });

    it("signs nothing when the terms seal another address than the one asked, or none", async () => {
      // What the seal holds only custody can tell: the client checks what the terms say of it.
      for (const terms of [sealedTerms(UNIFIED), sealedTerms(ZADDR, null)]) {
        routes = {
          "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) },
          "GET /v1/redemptions/terms": { status: 200, body: terms },
        };
        const signer = counting();
        const error = await client()
          .signRedemption({ amount: "1", withdrawAddress: ZADDR, signer, sealedBy: "api" })
          .catch((e: unknown) => e);
        expect((error as FlowError).code).toBe("terms_mismatch");
        expect(signer.signed).toBe(0);
      }
    });

    it("refuses a bad address before asking the terms", async () => {
      routes = { "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) } };
      const error = await client()
        .signRedemption({ amount: "1", withdrawAddress: MAINNET, signer: wallet, sealedBy: "api" })
        .catch((e: unknown) => e);
      expect((error as FlowError).code).toBe("wrong_network");
      expect(seen.filter((s) => s.path === "/v1/redemptions/terms")).toEqual([]);
    });
  });

  it("refuses a bad address before anything is signed or sent, with the API's own code", async () => {
    routes = { "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) } };
    const signed: unknown[] = [];
    const signer = { address: wallet.address, signTypedData: async (t: never) => (signed.push(t), "0x" as Hex) };
    for (const [address, code] of [
      [MAINNET, "wrong_network"],
      [`${ZADDR.slice(0, -1)}q`, "bad_checksum"],
      ["tmEZhbWHTpdKMw5it8YDspUXSMGQyFwovpU", "transparent_address"],
    ] as const) {
      const error = await client()
        .redeem({ amount: "1", withdrawAddress: address, signer })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlowError);
      expect((error as FlowError).code).toBe(code);
    }
    expect(signed).toEqual([]);
    expect(seen.every((s) => s.path === "/v1/relay")).toBe(true);
  });

  it("reads the key again and seals once more on unreadable_address, and not a third time", async () => {
    routes = {
      "GET /v1/relay": [
        { status: 200, body: relay(DEV_SEAL_KEY) },
        { status: 200, body: relay(ROTATED) },
      ],
      "GET /v1/redemptions/terms": { status: 200, body: redemptionTerms() },
      "POST /v1/redeem": [
        unreadable,
        { status: 202, body: { object: "redemption", id: "red_1", status: "requested" } },
      ],
      "GET /v1/redemptions/red_1": { status: 200, body: { object: "redemption", id: "red_1", status: "paid" } },
    };
    const zsd = client();
    await zsd.redeem({ amount: "1", withdrawAddress: ZADDR, signer: wallet });
    const [first, second] = posted("/v1/redeem").map((b) => b.sealedAddress as Hex);
    expect(sealedKeyId(first!)).toBe(1);
    expect(sealedKeyId(second!)).toBe(2);
    expect(open(second!, wallet.address, [ROTATED])).toBe(ZADDR);

    routes["POST /v1/redeem"] = [unreadable, unreadable, unreadable];
    routes["GET /v1/relay"] = [{ status: 200, body: relay(ROTATED) }];
    const error = await zsd.redeem({ amount: "1", withdrawAddress: ZADDR, signer: wallet }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).code).toBe("unreadable_address");
    expect(posted("/v1/redeem")).toHaveLength(4);
  });

  it("signs nothing for terms naming another contract than the one it sealed for", async () => {
    routes = {
      "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) },
      "GET /v1/redemptions/terms": { status: 200, body: redemptionTerms(MINTER) },
    };
    const error = await client()
      .signRedemption({ amount: "1", withdrawAddress: ZADDR, signer: wallet })
      .catch((e: unknown) => e);
    expect((error as FlowError).code).toBe("terms_mismatch");
  });

  it("without a seal key, the API relays no payouts", async () => {
    routes = { "GET /v1/relay": { status: 200, body: relay(null) } };
    const error = await client()
      .sealAddress(ZADDR, wallet.address)
      .catch((e: unknown) => e);
    expect((error as FlowError).code).toBe("relay_unavailable");
  });

  it("keeps no failed read of the key: the next call reads it again", async () => {
    const unavailable = { status: 503, body: { title: "Down", status: 503, code: "upstream_unavailable" } };
    routes = { "GET /v1/relay": [unavailable, { status: 200, body: relay(DEV_SEAL_KEY) }] };
    const zsd = client();
    await expect(zsd.sealAddress(ZADDR, wallet.address)).rejects.toMatchObject({ code: "upstream_unavailable" });
    expect(open(await zsd.sealAddress(ZADDR, wallet.address), wallet.address)).toBe(ZADDR);
    expect(seen.filter((s) => s.path === "/v1/relay")).toHaveLength(2);
  });

  it("seals a position's release for its owner, and a liquidation's for the liquidator", async () => {
    const note = createNote();
    const owner = positionOwner(note);
    const action = { status: 202, body: { object: "position_action", actionId: "pact_1", status: "queued" } };
    const confirmed = { status: 200, body: { object: "position_action", actionId: "pact_1", status: "confirmed" } };
    routes = {
      "GET /v1/relay": { status: 200, body: relay(DEV_SEAL_KEY) },
      "POST /v1/positions/4/withdraw": action,
      "POST /v1/positions/4/liquidate": action,
      "GET /v1/positions/4/actions/pact_1": confirmed,
      // Read by the liquidation for its bounds: the debt seen, never at a loss.
      "GET /v1/positions/4": {
        status: 200,
        body: { object: "position", id: "4", owner, status: "open", collateral: "3", debt: "80", liquidatable: true },
      },
    };
    routes["GET /v1/positions/terms"] = [{ status: 200, body: positionTerms(owner) }];
    const zsd = client();
    await zsd.withdrawFromPosition({ positionId: "4", note, amount: "1", to: { zcashAddress: ZADDR } });
    const [withdraw] = posted("/v1/positions/4/withdraw");
    const sealed = withdraw.destination.sealedAddress as Hex;
    expect(Object.keys(withdraw.destination)).toEqual(["sealedAddress"]);
    expect(open(sealed, owner)).toBe(ZADDR);
    const domain = { chainId: CHAIN_ID, verifyingContract: MINTER };
    const typed = withdrawCollateralTypedData(domain, {
      positionId: 4n,
      amountZat: 100_000_000n,
      sealedAddress: sealed,
      noteCommitment: 0n,
      nonce: 3n,
      deadline: BigInt(withdraw.deadline),
    });
    expect(await verifyTypedData({ ...typed, address: owner, signature: withdraw.signature })).toBe(true);

    routes["GET /v1/positions/terms"] = [{ status: 200, body: positionTerms(liquidator.address) }];
    await zsd.liquidatePosition({ positionId: "4", signer: liquidator, to: { zcashAddress: ZADDR } });
    const [liquidation] = posted("/v1/positions/4/liquidate");
    expect(liquidation.liquidator).toBe(liquidator.address);
    expect([liquidation.maxDebt, liquidation.minSeizedZec, liquidation.minSeizedValue]).toEqual(["80", "0", "80"]);
    const seized = liquidation.destination.sealedAddress as Hex;
    expect(open(seized, liquidator.address)).toBe(ZADDR);
    expect(() => open(seized, owner)).toThrow(/does not open/);
    const signedAs = liquidateTypedData(domain, {
      positionId: 4n,
      maxDebt: parseZsd(liquidation.maxDebt),
      minSeizedZat: parseZec(liquidation.minSeizedZec),
      minSeizedValue: parseZsd(liquidation.minSeizedValue),
      sealedAddress: seized,
      noteCommitment: 0n,
      nonce: 3n,
      deadline: BigInt(liquidation.deadline),
    });
    expect(await verifyTypedData({ ...signedAs, address: liquidator.address, signature: liquidation.signature })).toBe(
      true,
    );
    expect(seen.filter((s) => s.path === "/v1/relay")).toHaveLength(1);
  });
});
