// API keys: `sk_test_…` (sandbox) and `sk_live_…` (production). A key is
// `<prefix><lookup: 16 base62><secret: 32 base62>` (≈ 285 random bits); the
// database keeps the lookup part and a SHA-256 of the whole key, never the key.
import { hash, timingSafeEqual } from "node:crypto";
import ipaddr from "ipaddr.js";
import type { Database } from "../../adapters/db/index.ts";
import { base62 } from "../../adapters/ids.ts";
import {
  type ApiKeyRow,
  accountExists,
  countActiveKeys,
  findKeyByLookup,
  insertAccount,
  insertKey,
  keysOfAccount,
  lockAccount,
  lockKey,
  revokeKey,
  revokeKeysOfIdempotencyKey,
  setKeyRestrictions,
  touchKey,
} from "./store.ts";

export type Environment = "sandbox" | "production";

export const KEY_PREFIX: Record<Environment, string> = { sandbox: "sk_test_", production: "sk_live_" };
const KEY_PATTERN = /^sk_(test|live)_([0-9A-Za-z]{16})([0-9A-Za-z]{32})$/;

/**
 * What is wrong with a token that is not shaped like a key, in words that
 * quote none of it (it may be a real key, cut short): the prefix, or what
 * follows a right prefix.
 */
export function keyShapeProblem(token: string): string {
  const prefix = Object.values(KEY_PREFIX).find((p) => token.startsWith(p));
  if (!prefix) return "An API key starts with sk_test_ (sandbox) or sk_live_ (production).";
  const rest = token.slice(prefix.length);
  const what = /[^0-9A-Za-z]/.test(rest)
    ? `has characters other than letters and digits after ${prefix}`
    : `has ${rest.length} characters after ${prefix}, where a key has 48`;
  return (
    `This key ${what}: an API key is ${prefix} followed by 48 letters and digits. ` +
    "It was cut short or mistyped: copy the whole key again (the dashboard shows a key's secret only when it is made)."
  );
}

// One call, without a Hash object per request (authentication hashes the presented key every time).
const sha256 = (value: string) => hash("sha256", value, "buffer");

/**
 * What a restricted key may call, by the first segment of the route below
 * /v1. A resource-restricted key reaches only these; a route outside every
 * group (one added later) is refused to it, so a restriction never widens.
 */
export const KEY_RESOURCES = {
  mints: ["mint", "mints"],
  redemptions: ["redeem", "redemptions"],
  proofs: ["proofs", "nullifiers"],
  ledger: ["collateral", "supply", "prices", "wallets", "deposits", "relay"],
  positions: ["positions", "position-actions"],
  withdrawals: ["withdrawals"],
  agents: ["agents", "alerts"],
  governance: ["governance"],
  keys: ["keys"],
  sandbox: ["sandbox"],
} as const satisfies Record<string, readonly string[]>;

export type KeyResource = keyof typeof KEY_RESOURCES;
export const isKeyResource = (v: string): v is KeyResource => Object.hasOwn(KEY_RESOURCES, v);

