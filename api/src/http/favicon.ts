// /favicon.ico: browsers ask for it on every page of the docs and the
// dashboard, and a 404 there fills the request log and the console.
import { readFileSync } from "node:fs";
import type { RequestHandler } from "express";

const ICON = readFileSync(new URL("./assets/favicon.ico", import.meta.url));

export const favicon: RequestHandler = (_req, res) => {
  res.type("image/x-icon").set("Cache-Control", "public, max-age=86400").send(ICON);
};
