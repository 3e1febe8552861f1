import { z } from "zod";
import type { Database } from "../../../adapters/db/index.ts";
import { type AnyRoute, route } from "../../routes.ts";
import type { Upstreams } from "../../../adapters/upstreams.ts";
import type { Chain } from "../../../adapters/chain.ts";
import { DomainError } from "../../../domain/errors.ts";
import { freshPrice } from "../../../domain/price/price.ts";

const healthSchema = z.object({ status: z.literal("ok") }).meta({ id: "Health" });
const readinessSchema = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.object({
      database: z.boolean(),
      indexer: z.boolean(),
      chain: z.boolean(),
      price: z
        .boolean()
        .optional()
        .describe("With a deployment: the ZEC/USD price is fresh enough for mints and redemptions"),
    }),
    code: z
      .enum(["indexer_lagging", "price_stale"])
      .optional()
      .describe("Why not ready, when the dependencies answer: the indexer is behind the chain, or the price is stale"),
    detail: z.string().optional(),
    indexer: z
      .object({
        block: z.number().int().describe("The newest block the indexer has processed"),
        chainHead: z.number().int(),
        lagBlocks: z.number().int(),
        maxLagBlocks: z.number().int().describe("INDEXER_MAX_LAG_BLOCKS"),
      })
      .optional()
      .describe("Where the indexer is, when it and the chain answer"),
  })
  .meta({ id: "Readiness" });

/**
 * `maxLagBlocks` is INDEXER_MAX_LAG_BLOCKS: an indexer that answers but has
 * stopped following the chain must not pass for ready.
 */
export function healthRoutes(
  db: Database,
  upstreams: Upstreams,
  maxLagBlocks: number,
  chain: Chain | undefined,
): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/health",
      operationId: "getHealth",
      summary: "Liveness: the process answers",
      tag: "Operations",
      auth: false,
      responses: { 200: { description: "Alive", schema: healthSchema, example: { status: "ok" } } },
      handler: async () => ({ status: 200, body: { status: "ok" } }),
    }),
    route({
      method: "get",
      path: "/health/ready",
      operationId: "getReadiness",
      summary: "Readiness: database, indexer and chain all answer, and the indexer keeps up with the chain",
      tag: "Operations",
      auth: false,
      responses: {
        200: {
          description: "Ready",
          schema: readinessSchema,
          example: {
            status: "ready",
            checks: { database: true, indexer: true, chain: true, price: true },
            indexer: { block: 1204, chainHead: 1205, lagBlocks: 1, maxLagBlocks: 10 },
          },
        },
        503: {
          description: "Not ready",
          schema: readinessSchema,
          example: {
            status: "not_ready",
            checks: { database: true, indexer: true, chain: true, price: false },
            code: "price_stale",
            detail: "The ZEC/USD price is 3,700 s old; mints need one under 3,600 s. Retry once the oracle is updated.",
            indexer: { block: 1204, chainHead: 1205, lagBlocks: 1, maxLagBlocks: 10 },
          },
        },
      },
      handler: async (_input, _req, res) => {
        const absent = () => undefined;
        const [database, indexerUp, indexed, head, staleness] = await Promise.all([
          db.query("SELECT 1").then(
            () => true,
            () => false,
          ),
          upstreams.indexerReady(),
          upstreams.indexedBlock().catch(absent),
          upstreams.chainHead().catch(absent),
          // Both contracts share the rule; the minter's limit stands for both.
          chain
            ? freshPrice(chain, "mints").then(
                () => "fresh" as const,
                (error: unknown) => (error instanceof DomainError && error.code === "price_stale" ? error : "unknown"),
              )
            : undefined,
        ]);
        const chainUp = head !== undefined;
        const price = chain ? staleness === "fresh" : undefined;
        const stale = staleness instanceof DomainError ? staleness : undefined;
        const position =
          indexed && head !== undefined
            ? { block: indexed.number, chainHead: head, lagBlocks: head - indexed.number, maxLagBlocks }
            : undefined;
        const lagging = position !== undefined && position.lagBlocks > maxLagBlocks;
        const indexer = indexerUp && indexed !== undefined && !lagging;
        const ready = database && indexer && chainUp && price !== false;
        if (!ready) res.setHeader("Retry-After", "5");
        return {
          status: ready ? 200 : 503,
          body: {
            status: ready ? "ready" : "not_ready",
            checks: { database, indexer, chain: chainUp, ...(price !== undefined && { price }) },
            ...(lagging
              ? {
                  code: "indexer_lagging" as const,
                  detail: `The indexer is at block ${position.block}, ${position.lagBlocks} blocks behind the chain (at most ${maxLagBlocks}).`,
                }
              : stale && { code: "price_stale" as const, detail: stale.detail }),
            ...(position && { indexer: position }),
          },
        };
      },
    }),
  ];
}