/** The resource a route (the template, /v1/…) belongs to; undefined for one outside every group. */
export function resourceOf(route: string | undefined): KeyResource | undefined {
  const segment = route?.replace(/^\/v1\//, "").split("/")[0] ?? "";
  return (Object.keys(KEY_RESOURCES) as KeyResource[]).find((r) =>
    (KEY_RESOURCES[r] as readonly string[]).includes(segment),
  );
}

export interface KeyRestrictions {
  /** GET and HEAD only. */
  readOnly: boolean;
  /** Only these resources; null: all. */
  resources: KeyResource[] | null;
  /** Only from these addresses or CIDR ranges; null: from anywhere. */
  allowedIps: string[] | null;
}

export const UNRESTRICTED: KeyRestrictions = { readOnly: false, resources: null, allowedIps: null };

/** An IP address or CIDR range in canonical form, or undefined when it is neither. */
export function parseIpRule(text: string): string | undefined {
  const value = text.trim();
  try {
    if (value.includes("/")) {
      const [address, bits] = ipaddr.parseCIDR(value);
      return `${address.toString()}/${bits}`;
    }
    return normalise(ipaddr.parse(value)).toString();
  } catch {
    return undefined;
  }
}

// An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d: compare it as IPv4.
const normalise = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
  address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;

function ipAllowed(rules: readonly string[], ip: string | undefined): boolean {
  if (!ip || !ipaddr.isValid(ip)) return false;
  const client = normalise(ipaddr.parse(ip));
  return rules.some((rule) => {
    try {
      if (!rule.includes("/")) return normalise(ipaddr.parse(rule)).toString() === client.toString();
      const [range, bits] = ipaddr.parseCIDR(rule);
      return range.kind() === client.kind() && client.match(range, bits);
    } catch {
      return false;
    }
  });
}

/** A rule as a range: a single address is its own /32 or /128, an IPv4-mapped range an IPv4 one. */
function asRange(rule: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  try {
    const [address, bits] = rule.includes("/")
      ? ipaddr.parseCIDR(rule)
      : ((parsed) => [parsed, parsed.kind() === "ipv4" ? 32 : 128] as const)(ipaddr.parse(rule));
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [address, bits];
  } catch {
    return undefined;
  }
}

function rangeWithin(inner: string, outer: string): boolean {
  const a = asRange(inner);
  const b = asRange(outer);
  if (!a || !b || a[0].kind() !== b[0].kind() || a[1] < b[1]) return false;
  return a[0].match(b[0], b[1]);
}

/**
 * Whether a key with `key`'s restrictions can do nothing that one with
 * `than`'s cannot: read-only if it is, limited to a subset of its resources,
 * and bound to addresses inside its ranges. A key acts on other keys (revokes
 * them, sees their last four characters) only when they are no broader than
 * itself, so a restricted key cannot take away or identify a wider one.
 * Keys of the other environment are out of reach anyway (see the keys routes).
 */
export function noBroaderThan(key: KeyRestrictions, than: KeyRestrictions): boolean {
  if (than.readOnly && !key.readOnly) return false;
  if (than.resources && !(key.resources && key.resources.every((r) => than.resources!.includes(r)))) return false;
  if (
    than.allowedIps &&
    !(key.allowedIps && key.allowedIps.every((rule) => than.allowedIps!.some((outer) => rangeWithin(rule, outer))))
  ) {
    return false;
  }
  return true;
}

export type KeyRefusal = "read_only" | "resource" | "ip";

/** Whether a key's restrictions let it call `route` (the template, /v1/…) with `method` from `ip`. */
export function checkRestrictions(
  restrictions: KeyRestrictions,
  method: string,
  route: string | undefined,
  ip: string | undefined,
): KeyRefusal | undefined {
  if (restrictions.allowedIps && !ipAllowed(restrictions.allowedIps, ip)) return "ip";
  if (restrictions.resources) {
    const resource = resourceOf(route);
    if (!resource || !restrictions.resources.includes(resource)) return "resource";
  }
  if (restrictions.readOnly && method !== "GET" && method !== "HEAD") return "read_only";
  return undefined;
}

export interface ApiKey {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  restrictions: KeyRestrictions;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    name: row.name,
    prefix: KEY_PREFIX[row.environment],
    last4: row.last4,
    createdAt: iso(row.created_at)!,
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
    restrictions: {
      readOnly: row.read_only,
      resources: row.resources ? row.resources.filter(isKeyResource) : null,
      allowedIps: row.allowed_ips,
    },
  };
}

/** The key to act on has rights the acting key lacks (see noBroaderThan). */
export class KeyBroaderError extends Error {
  constructor(readonly keyId: string) {
    super(`key ${keyId} has rights the acting key lacks`);
  }
}

/** The account already holds its allowance of active keys in that environment. */
export class KeyLimitError extends Error {
  constructor(readonly limit: number) {
    super(`an account holds at most ${limit} active keys per environment`);
  }
}

export type AuthResult =
  | { ok: true; key: ApiKey }
  | { ok: false; reason: "malformed" | "unknown" | "revoked" }
  | { ok: false; reason: "wrong_environment"; environment: Environment };

const AUTH_CACHE_MS = 10_000;
const TOUCH_EVERY_MS = 60_000;

export class KeyService {
  // Verified keys for a few seconds, so that a hot key costs no query per
  // request. Revocation through this process drops the entry at once.
  readonly #cache = new Map<string, { key: ApiKey; hash: Buffer; until: number }>();
  readonly #touched = new Map<string, number>();

  constructor(private readonly db: Database) {}

  async createAccount(name: string): Promise<{ id: string; name: string }> {
    const id = `acct_${base62(16)}`;
    await insertAccount(this.db, id, name);
    return { id, name };
  }

  async accountExists(id: string): Promise<boolean> {
    return accountExists(this.db, id);
  }

  /**
   * Creates a key; the secret is returned here and never again. With
   * `maxActive`, refuses (KeyLimitError) an account that already holds that
   * many active keys in the environment; the account row is locked meanwhile,
   * so concurrent creations cannot pass the cap together.
   */
  async create(
    accountId: string,
    environment: Environment,
    name: string,
    options: {
      maxActive?: number;
      restrictions?: KeyRestrictions;
      /**
       * The request's Idempotency-Key and how long its answer is kept. The
       * request runs again only if no answer of it was stored: a key an
       * earlier run of it made in that time (its process died before
       * answering) was never shown to anyone, and is revoked for this one.
       */
      idempotency?: { key: string; ttlHours: number };
    } = {},
  ): Promise<ApiKey & { secret: string }> {
    const r = options.restrictions ?? UNRESTRICTED;
    const lookup = base62(16);
    const secret = `${KEY_PREFIX[environment]}${lookup}${base62(32)}`;
    const row = await this.db.transaction(async (tx) => {
      if (options.idempotency) {
        await revokeKeysOfIdempotencyKey(
          tx,
          accountId,
          environment,
          options.idempotency.key,
          options.idempotency.ttlHours,
        );
      }
      if (options.maxActive !== undefined) {
        await lockAccount(tx, accountId);
        if ((await countActiveKeys(tx, accountId, environment)) >= options.maxActive) {
          throw new KeyLimitError(options.maxActive);
        }
      }
      return insertKey(tx, {
        id: `key_${base62(16)}`,
        accountId,
        environment,
        lookup,
        hash: sha256(secret).toString("hex"),
        last4: secret.slice(-4),
        name,
        readOnly: r.readOnly,
        resources: r.resources,
        allowedIps: r.allowedIps,
        idempotencyKey: options.idempotency?.key ?? null,
      });
    });
    return { ...toApiKey(row), secret };
  }

