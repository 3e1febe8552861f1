// The problems of a key's restrictions (set on the dashboard's API Keys tab):
// what a restricted key is refused, and why. Spread into PROBLEM_CATALOG.
export const KEY_RESTRICTION_PROBLEMS = {
  key_read_only: {
    status: 403,
    title: "Key is read-only",
    meaning:
      "The key is restricted to reading (GET) on the dashboard's API Keys tab; nothing was done. Use a key that may write.",
    example: { detail: "This API key is read-only: POST is refused." },
  },
  key_resource_not_allowed: {
    status: 403,
    title: "Resource not allowed for this key",
    meaning:
      "The key is restricted to a set of resources on the dashboard's API Keys tab and this route is not among them; nothing was done.",
    example: { detail: "This API key may not call /v1/mint." },
  },
  key_ip_not_allowed: {
    status: 403,
    title: "Address not allowed for this key",
    meaning:
      "The key is bound to IP addresses on the dashboard's API Keys tab and this request came from another; nothing was done.",
    example: { detail: "This API key may not be used from this address." },
  },
  key_broader_than_caller: {
    status: 403,
    title: "Key has more rights than this one",
    meaning:
      "A key acts only on keys no broader than itself: the key named has a resource, writing or an address the calling " +
      "key lacks; nothing was done. Revoke it on the dashboard or with a key at least as broad.",
    example: {
      detail:
        "API key key_3kTm9QxZ2bLw7VfA has rights this key lacks (more resources, writing, or more addresses), so this " +
        "key may not revoke it. Revoke it on the dashboard or with a key at least as broad.",
    },
  },
} as const satisfies Record<string, { status: number; title: string; meaning: string; example: { detail: string } }>;
