// Routes are declared once with their zod schemas: the same declaration
// validates requests, mounts the Express handler and generates OpenAPI.
import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import { z } from "zod";
import { type FieldError, problems } from "./problems.ts";
import type { ProblemCode } from "./problem-catalog.ts";
import { nonUtf8Fields, unstorableFields } from "./text-rules.ts";

export type Method = "get" | "post" | "delete";

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** Express path below /v1, e.g. "/wallets/:address/balances". */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Status → response schema, with an example answer that the schema takes. */
  responses: Record<number, { description: string; schema?: z.ZodType; example?: unknown }>;
  /** Example request bodies by name; each one passes `body`. */
  requestExamples?: Record<string, { summary: string; value: unknown }>;
  /**
   * The problem codes this operation answers beyond those every operation of
   * its kind shares (validation, authentication, idempotency, limits: see
   * operationProblems). A code answered but not declared fails the tests.
   */
  problems?: readonly ProblemCode[];
  handler: (
    input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> },
    req: Request,
    res: Response,
  ) => Promise<{ status: number; body: unknown } | void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;

export function route<
  P extends z.ZodType = z.ZodObject,
  Q extends z.ZodType = z.ZodObject,
  B extends z.ZodType = z.ZodUnknown,
>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec;
}

function fieldErrors(where: string, error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue) => {
    // For a body of several shapes, report the shape the request came closest to.
    if (issue.code === "invalid_union" && "errors" in issue && Array.isArray(issue.errors) && issue.errors.length > 0) {
      const closest = (issue.errors as z.core.$ZodIssue[][]).reduce((a, b) => (b.length < a.length ? b : a));
      return closest.map((inner) => ({
        field: [where, ...issue.path.map(String), ...inner.path.map(String)].join("."),
        message: inner.message,
      }));
    }
    return [{ field: [where, ...issue.path.map(String)].join("."), message: issue.message }];
  });
}

/** One part of a request checked against its schema; what fails is added to `errors`. */
function parsePart(errors: FieldError[], where: string, schema: z.ZodType | undefined, value: unknown): unknown {
  // Before the schema, for every part: a refinement or a handler must never see text the database cannot hold.
  const unstorable = unstorableFields(where, value);
  if (unstorable.length > 0) {
    errors.push(...unstorable);
    return undefined;
  }
  if (!schema) return value;
  let result;
  try {
    result = schema.safeParse(value ?? {});
  } catch {
    // A refinement that throws on input it did not expect: refuse the input, never echo it.
    errors.push({ field: where, message: "invalid value" });
    return undefined;
  }
  if (!result.success) errors.push(...fieldErrors(where, result.error));
  return result.success ? result.data : undefined;
}

/**
 * A route's answer, as Express's res.json writes it (same type, charset and length), without its
 * content negotiation, charset parsing and freshness checks, which no JSON answer here uses: on
 * the busiest reads they cost a few percent of the throughput.
 */
function sendJson(res: Response, status: number, body: unknown): void {
  // Express's way for an answer an Idempotency-Key keeps (the idempotency middleware stores it from
  // res.send), for a handler that chose its own type, and for an answer without a body.
  if (res.locals.idempotency || res.hasHeader("Content-Type") || status === 204 || status === 304) {
    return void res.status(status).json(body);
  }
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  if (text === undefined) return void res.end();
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}

/** Mounts routes on a router, validating params, query and body first. */
export function mount(
  router: Router,
  routes: AnyRoute[],
  middleware: {
    authenticated: RequestHandler[];
    /** After `authenticated`, for the operations that change something (not GET). */
    writes: RequestHandler[];
    public: RequestHandler[];
  },
): void {
  for (const spec of routes) {
    const handlers: RequestHandler[] = [
      // The template as mounted (/v1/…), for logs and metrics: once an error
      // leaves this router, Express no longer shows its base path.
      (req, res, next) => {
        res.locals.route = `${req.baseUrl}${spec.path}`;
        next();
      },
      ...(spec.auth ? middleware.authenticated : middleware.public),
      ...(spec.auth && spec.method !== "get" ? middleware.writes : []),
    ];
    handlers.push(async (req: Request, res: Response, next: NextFunction) => {
      try {
        // Node's query parser puts U+FFFD where percent-decoded bytes are not UTF-8: judged on the raw text.
        const rawQuery = req.originalUrl.indexOf("?");
        const errors: FieldError[] = rawQuery < 0 ? [] : nonUtf8Fields("query", req.originalUrl.slice(rawQuery + 1));
        const input = {
          params: parsePart(errors, "params", spec.params, req.params),
          query: parsePart(errors, "query", spec.query, req.query),
          body: parsePart(errors, "body", spec.body, req.body),
        };
        if (errors.length > 0) throw problems.validation(errors);
        // From here the request runs: an idempotency record keeps its answer.
        res.locals.validated = true;
        const result = await spec.handler(input, req, res);
        if (result && !res.headersSent) sendJson(res, result.status, result.body);
      } catch (error) {
        next(error);
      }
    });
    router[spec.method](spec.path, ...handlers);
  }
}

const pattern = (spec: AnyRoute) => new RegExp(`^${spec.path.replace(/:[A-Za-z]+/g, "[^/]+")}/?$`);

/** The route Express would run for a method and a path below /v1, as it runs the first that matches. */
export function findRoute(routes: AnyRoute[], method: string, path: string): AnyRoute | undefined {
  return routes.find((spec) => spec.method === method.toLowerCase() && pattern(spec).test(path));
}

/** The methods declared for a concrete path, for 405 answers. */
export function allowedMethods(routes: AnyRoute[], path: string): string[] {
  const methods = new Set<string>();
  for (const spec of routes) {
    if (pattern(spec).test(path)) methods.add(spec.method.toUpperCase());
  }
  return [...methods];
}
