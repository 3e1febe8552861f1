// What JSON.parse accepts but nothing downstream should see: nesting deep
// enough to overflow a recursive walk (the idempotency hash, zod, logging) and
// NUL characters, which PostgreSQL text cannot hold. Walked iteratively, so the
// check itself cannot overflow.
import type { RequestHandler } from "express";
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
