import { randomBytes } from "node:crypto";
import type { RequestHandler } from "express";

const SAFE = /^[A-Za-z0-9_.:-]{8,128}$/;

// An id names a request in logs; it guards nothing, so it need not be unpredictable: 16 random hex
// digits per process and a counter (8 hex digits) are unique, where 12 random bytes per request
// cost a call into the CSPRNG on every request.
let prefix = randomBytes(8).toString("hex");
let counter = 0;
function newId(): string {
  if (counter === 0xffffffff) {
    prefix = randomBytes(8).toString("hex");
    counter = 0;
  }
  counter += 1;
  return `req_${prefix}${counter.toString(16).padStart(8, "0")}`;
}

/** Echoes a caller's X-Request-Id when it is sane, or makes one. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.get("x-request-id");
  const id = incoming && SAFE.test(incoming) ? incoming : newId();
  res.locals.requestId = id;
  res.setHeader("X-Request-Id", id);
  next();
};
