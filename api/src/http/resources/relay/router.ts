// How to use this relay, for wallets and SDKs before they prove anything: the
// chain and contracts, the relayer a proof must pay and its least fee, and the
// circuit to prove with (served here so that browsers can fetch it).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { Chain } from "../../../adapters/chain.ts";
import type { Config } from "../../../config/config.ts";
import { formatUnits } from "viem";
import { formatPrice, formatZsd } from "@zsd/sdk/units";
import { SEAL_ALGORITHM } from "@zsd/sdk/seal";
import { type AnyRoute, route } from "../../routes.ts";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const artifactSchema = z.object({
  url: z.string().describe("Path on this API's origin (no Host header is reflected)"),
  sha256: z.string(),
  bytes: z.number().int(),
});

const relaySchema = z
  .object({
    object: z.literal("relay"),
    environment: z.enum(["sandbox", "production"]),
    chainId: z.number().int().nullable(),
    contracts: z
      .record(z.string(), z.object({ address: z.string(), startBlock: z.number().int() }))
      .nullable()
      .describe("Addresses and deployment blocks; null when this API relays to no deployment"),
    relayer: z
      .string()
      .nullable()
      .describe("The address a proof's fee must be paid to (bound in the proof); null when this API does not relay"),
    fee: z.object({
      minimum: z.string().describe("The least fee, in ZSD, a proof must bind for this relay to mint it"),
    }),
    confirmations: z.object({
      mint: z.number().int().describe("Blocks on top of a mint before it is confirmed"),
      payout: z.number().int().describe("Blocks a redemption needs before its ZEC is paid"),
    }),
    circuit: z.object({
      verificationKeySha256: z.string(),
      wasm: artifactSchema,
      zkey: artifactSchema.describe("The Groth16 proving key"),
    }),
    sealKey: z
      .object({
        keyId: z.number().int().describe("The key id a sealed address names (uint32)"),
        publicKey: z.string().describe("Custody's X25519 public key, 0x and 64 hex digits"),
        algorithm: z.literal(SEAL_ALGORITHM),
      })
      .nullable()
      .describe(
        "The key withdraw addresses are sealed to (read from the Redemptions contract, where governance sets it): " +
          "seal each address for its payout's owner, this chain and the Redemptions contract (sealAddress in the " +
          "SDKs); null without a deployment",
      ),
    minting: z
      .object({
        minCollateralRatio: z
          .string()
          .describe("The proven collateral's USD value over the mint, at least (1.5 = 150%)"),
        zecUsdPrice: z.string().describe("The oracle's ZEC/USD price the minter reads now"),
        priceAgeSeconds: z.number().int().describe("Its age by the chain's clock"),
        maxPriceAgeSeconds: z.number().int().describe("The oldest price the minter accepts"),
        minimumAmount: z
          .string()
          .describe(
            "The least a mint may be, in ZSD: a position owes nothing or at least this (StableMinter.minDebt()), " +
              "so a proof for less is refused before it is stored",
          ),
      })
      .nullable()
      .describe(
        "What a mint's collateral floor must cover now (floor × price ≥ amount × ratio); null without a deployment",
      ),
  })
  .meta({ id: "Relay" });

