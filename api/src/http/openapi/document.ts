// OpenAPI 3.1 from the routes' zod schemas (JSON Schema 2020-12, which 3.1 uses).
import { z } from "zod";
import type { AnyRoute } from "../routes.ts";
import { EVENT_EXAMPLES, EVENT_PAYLOADS, EVENT_SUMMARIES } from "../resources/agents/events.ts";
import type { EventType } from "../../domain/agents/events.ts";
import {
  PROBLEM_CATALOG,
  PROBLEM_FIELDS,
  type ProblemCode,
  type ProblemEntry,
  type ProblemField,
  problemExample,
} from "../problem-catalog.ts";
import { operationProblems } from "../operation-problems.ts";
import { codeSamples } from "./code-samples.ts";
import { DOCS_SITE_PATH } from "./site-path.ts";

/**
 * What each tag's operations are for, and the page of the documentation site (served at
 * /docs/site/ once built) that walks through them.
 */
export const TAG_GUIDES: Record<string, { description: string; page: string; title: string }> = {
  Relay: {
    description: "The relay's terms: chain, contracts, fee, circuit, seal key, the minter's ratio and price",
    page: "reference/api.html",
    title: "The relay API's conventions",
  },
  "API keys": {
    description: "Keys of the caller's account (the dashboard makes them too)",
    page: "guide/dashboard.html",
    title: "The developer dashboard",
  },
  Ledger: {
    description: "Supply, collateral, reserves, balances and the deposit tree, as the chain holds them",
    page: "concepts/books.html",
    title: "The books",
  },
  Proofs: {
    description: "Collateral proofs, made on the wallet's machine and verified here before anything is spent",
    page: "concepts/proof.html",
    title: "The proof",
  },
  Mint: {
    description: "Mints of a verified proof, relayed and followed to confirmation",
    page: "guide/curl.html",
    title: "Mint and redeem with curl",
  },
  Redeem: {
    description: "Redemptions of ZSD for ZEC paid to a shielded address, and redirects of a failed payout",
    page: "guide/redirect.html",
    title: "Redirecting a failed payout",
  },
  Positions: {
    description: "Positions read live from the minter, and the signed actions the relay sends for their owners",
    page: "guide/positions.html",
    title: "Positions",
  },
  Sandbox: {
    description: "Simulated deposits and the sandbox's price: the sandbox only",
    page: "index.html",
    title: "The sandbox at a glance",
  },
  "Compliance agents": {
    description: "Agents and their signed webhooks, delivered at least once",
    page: "guide/compliance.html",
    title: "Compliance agents and webhooks",
  },
  "Compliance alerts": {
    description: "Alerts agents raise, and the holds they place, release or reject",
    page: "guide/held-mint.html",
    title: "A held mint",
  },
  Governance: {
    description: "Proposals, gasless votes and delegations",
    page: "guide/governance.html",
    title: "Governance",
  },
  Operations: {
    description: "Liveness and readiness, for load balancers and orchestrators",
    page: "guide/deploying.html",
    title: "Deploying to a testnet",
  },
};

/** RFC 9457 problem details, with every extension member some code carries. */
function problemSchema() {
  const carriers = (field: ProblemField) =>
    (Object.keys(PROBLEM_CATALOG) as ProblemCode[]).filter((code) =>
      (PROBLEM_CATALOG[code] as ProblemEntry).fields?.includes(field),
    );
  return {
    type: "object",
    description: "An error (RFC 9457). Branch on `code`, never on `title` or `detail`, which are words for people.",
    required: ["type", "title", "status", "detail", "code"],
    properties: {
      type: { type: "string", format: "uri-reference", description: "Where this code is documented" },
      title: { type: "string" },
      status: { type: "integer" },
      detail: { type: "string", description: "What went wrong with this request, for people" },
      code: { type: "string", description: "Stable machine-readable error code (see each operation's answers)" },
      requestId: { type: "string", description: "This request's id, also in the X-Request-Id header" },
      ...Object.fromEntries(
        (Object.entries(PROBLEM_FIELDS) as [ProblemField, (typeof PROBLEM_FIELDS)[ProblemField]][]).map(
          ([name, field]) => [
            name,
            {
              ...field.schema,
              description: `${field.description}. With ${carriers(name)
                .map((code) => `\`${code}\``)
                .join(", ")}.`,
            },
          ],
        ),
      ),
    },
  };
}

const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
  "WWW-Authenticate": { description: 'Bearer realm="zsd"', schema: { type: "string" } },
  Allow: { description: "The methods the path has", schema: { type: "string" } },
};

/** One response per status: each code it can carry, what it means, and an example body. */
function problemResponses(codes: ProblemCode[], typeBase: string) {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of codes) {
    const { status } = PROBLEM_CATALOG[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map(
    [...byStatus].map(([status, group]) => {
      const entries = group.map((code) => [code, PROBLEM_CATALOG[code] as ProblemEntry] as const);
      const headers = [...new Set(entries.flatMap(([, e]) => e.headers ?? []))];
      return [
        status,
        {
          description: entries.map(([code, e]) => `- \`${code}\`: ${e.meaning}`).join("\n"),
          ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((h) => [h, HEADERS[h]])) } : {}),
          content: {
            "application/problem+json": {
              schema: { $ref: "#/components/schemas/Problem" },
              examples: Object.fromEntries(
                entries.map(([code, e]) => [code, { summary: e.title, value: problemExample(code, typeBase) }]),
              ),
            },
          },
        },
      ] as const;
    }),
  );
}

