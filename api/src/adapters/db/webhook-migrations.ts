// Schema changes for webhook delivery, in their own file: migrations.ts is long enough.
export const WEBHOOK_MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 20,
    name: "webhooks: a breaker per agent for receivers that time out, and each agent's due deliveries by age",
    statements: [
      // Kept in the database so that a restart or another replica taking the lease does not
      // send at once to a receiver that was paused.
      `CREATE TABLE webhook_breakers (
        agent_id text PRIMARY KEY REFERENCES agents(id),
        -- The endpoint it judged: when the agent's URL changes, its state no longer applies.
        webhook_url text NOT NULL,
        -- Attempts in a row that got no answer within the timeout.
        timeouts integer NOT NULL DEFAULT 0,
        -- Times it opened since the endpoint last answered: each doubles the pause.
        trips integer NOT NULL DEFAULT 0,
        open_until timestamptz,
        -- When it last opened: attempts claimed before then were counted by that opening.
        opened_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // The worker takes each agent's oldest due deliveries in turn, not the oldest of all.
      `CREATE INDEX webhook_deliveries_agent_due ON webhook_deliveries (agent_id, next_attempt_at)
        WHERE status = 'pending'`,
    ],
  },
];
