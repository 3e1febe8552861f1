// The baseline of bench/api.ts: a bare Express "hello" on the same machine.
import express from "express";

const app = express();
app.get("/hello", (_req, res) => void res.json({ hello: "world" }));
const server = app.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
