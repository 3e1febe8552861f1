// OpenAPI 3.1 from the routes' zod schemas (JSON Schema 2020-12, which 3.1 uses).
import { z } from "zod";
import type { AnyRoute } from "../routes.ts";

const problemSchema = {
  type: "object",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string", format: "uri" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string", description: "Stable machine-readable error code" },
    requestId: { type: "string" },
    errors: {
      type: "array",
      items: {
        type: "object",
        required: ["field", "message"],
        properties: { field: { type: "string" }, message: { type: "string" } },
      },
    },
  },
};

type JsonSchema = Record<string, unknown>;

export function openApiDocument(routes: AnyRoute[], servers: { url: string; description: string }[]) {
  const components: Record<string, JsonSchema> = { Problem: problemSchema };

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
          ? { content: { "application/json": { schema: toSchema(response.schema, "output") } } }
          : {}),
      };
    }
    const problem = (description: string) => ({
      description,
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    });
    if (r.params || r.query || r.body) responses["400"] = problem("Invalid request");
    // Every route is rate limited: per API key, or per client address before a key is known.
    responses["429"] = problem("Rate limit exceeded");
    if (r.auth) {
      responses["401"] = problem("Missing, malformed, unknown or revoked API key, or a key of the other environment");
      responses["503"] ??= problem("The indexer or the chain is unavailable");
    }
    if (r.method === "post") {
      responses["409"] = problem("A request with the same Idempotency-Key is in progress");
      responses["422"] = problem("The Idempotency-Key was used with a different body");
    }
    if (r.params) responses["404"] = problem("Not found");
    responses["500"] = problem("Internal error");
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
      ...(r.auth ? {} : { security: [] }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.body
        ? { requestBody: { required: true, content: { "application/json": { schema: toSchema(r.body, "input") } } } }
        : {}),
      responses,
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Shielded Dollar API",
      version: "1.0.0",
      description:
        "Relay API of the Shielded Dollar (ZSD), a stable token minted against attested shielded ZEC. " +
        "Errors are RFC 9457 problem details; every response carries RateLimit headers; POSTs take an Idempotency-Key.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers,
    security: [{ bearerAuth: [] }],
    tags: [...tags].map((name) => ({ name, description: `${name} endpoints` })),
    paths,
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
