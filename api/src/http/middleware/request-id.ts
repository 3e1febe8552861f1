import { randomBytes } from "node:crypto";
import type { RequestHandler } from "express";

const SAFE = /^[A-Za-z0-9_.:-]{8,128}$/;

/** Echoes a caller's X-Request-Id when it is sane, or makes one. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.get("x-request-id");
  const id = incoming && SAFE.test(incoming) ? incoming : `req_${randomBytes(12).toString("hex")}`;
  res.locals.requestId = id;
  res.setHeader("X-Request-Id", id);
  next();
};
