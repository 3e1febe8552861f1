import { z } from "zod";
import type { Database } from "../../db/index.ts";
import { type AnyRoute, route } from "../../routes.ts";
import type { Upstreams } from "../ledger/indexer-client.ts";

const healthSchema = z.object({ status: z.literal("ok") }).meta({ id: "Health" });
const readinessSchema = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.object({ database: z.boolean(), indexer: z.boolean(), chain: z.boolean() }),
  })
  .meta({ id: "Readiness" });

export function healthRoutes(db: Database, upstreams: Upstreams): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/health",
      operationId: "getHealth",
      summary: "Liveness: the process answers",
      tag: "Operations",
      auth: false,
      responses: { 200: { description: "Alive", schema: healthSchema } },
      handler: async () => ({ status: 200, body: { status: "ok" } }),
    }),
    route({
      method: "get",
      path: "/health/ready",
      operationId: "getReadiness",
      summary: "Readiness: database, indexer and chain all answer",
      tag: "Operations",
      auth: false,
      responses: {
        200: { description: "Ready", schema: readinessSchema },
        503: { description: "Not ready", schema: readinessSchema },
      },
      handler: async (_input, _req, res) => {
        const [database, indexer, chain] = await Promise.all([
          db.query("SELECT 1").then(
            () => true,
            () => false,
          ),
          upstreams.indexerReady(),
          upstreams.chainHead().then(
            () => true,
            () => false,
          ),
        ]);
        const ready = database && indexer && chain;
        if (!ready) res.setHeader("Retry-After", "5");
        return {
          status: ready ? 200 : 503,
          body: { status: ready ? "ready" : "not_ready", checks: { database, indexer, chain } },
        };
      },
    }),
  ];
}
