// What JSON.parse accepts but nothing downstream should see: nesting deep
// enough to overflow a recursive walk (the idempotency hash, zod, logging),
// NUL characters and lone surrogates, which PostgreSQL text cannot hold, and
// bytes that are not UTF-8. Walked iteratively, so the check itself cannot
// overflow.
import bytes from "bytes";
import { parse as parseContentType } from "content-type";
import express, { type Request, type RequestHandler, Router } from "express";
import { type FieldError, Problem, problems } from "../problems.ts";
import { invalidUtf8Offset, notUtf8Detail, unstorableReason } from "../text-rules.ts";

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
        const reason = unstorableReason(value);
        if (reason) errors.push({ field: fieldOf(path), message: reason });
        continue;
      }
      if (value === null || typeof value !== "object") continue;
      if (path.length >= MAX_JSON_DEPTH) return next(problems.nestingTooDeep(MAX_JSON_DEPTH));
      for (const [key, child] of Object.entries(value)) {
        // The key itself is reported by position, never echoed: it is caller data.
        if (unstorableReason(key)) {
          errors.push({ field: fieldOf(path), message: "a key contains a NUL character or a lone surrogate" });
        }
        stack.push({ value: child, path: [...path, Array.isArray(value) ? Number(key) : key] });
      }
    }
    next(errors.length > 0 ? problems.validation(errors) : undefined);
  };
}

/** A POST, PUT or PATCH with a body must say it is JSON, in UTF-8. */
const requireJson: RequestHandler = (req, _res, next) => {
  const hasBody =
    req.headers["content-length"] !== "0" && (req.headers["content-length"] || req.headers["transfer-encoding"]);
  if (!["POST", "PUT", "PATCH"].includes(req.method) || !hasBody) return next();
  if (!req.is("application/json")) {
    return next(problems.unsupportedMediaType(req.get("content-type") ?? "no content type"));
  }
  // body-parser decodes any charset starting "utf-" (UTF-7, UTF-16, UTF-32):
  // RFC 8259 says JSON between systems is UTF-8, and a second decoder is a way
  // round any filter that read the bytes as UTF-8. Parsed by the same package
  // body-parser uses, so the charset judged is the one it would decode with.
  let charset: string | undefined;
  try {
    charset = parseContentType(req.headers["content-type"] ?? "").parameters.charset;
  } catch {
    return next(problems.unsupportedMediaType("a malformed Content-Type"));
  }
  if (charset !== undefined && charset.toLowerCase() !== "utf-8") {
    return next(
      new Problem(
        415,
        "unsupported_media_type",
        "Unsupported media type",
        "Send JSON in UTF-8: Content-Type application/json with charset=utf-8 or no charset.",
      ),
    );
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

/**
 * body-parser decodes with iconv-lite, which puts U+FFFD in place of bytes that
 * are not UTF-8 (a Latin-1 é, an overlong c0 af, an encoded surrogate ed a0
 * 80): the body would be stored as another text than the one sent. Run on the
 * raw bytes (decompressed), before they are decoded.
 */
function strictUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (invalidUtf8Offset(body) !== undefined) throw problems.malformedBody(notUtf8Detail(body, "The request body"));
}

/** Request bodies as the API takes them: JSON, at most `limit`, parsed, then guarded. */
export function jsonBodies(limit: string): RequestHandler {
  const parse = Router().use(
    requireJson,
    declaredLengthWithin(limit),
    express.json({ limit, strict: true, verify: strictUtf8 }),
    bodyGuard(),
  );
  // A request that declares no body (neither length nor transfer encoding, as a GET) passes
  // each of the four untouched, as body-parser's own test says: it skips the router.
  const declaresBody = (req: Request) =>
    req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
  return (req, res, next) => (declaresBody(req) ? parse(req, res, next) : next());
}
