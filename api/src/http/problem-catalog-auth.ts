// The problems of authentication: how a key (or the Authorization header)
// can be wrong, what a restricted key may not do, and which keys a key may
// make. Spread into PROBLEM_CATALOG (problem-catalog.ts), which checks each
// entry's shape; kept apart so that file stays readable.

const auth = (meaning: string, detail: string) => ({
  status: 401,
  title: "Unauthorized",
  meaning,
  example: { detail },
  headers: ["WWW-Authenticate"],
});

export const AUTH_PROBLEMS = {
  missing_api_key: auth("No Authorization header.", "Send your API key as `Authorization: Bearer <key>`."),
  malformed_authorization: auth(
    "The Authorization header is not `Bearer <key>`.",
    "The Authorization header must be `Bearer <key>`.",
  ),
  malformed_api_key: auth(
    "The token is not shaped like a key (sk_test_ or sk_live_, then 48 letters and digits); the detail says which " +
      "part is wrong without quoting it. A key shaped right but unknown gets invalid_api_key instead.",
    "This key has 15 characters after sk_test_, where a key has 48: an API key is sk_test_ followed by 48 letters " +
      "and digits. It was cut short or mistyped: copy the whole key again (the dashboard shows a key's secret only " +
      "when it is made).",
  ),
  invalid_api_key: auth(
    "The key is shaped right but no key has this secret: a typo, a key deleted with its account, or a key of another deployment.",
    "No API key has this secret, though it is shaped like one: it is mistyped, was deleted with its account, or " +
      "belongs to another deployment. Check it, or create a key on the dashboard's API Keys tab.",
  ),
  revoked_api_key: auth(
    "The key was revoked: use another key of the account.",
    "This API key was revoked: use another key of the account, or create one on the dashboard's API Keys tab.",
  ),
  wrong_environment: {
    ...auth(
      "A production key on the sandbox or a sandbox key in production; call the environment the key belongs to. " +
        "baseUrl names it when this server is told (PRODUCTION_BASE_URL, SANDBOX_BASE_URL); otherwise the detail " +
        "says that it is not.",
      "This is a production key; this server is the sandbox environment.",
    ),
    fields: ["keyEnvironment", "baseUrl"],
    example: {
      detail:
        "This is a production key; this server is the sandbox environment. Call https://api.zsd.test/v1 with it, " +
        "or use a sk_test_… key with this server.",
      keyEnvironment: "production",
      baseUrl: "https://api.zsd.test/v1",
    },
  },
  invalid_metrics_token: auth(
    "GET /metrics needs METRICS_TOKEN as a bearer token.",
    "Send the metrics token as `Authorization: Bearer <token>`.",
  ),
  key_environment_not_allowed: {
    status: 403,
    title: "Key of another environment",
    meaning:
      "POST /v1/keys makes keys of the calling key's environment only: a sandbox key (often kept in test " +
      "configurations and CI) that could make production keys would open production to whoever finds it. " +
      "Make production keys on the dashboard (signed in, API Keys tab), or call POST /v1/keys on the production " +
      "API with a production key.",
    fields: ["keyEnvironment"],
    example: {
      detail:
        "This sandbox key may not make production keys: make them on the dashboard's API Keys tab, or with a " +
        "production key on the production API.",
      keyEnvironment: "sandbox",
    },
  },
} as const;