type JsonSchema = Record<string, unknown>;

export function openApiDocument(
  routes: AnyRoute[],
  servers: { url: string; description: string }[],
  /** Prefix of each problem's `type` link, for the examples. */
  problemTypeBase: string,
) {
  const components: Record<string, JsonSchema> = { Problem: problemSchema() };

  /** A schema as JSON Schema; schemas with a meta id become shared components. */
  const toSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const generated = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" });
    // Shared schemas land in $defs; in OpenAPI they are components.
    const json = JSON.parse(
      JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/'),
    ) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
      id?: string;
    };
    const { $schema: _schema, $defs, id, ...rest } = json;
    for (const [name, def] of Object.entries($defs ?? {})) {
      const { id: _id, ...body } = def;
      components[name] = body;
    }
    if (typeof id !== "string") return rest;
    components[id] = rest;
    return { $ref: `#/components/schemas/${id}` };
  };

  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  // curl's samples name the server: the configured one, else the sandbox on this machine.
  const ownServer = servers[0]?.url && servers[0].url !== "/" ? servers[0].url : "http://127.0.0.1:3000";
  for (const r of routes) {
    const path = `/v1${r.path.replace(/:([A-Za-z]+)/g, "{$1}")}`;
    tags.add(r.tag);
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ["path", r.params],
      ["query", r.query],
    ] as const) {
      if (!schema) continue;
      const json = toSchema(schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
      for (const [name, property] of Object.entries(json.properties ?? {})) {
        parameters.push({
          name,
          in: where,
          required: where === "path" || (json.required ?? []).includes(name),
          schema: property,
          ...(property.description ? { description: property.description } : {}),
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(r.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema
          ? {
              content: {
                "application/json": {
                  schema: toSchema(response.schema, "output"),
                  ...(response.example === undefined ? {} : { example: response.example }),
                },
              },
            }
          : {}),
      };
    }
    for (const [status, problem] of problemResponses(operationProblems(r), problemTypeBase)) {
      const declared = responses[status] as { description: string; content?: object } | undefined;
      // A status the route answers with its own body too (none today) keeps both.
      responses[status] = declared
        ? {
            ...problem,
            description: `${declared.description}, or a problem:\n${problem.description}`,
            content: { ...declared.content, ...problem.content },
          }
        : problem;
    }
    if (r.method === "post") {
      parameters.push({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "Makes the POST safe to retry: a repeat with the same body replays the first response for 24 h",
        schema: { type: "string", maxLength: 255 },
      });
    }
    paths[path] ??= {};
    paths[path]![r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      "x-codeSamples": codeSamples(r, ownServer.replace(/\/$/, "")),
      ...(r.auth ? {} : { security: [] }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.body
        ? {
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: toSchema(r.body, "input"),
                  ...(r.requestExamples ? { examples: r.requestExamples } : {}),
                },
              },
            },
          }
        : {}),
      responses,
    };
  }

  const webhooks = webhookOperations(toSchema);
  tags.add(WEBHOOK_TAG);

  return {
    openapi: "3.1.0",
    info: {
      title: "Shielded Dollar API",
      version: "1.0.0",
      description:
        "Relay API of the Shielded Dollar (ZSD), a stable token minted against attested shielded ZEC. " +
        "Every response carries RateLimit headers; POSTs take an Idempotency-Key.\n\n" +
        "Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`: each operation " +
        "lists the codes it answers, what each means and an example. Every code, with the few any request can " +
        "meet (`not_found`, `method_not_allowed`, `request_timeout`, `uri_too_long`, `headers_too_large`), is " +
        "described at [/docs/problems](/docs/problems), where each problem's `type` points.\n\n" +
        `Guides (a mint with curl, the SDKs, compliance agents, governance), concepts and the settings: [the ` +
        `documentation](${DOCS_SITE_PATH}), which this server serves once \`npm run docs\` has built it. Each ` +
        "operation's samples use the JS and Python SDKs.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers,
    security: [{ bearerAuth: [] }],
    tags: [...tags].map((name) => {
      const guide = TAG_GUIDES[name];
      return guide
        ? {
            name,
            description: guide.description,
            externalDocs: { description: guide.title, url: `${DOCS_SITE_PATH}${guide.page}` },
          }
        : { name };
    }),
    paths,
    webhooks,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "An API key: sk_test_… (sandbox) or sk_live_… (production)",
        },
      },
    },
  };
}