/** Public: everything a client needs to make a proof this relay will accept. */
export function relayRoutes(config: Config, chain: Chain | undefined, relayer: string | undefined): AnyRoute[] {
  // Read once: the files ship with the API and change only with a new circuit.
  const files = {
    wasm: readFileSync(config.CIRCUIT_WASM_FILE),
    zkey: readFileSync(config.CIRCUIT_ZKEY_FILE),
  };
  const verificationKeySha256 = sha256(readFileSync(config.VERIFICATION_KEY_FILE));
  const artifacts = { wasm: { sha256: sha256(files.wasm) }, zkey: { sha256: sha256(files.zkey) } };
  const artifactRoute = (name: "wasm" | "zkey") =>
    route({
      method: "get",
      path: `/relay/circuit/collateral.${name}`,
      operationId: name === "wasm" ? "getCircuitWasm" : "getCircuitProvingKey",
      summary: name === "wasm" ? "The collateral circuit's witness generator" : "The collateral circuit's proving key",
      tag: "Relay",
      auth: false,
      responses: { 200: { description: `collateral.${name} (application/octet-stream)` } },
      handler: async (_input, _req, res) => {
        // Public and named by content (see its sha256 in GET /v1/relay): caches may keep it.
        res.setHeader("Cache-Control", "public, max-age=3600");
        res.setHeader("ETag", `"${artifacts[name].sha256}"`);
        res.type("application/octet-stream").send(files[name]);
      },
    });
  return [
    route({
      method: "get",
      path: "/relay",
      operationId: "getRelay",
      summary: "This relay: chain, contracts, relayer and fee a proof must bind, confirmations, the circuit",
      tag: "Relay",
      auth: false,
      responses: {
        200: {
          description: "The relay's terms",
          schema: relaySchema,
          example: {
            object: "relay",
            environment: "sandbox",
            chainId: 31337,
            contracts: {
              StableMinter: { address: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0", startBlock: 5 },
            },
            relayer: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
            fee: { minimum: "0.5" },
            confirmations: { mint: 1, payout: 12 },
            circuit: {
              verificationKeySha256: "3f1c…",
              wasm: { url: "/v1/relay/circuit/collateral.wasm", sha256: "9a0e…", bytes: 2_391_204 },
              zkey: { url: "/v1/relay/circuit/collateral.zkey", sha256: "c41b…", bytes: 11_785_310 },
            },
            minting: {
              minCollateralRatio: "1.5",
              zecUsdPrice: "50",
              priceAgeSeconds: 12,
              maxPriceAgeSeconds: 3600,
              minimumAmount: "1",
            },
            sealKey: {
              keyId: 1,
              publicKey: "0x59f9e43d51c8fc0810bb60a98f4b9cab04b721719f8ed8e8b7c04bce5c81cd58",
              algorithm: SEAL_ALGORITHM,
            },
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async () => ({
        status: 200,
        body: {
          minting: chain ? await mintingTerms(chain) : null,
          sealKey: chain ? { ...(await chain.currentSealKey()), algorithm: SEAL_ALGORITHM } : null,
          object: "relay",
          environment: config.ENVIRONMENT,
          chainId: chain?.deployment.chainId ?? null,
          contracts: chain?.deployment.contracts ?? null,
          relayer: relayer ?? null,
          fee: { minimum: config.RELAY_MIN_FEE },
          confirmations: { mint: config.RELAY_CONFIRMATIONS, payout: config.PAYOUT_CONFIRMATIONS },
          circuit: {
            verificationKeySha256,
            wasm: { url: "/v1/relay/circuit/collateral.wasm", ...artifacts.wasm, bytes: files.wasm.length },
            zkey: { url: "/v1/relay/circuit/collateral.zkey", ...artifacts.zkey, bytes: files.zkey.length },
          },
        } satisfies z.input<typeof relaySchema>,
      }),
    }),
    artifactRoute("wasm"),
    artifactRoute("zkey"),
  ];
}

/** The positions' least ratio and debt and the price they read now: what a wallet sizes a mint and its floor by. */
async function mintingTerms(chain: Chain) {
  const [ratioBps, minDebt, price] = await Promise.all([
    chain.minCollateralRatioBps(),
    chain.minDebt(),
    chain.priceState(),
  ]);
  return {
    minCollateralRatio: formatUnits(ratioBps, 4),
    zecUsdPrice: formatPrice(price.price),
    priceAgeSeconds: Number(price.ageSeconds),
    maxPriceAgeSeconds: Number(price.maxAgeSeconds),
    minimumAmount: formatZsd(minDebt),
  };
}
