// What JSON.parse accepts but nothing downstream should see: nesting deep
// enough to overflow a recursive walk (the idempotency hash, zod, logging) and
// NUL characters, which PostgreSQL text cannot hold. Walked iteratively, so the
// check itself cannot overflow.
import bytes from "bytes";
import express, { type RequestHandler, Router } from "express";
import { type FieldError, problems } from "../problems.ts";

export const MAX_JSON_DEPTH = 32;

const fieldOf = (path: (string | number)[]) => ["body", ...path].join(".");

export function bodyGuard(): RequestHandler {
  return (req, _res, next) => {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== "object") return next();
    const errors: FieldError[] = [];
    const stack: { value: unknown; path: (string | number)[] }[] = [{ value: body, path: [] }];
    while (stack.length > 0 && errors.length < 10) {
      const { value, path } = stack.pop()!;
      if (typeof value === "string") {
        if (value.includes("\u0000")) errors.push({ field: fieldOf(path), message: "must not contain NUL characters" });
        continue;
      }
      if (value === null || typeof value !== "object") continue;
      if (path.length >= MAX_JSON_DEPTH) return next(problems.nestingTooDeep(MAX_JSON_DEPTH));
      for (const [key, child] of Object.entries(value)) {
        // The key itself is reported by position, never echoed: it is caller data.
        if (key.includes("\u0000")) errors.push({ field: fieldOf(path), message: "a key contains a NUL character" });
        stack.push({ value: child, path: [...path, Array.isArray(value) ? Number(key) : key] });
      }
    }
    next(errors.length > 0 ? problems.validation(errors) : undefined);
  };
}

/** A POST, PUT or PATCH with a body must say it is JSON. */
const requireJson: RequestHandler = (req, _res, next) => {
  const hasBody =
    req.headers["content-length"] !== "0" && (req.headers["content-length"] || req.headers["transfer-encoding"]);
  if (["POST", "PUT", "PATCH"].includes(req.method) && hasBody && !req.is("application/json")) {
    return next(problems.unsupportedMediaType(req.get("content-type") ?? "no content type"));
  }
  next();
};

/**
 * body-parser answers 413 only after reading the whole body off the socket: a
 * declared length past the limit is refused at once, and the connection closed.
 */
function declaredLengthWithin(limit: string): RequestHandler {
  const max = bytes.parse(limit) ?? 0;
  return (req, res, next) => {
    if (Number(req.headers["content-length"] ?? 0) <= max) return next();
    res.setHeader("Connection", "close");
    next(problems.bodyTooLarge(limit));
  };
}

/** Request bodies as the API takes them: JSON, at most `limit`, parsed, then guarded. */
export function jsonBodies(limit: string): Router {
  return Router().use(requireJson, declaredLengthWithin(limit), express.json({ limit, strict: true }), bodyGuard());
}