const WEBHOOK_TAG = "Compliance agents";

/** The Standard Webhooks headers of every delivery. */
const DELIVERY_HEADERS = [
  {
    name: "webhook-id",
    description: "The event's id (evt_…), the same on every retry of it: receivers deduplicate on it",
    schema: { type: "string", pattern: "^evt_[0-9A-Za-z]{20}$" },
    example: "evt_2bN4mQ6wE8rT0yU2iO4p",
  },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, in Unix seconds; refuse a delivery far from now (replays)",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1773043200",
  },
  {
    name: "webhook-signature",
    description:
      "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the agent's secret " +
      "(the base64 after `whsec_`); during a secret rotation's grace period, two such signatures separated by a " +
      "space (old and new). Check with a Standard Webhooks library: `new Webhook(secret).verify(body, headers)`",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$" },
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
].map((header) => ({ ...header, in: "header", required: true }));

/** The envelope of an event of `type`, with its payload as `data`. */
const eventSchema = (type: EventType) =>
  z
    .strictObject({
      id: z
        .string()
        .regex(/^evt_[0-9A-Za-z]{20}$/)
        .describe("The event's id, also in the webhook-id header"),
      type: z.literal(type),
      createdAt: z.iso.datetime().describe("When the change happened (the time of its database transaction)"),
      environment: z.enum(["sandbox", "production"]),
      data: EVENT_PAYLOADS[type],
    })
    .meta({
      id: `${type
        .split(/[._]/)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join("")}Event`,
    });

/**
 * One POST per event type, as agents receive it: OpenAPI 3.1's `webhooks`.
 * The payloads are EVENT_PAYLOADS, the single definition the tests check
 * delivered events against.
 */
function webhookOperations(toSchema: (schema: z.ZodType, io: "input" | "output") => JsonSchema) {
  return Object.fromEntries(
    (Object.keys(EVENT_PAYLOADS) as EventType[]).map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Event`,
          summary: EVENT_SUMMARIES[type],
          description:
            (type === "ping"
              ? "Sent to the one agent asked, whatever it subscribes to."
              : `Sent to every enabled agent of the account and environment that subscribes to \`${type}\`.`) +
            " Delivered at least once, retried with back-off for about three days until a 2xx answer.",
          tags: [WEBHOOK_TAG],
          security: [],
          parameters: DELIVERY_HEADERS,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: toSchema(eventSchema(type), "output"),
                example: {
                  id: "evt_2bN4mQ6wE8rT0yU2iO4p",
                  type,
                  createdAt: "2026-03-09T08:00:00.000Z",
                  environment: "sandbox",
                  data: EVENT_EXAMPLES[type],
                },
              },
            },
          },
          responses: {
            "200": { description: "Received: any 2xx ends the delivery (the body is ignored)" },
            "410": { description: "Gone: the agent is disabled and nothing more is sent to it" },
            "503": {
              description:
                "Not now: sent again later, no sooner than a Retry-After header asks (as after any other answer, " +
                "or none, but a 2xx or a 410)",
            },
          },
        },
      },
    ]),
  );
}