  /** The account's keys: of one environment, or (for operators) of all. */
  async list(accountId: string, environment?: Environment): Promise<ApiKey[]> {
    return (await keysOfAccount(this.db, accountId, environment ?? null)).map(toApiKey);
  }

  /**
   * Revokes a key of the account (in `environment` when given); undefined when
   * there is no such key. With `within`, refuses (KeyBroaderError) a key
   * broader than those restrictions, judged on the row locked for the update,
   * so a concurrent change of its restrictions cannot slip between.
   */
  async revoke(
    accountId: string,
    keyId: string,
    environment?: Environment,
    within?: KeyRestrictions,
  ): Promise<ApiKey | undefined> {
    const row = await this.db.transaction(async (tx) => {
      const found = await lockKey(tx, keyId, accountId, environment ?? null);
      if (!found) return undefined;
      if (within && !noBroaderThan(toApiKey(found).restrictions, within)) throw new KeyBroaderError(keyId);
      return revokeKey(tx, keyId);
    });
    for (const [lookup, entry] of this.#cache) if (entry.key.id === keyId) this.#cache.delete(lookup);
    return row ? toApiKey(row) : undefined;
  }

  /** Replaces a key's restrictions; this process's cache forgets the key at once, others within seconds. */
  async restrict(accountId: string, keyId: string, restrictions: KeyRestrictions): Promise<ApiKey | undefined> {
    const row = await setKeyRestrictions(this.db, keyId, accountId, restrictions);
    for (const [lookup, entry] of this.#cache) if (entry.key.id === keyId) this.#cache.delete(lookup);
    return row ? toApiKey(row) : undefined;
  }

  /**
   * authenticate's answer without waiting, when the token is malformed or this process verified
   * its key moments ago; undefined when only the database can say (a hot key's requests then
   * cost no promise on the way in).
   */
  authenticateCached(token: string, environment: Environment): AuthResult | undefined {
    const match = KEY_PATTERN.exec(token);
    if (!match) return { ok: false, reason: "malformed" };
    const cached = this.#cache.get(match[2]!);
    if (!cached || cached.until <= Date.now()) return undefined;
    return this.#verify(token, match[1]!, cached.key, cached.hash, environment);
  }

  /** Checks a bearer token for a deployment serving `environment`. */
  async authenticate(token: string, environment: Environment): Promise<AuthResult> {
    const early = this.authenticateCached(token, environment);
    if (early) return early;
    const [, prefix, lookup] = KEY_PATTERN.exec(token)!;
    const row = await findKeyByLookup(this.db, lookup!);
    if (!row) return { ok: false, reason: "unknown" };
    const key = toApiKey(row);
    const stored = Buffer.from(row.hash, "hex");
    if (!row.revoked_at) this.#cache.set(lookup!, { key, hash: stored, until: Date.now() + AUTH_CACHE_MS });
    return this.#verify(token, prefix!, key, stored, environment);
  }

  /** The key's answer for the token that named it by lookup; `prefix` is the token's live/test. */
  #verify(token: string, prefix: string, key: ApiKey, stored: Buffer, environment: Environment): AuthResult {
    if (!timingSafeEqual(stored, sha256(token))) return { ok: false, reason: "unknown" };
    if (key.revokedAt) return { ok: false, reason: "revoked" };
    const keyEnvironment: Environment = prefix === "live" ? "production" : "sandbox";
    if (key.environment !== keyEnvironment) return { ok: false, reason: "unknown" };
    if (key.environment !== environment)
      return { ok: false, reason: "wrong_environment", environment: key.environment };
    this.#touch(key.id);
    return { ok: true, key };
  }

  /** Records last use at most once a minute per key, off the request path. */
  #touch(keyId: string): void {
    const now = Date.now();
    if ((this.#touched.get(keyId) ?? 0) + TOUCH_EVERY_MS > now) return;
    this.#touched.set(keyId, now);
    touchKey(this.db, keyId).catch(() => {
      this.#touched.delete(keyId);
    });
  }
}
