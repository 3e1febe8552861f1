import { ACCOUNT_MIGRATIONS } from "./account-migrations.ts";
import { WEBHOOK_MIGRATIONS } from "./webhook-migrations.ts";
import { COMPLIANCE_MIGRATIONS } from "./compliance-migrations.ts";
import { RELAY_MIGRATIONS } from "./relay-migrations.ts";

/** Ordered schema changes; a deployed migration is never edited, only followed by a new one. */
export const MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 1,
    name: "accounts, api keys, idempotency",
    statements: [
      `CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        lookup text NOT NULL UNIQUE,
        hash text NOT NULL,
        last4 text NOT NULL,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`,
      `CREATE INDEX api_keys_account ON api_keys (account_id)`,
      `CREATE TABLE idempotency_records (
        api_key_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_flight', 'done')),
        response_status integer,
        response_body text,
        response_type text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (api_key_id, key)
      )`,
      `CREATE INDEX idempotency_expiry ON idempotency_records (expires_at)`,
    ],
  },
  {
    version: 2,
    name: "collateral proofs",
    statements: [
      `CREATE TABLE proofs (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        proof_hash text NOT NULL UNIQUE,
        status text NOT NULL CHECK (status IN ('verified', 'consumed', 'rejected')),
        root text NOT NULL,
        nullifier_hash text NOT NULL,
        collateral_floor_zat text NOT NULL,
        binding_hash text NOT NULL,
        mint_amount text NOT NULL,
        recipient text NOT NULL,
        relayer text NOT NULL,
        fee text NOT NULL,
        proof jsonb NOT NULL,
        rejection_reason text,
        mint_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX proofs_account ON proofs (account_id)`,
      // One live claim per nullifier: a second proof for the same deposit waits
      // until the first is rejected.
      `CREATE UNIQUE INDEX proofs_live_nullifier ON proofs (nullifier_hash) WHERE status IN ('verified', 'consumed')`,
    ],
  },
  {
    version: 3,
    name: "local custody ledger",
    statements: [
      `CREATE TABLE custody_ledger (
        id bigserial PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('deposit', 'payout')),
        amount_zat text NOT NULL,
        note_commitment text,
        leaf_index integer,
        redemption_id text,
        zcash_txid text NOT NULL,
        tx_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE UNIQUE INDEX custody_payout_once ON custody_ledger (redemption_id) WHERE kind = 'payout'`,
    ],
  },
  {
    version: 4,
    name: "relayed mints",
    statements: [
      `CREATE TABLE mints (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        proof_id text NOT NULL UNIQUE REFERENCES proofs(id),
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        amount text NOT NULL,
        recipient text NOT NULL,
        relayer text,
        nonce integer,
        tx_hash text,
        raw_tx text,
        block_number bigint,
        failure_reason text,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        submitted_at timestamptz,
        settled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX mints_status ON mints (status, created_at)`,
    ],
  },
  {
    version: 5,
    name: "relayed redemptions",
    statements: [
      `CREATE TABLE redemption_requests (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        status text NOT NULL CHECK (status IN ('requested', 'burned', 'paid', 'failed')),
        relay_status text NOT NULL DEFAULT 'queued' CHECK (relay_status IN ('queued', 'submitted', 'done')),
        owner text NOT NULL,
        amount text NOT NULL,
        withdraw_address text NOT NULL,
        deadline text NOT NULL,
        signature jsonb NOT NULL,
        nonce integer,
        tx_hash text,
        raw_tx text,
        redemption_id text,
        zat_due text,
        zcash_txid text,
        failure_reason text,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX redemption_requests_relay ON redemption_requests (relay_status, created_at)`,
    ],
  },
  {
    version: 6,
    name: "payouts of every on-chain redemption, worker leases",
    statements: [
      // One row per on-chain redemption (relayed or not), from its
      // RedemptionRequested event. "sending" is written before the wallet is
      // asked to pay, so that a payout is never started twice.
      `CREATE TABLE payouts (
        redemption_id numeric PRIMARY KEY,
        owner text NOT NULL,
        amount text NOT NULL,
        zat_due text NOT NULL,
        withdraw_address text NOT NULL,
        request_tx_hash text NOT NULL,
        status text NOT NULL CHECK (status IN
          ('pending', 'sending', 'sent', 'settling', 'completed', 'refunding', 'refunded', 'review')),
        attempts integer NOT NULL DEFAULT 0,
        -- Bumped by every move: a pass acting on an older read changes nothing.
        version integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        operation_id text,
        zcash_txid text,
        settle_tx_hash text,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX payouts_status ON payouts (status, next_attempt_at)`,
      // How far the worker has read an event stream.
      `CREATE TABLE relay_cursors (name text PRIMARY KEY, block bigint NOT NULL)`,
      // One worker per relayer key across replicas: the holder renews its lease each pass.
      `CREATE TABLE worker_leases (name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)`,
      // A payout enters the ZEC ledger when the wallet reports it sent, before
      // the attestor's on-chain settlement.
      `ALTER TABLE custody_ledger ALTER COLUMN tx_hash DROP NOT NULL`,
    ],
  },
  {
    version: 7,
    name: "idempotency keys scoped to the account and environment",
    statements: [
      // Records made per API key expire within a day; none are carried over.
      `DELETE FROM idempotency_records`,
      `ALTER TABLE idempotency_records RENAME COLUMN api_key_id TO scope`,
    ],
  },
  {
    version: 8,
    name: "a failed mint gives its proof back; one live redemption per signed owner nonce",
    statements: [
      // A proof whose mint failed goes back to 'verified' and may be minted
      // again: one proof has at most one mint that has not failed.
      `ALTER TABLE mints DROP CONSTRAINT mints_proof_id_key`,
      `CREATE UNIQUE INDEX mints_live_proof ON mints (proof_id) WHERE status <> 'failed'`,
      // The owner's Redemptions nonce the signature was made for: a signed
      // redemption is relayed once, and another one signed at the same nonce
      // (only one of them can ever go through) waits until the first fails.
      `ALTER TABLE redemption_requests ADD COLUMN owner_nonce text`,
      `CREATE UNIQUE INDEX redemption_requests_live_nonce ON redemption_requests (lower(owner), owner_nonce)
       WHERE status <> 'failed'`,
    ],
  },
  {
    version: 9,
    name: "a relayed redemption's transaction is replaced when stuck, as a mint's is",
    statements: [
      // When its current transaction was signed: one pending longer than
      // RELAY_STUCK_AFTER_MS is replaced. One already in flight counts from its last change.
      `ALTER TABLE redemption_requests ADD COLUMN submitted_at timestamptz`,
      `UPDATE redemption_requests SET submitted_at = updated_at WHERE relay_status = 'submitted'`,
    ],
  },
  {
    version: 10,
    name: "a failed mint or redemption says why with a stable code",
    statements: [
      // The contract's custom error in snake case, or the relay's own cause
      // (domain/reverts.ts, workers/relay/*); rows failed before this carry 'unclassified'.
      `ALTER TABLE mints ADD COLUMN failure_code text`,
      `ALTER TABLE redemption_requests ADD COLUMN failure_code text`,
      `UPDATE mints SET failure_code = 'unclassified' WHERE status = 'failed'`,
      `UPDATE redemption_requests SET failure_code = 'unclassified' WHERE status = 'failed'`,
    ],
  },
  {
    version: 11,
    name: "compliance agents and their webhooks: agents, events, an outbox of deliveries and their attempts",
    statements: [
      `CREATE TABLE agents (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        name text NOT NULL,
        description text,
        role text NOT NULL CHECK (role IN ('observer', 'screener')),
        webhook_url text NOT NULL,
        events text[] NOT NULL,
        -- The API signs with it, so it is kept (never a hash); the previous one
        -- signs too until previous_secret_expires_at, after a rotation.
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        disabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`,
      `CREATE INDEX agents_account ON agents (account_id, environment) WHERE deleted_at IS NULL`,
      // The event as sent, byte for byte on every attempt (its id is the webhook-id).
      `CREATE TABLE webhook_events (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        type text NOT NULL,
        payload text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      // The outbox: one row per event and agent, written in the transaction of the change.
      `CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        event_id text NOT NULL REFERENCES webhook_events(id),
        agent_id text NOT NULL REFERENCES agents(id),
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        -- Attempts made before the current schedule began (a redelivery on request starts a new one).
        schedule_start integer NOT NULL DEFAULT 0,
        -- When pending: when the next attempt is due. A claimed attempt pushes it past its
        -- timeout, so one cut short by a crash is made again after that.
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_response_status integer,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
      `CREATE INDEX webhook_deliveries_agent ON webhook_deliveries (agent_id, created_at)`,
      `CREATE TABLE webhook_attempts (
        delivery_id text NOT NULL REFERENCES webhook_deliveries(id),
        attempt integer NOT NULL,
        started_at timestamptz NOT NULL,
        latency_ms integer NOT NULL,
        response_status integer,
        error text,
        PRIMARY KEY (delivery_id, attempt)
      )`,
    ],
  },
  {
    version: 12,
    name: "compliance: alerts, holds on mints and redemptions, a deny list",
    statements: [
      `CREATE TABLE compliance_alerts (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        raised_by text NOT NULL,
        subject_type text NOT NULL CHECK (subject_type IN ('mint', 'redemption', 'deposit', 'address')),
        subject_id text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'severe')),
        category text NOT NULL,
        reason text NOT NULL,
        action text NOT NULL CHECK (action IN ('none', 'hold')),
        status text NOT NULL CHECK (status IN ('open', 'in_review', 'dismissed', 'confirmed')),
        close_reason text,
        history jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX compliance_alerts_account ON compliance_alerts (account_id, environment, created_at DESC, id DESC)`,
      `CREATE INDEX compliance_alerts_subject ON compliance_alerts (subject_type, subject_id)`,
      `CREATE TABLE compliance_holds (
        subject_type text NOT NULL CHECK (subject_type IN ('mint', 'redemption')),
        subject_id text NOT NULL,
        account_id text NOT NULL REFERENCES accounts(id),
        state text NOT NULL CHECK (state IN ('awaiting_verdict', 'held', 'released', 'rejected')),
        alert_id text REFERENCES compliance_alerts(id),
        verdict_deadline timestamptz,
        decided_by text,
        reason_code text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (subject_type, subject_id)
      )`,
      `CREATE INDEX compliance_holds_waiting ON compliance_holds (verdict_deadline) WHERE state = 'awaiting_verdict'`,
      `CREATE TABLE compliance_deny_list (
        address text PRIMARY KEY,
        reason text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    ],
  },
  {
    version: 13,
    name: "governance: relayed votes and delegations",
    statements: [
      // A signed ballot, checked and queued; the relay worker sends castVoteBySig as it does mints.
      `CREATE TABLE governance_votes (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        proposal_id text NOT NULL,
        voter text NOT NULL,
        support smallint NOT NULL CHECK (support IN (0, 1, 2)),
        reason text,
        signature text NOT NULL,
        ballot_nonce text NOT NULL,
        weight text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        tx_hash text,
        raw_tx text,
        nonce integer,
        submitted_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        block_number bigint,
        failure_code text,
        failure_reason text,
        settled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // One ballot of a voter on a proposal in flight at a time: a second could only revert.
      `CREATE UNIQUE INDEX governance_votes_in_flight ON governance_votes (proposal_id, voter)
         WHERE status IN ('queued', 'submitted')`,
      `CREATE INDEX governance_votes_status ON governance_votes (status, created_at)`,
      `CREATE TABLE governance_delegations (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        delegator text NOT NULL,
        delegatee text NOT NULL,
        delegation_nonce text NOT NULL,
        expiry text NOT NULL,
        signature jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        tx_hash text,
        raw_tx text,
        nonce integer,
        submitted_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        block_number bigint,
        failure_code text,
        failure_reason text,
        settled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE UNIQUE INDEX governance_delegations_signed ON governance_delegations (delegator, delegation_nonce)
         WHERE status <> 'failed'`,
      `CREATE INDEX governance_delegations_account ON governance_delegations (account_id, environment, created_at)`,
      `CREATE INDEX governance_delegations_status ON governance_delegations (status, created_at)`,
    ],
  },
  {
    version: 14,
    name: "developer dashboard: sign-in, key restrictions, request analytics",
    statements: [
      // The account a CLI-made key belongs to is the one a developer signs in to: one table, an optional login.
      `ALTER TABLE accounts ADD COLUMN email text`,
      `ALTER TABLE accounts ADD COLUMN password_hash text`,
      `CREATE UNIQUE INDEX accounts_email ON accounts (email) WHERE email IS NOT NULL`,
      `CREATE TABLE dashboard_sessions (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`,
      `CREATE INDEX dashboard_sessions_account ON dashboard_sessions (account_id)`,
      `CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at)`,
      // NULL resources or allowed_ips: no restriction of that kind.
      `ALTER TABLE api_keys ADD COLUMN read_only boolean NOT NULL DEFAULT false`,
      `ALTER TABLE api_keys ADD COLUMN resources text[]`,
      `ALTER TABLE api_keys ADD COLUMN allowed_ips text[]`,
      // One row per key, minute, method, route template and status: a histogram of latencies, not the requests.
      `CREATE TABLE request_stats (
        minute timestamptz NOT NULL,
        api_key_id text NOT NULL,
        account_id text NOT NULL,
        method text NOT NULL,
        route text NOT NULL,
        status integer NOT NULL,
        count integer NOT NULL,
        total_ms double precision NOT NULL,
        buckets integer[] NOT NULL,
        PRIMARY KEY (api_key_id, minute, method, route, status)
      )`,
      `CREATE INDEX request_stats_account ON request_stats (account_id, minute)`,
      `CREATE INDEX request_stats_minute ON request_stats (minute)`,
      `CREATE TABLE request_log (
        id bigserial PRIMARY KEY,
        api_key_id text NOT NULL,
        account_id text NOT NULL,
        at timestamptz NOT NULL,
        method text NOT NULL,
        route text NOT NULL,
        status integer NOT NULL,
        latency_ms double precision NOT NULL,
        request_id text NOT NULL,
        idempotency_key text
      )`,
      `CREATE INDEX request_log_key ON request_log (api_key_id, id DESC)`,
      `CREATE INDEX request_log_at ON request_log (at)`,
    ],
  },
  {
    version: 15,
    name: "positions: a mint opens a position owned by the address its proof binds",
    statements: [
      `ALTER TABLE proofs ADD COLUMN owner text`,
      // The circuit's output: the rest of the note as a new leaf ('0' when none).
      `ALTER TABLE proofs ADD COLUMN change_leaf text NOT NULL DEFAULT '0'`,
      `ALTER TABLE mints ADD COLUMN position_id text`,
    ],
  },
  {
    version: 16,
    name: "positions: relayed repayments, withdrawals, closes, liquidations, top-ups and note withdrawals",
    statements: [
      // One row per call the relay sends for a position's signer (or for the keeper, with no account),
      // or for a note's holder (withdraw_note, top_up: a proof instead of a signature). The call data is
      // kept as checked, so that what is sent is exactly what was verified.
      `CREATE TABLE position_actions (
        id text PRIMARY KEY,
        account_id text REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        action text NOT NULL CHECK (action IN ('repay', 'withdraw', 'close', 'liquidate', 'top_up', 'withdraw_note')),
        position_id text,
        signer text,
        signed_nonce text,
        amount text,
        zcash_address text,
        note_commitment text,
        nullifier_hash text,
        calldata text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        tx_hash text,
        raw_tx text,
        nonce integer,
        submitted_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        block_number bigint,
        payout_id text,
        released_zat text,
        note_index text,
        failure_code text,
        failure_reason text,
        settled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // A signature is relayed once; a note is spent once; the keeper liquidates a position once at a time.
      `CREATE UNIQUE INDEX position_actions_signed ON position_actions (lower(signer), signed_nonce)
         WHERE signed_nonce IS NOT NULL AND status <> 'failed'`,
      `CREATE UNIQUE INDEX position_actions_nullifier ON position_actions (nullifier_hash)
         WHERE nullifier_hash IS NOT NULL AND status <> 'failed'`,
      `CREATE UNIQUE INDEX position_actions_liquidation ON position_actions (position_id)
         WHERE action = 'liquidate' AND status IN ('queued', 'submitted')`,
      `CREATE INDEX position_actions_status ON position_actions (status, created_at)`,
      `CREATE INDEX position_actions_account ON position_actions (account_id, environment, created_at)`,
    ],
  },
  {
    version: 17,
    name: "failed payouts are held for their owner and redirected; the keeper redistributes positions under 100%",
    statements: [
      // failRedemption no longer refunds: a payout custody cannot make is failed on-chain and its ZEC
      // held for the owner ("failing" until the attestor's call is mined, then "held"), until the
      // owner redirects it ("redirected": to a new payout, or into a note).
      `ALTER TABLE payouts DROP CONSTRAINT payouts_status_check`,
      `UPDATE payouts SET status = 'failing' WHERE status = 'refunding'`,
      `UPDATE payouts SET status = 'held' WHERE status = 'refunded'`,
      `ALTER TABLE payouts ADD CONSTRAINT payouts_status_check CHECK (status IN
        ('pending', 'sending', 'sent', 'settling', 'completed', 'failing', 'held', 'redirected', 'review'))`,
      `ALTER TABLE position_actions DROP CONSTRAINT position_actions_action_check`,
      `ALTER TABLE position_actions ADD CONSTRAINT position_actions_action_check CHECK (action IN
        ('repay', 'withdraw', 'close', 'liquidate', 'top_up', 'withdraw_note', 'redistribute'))`,
      `CREATE UNIQUE INDEX position_actions_redistribution ON position_actions (position_id)
         WHERE action = 'redistribute' AND status IN ('queued', 'submitted')`,
      // One row per redirect the relay sends with the owner's signature (redirectWithSig on Redemptions).
      `CREATE TABLE payout_redirects (
        id text PRIMARY KEY,
        account_id text REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        payout_id numeric NOT NULL,
        owner text NOT NULL,
        signed_nonce text NOT NULL,
        zcash_address text,
        note_commitment text,
        deadline text NOT NULL,
        calldata text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        tx_hash text,
        raw_tx text,
        nonce integer,
        submitted_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        block_number bigint,
        new_payout_id text,
        note_index text,
        failure_code text,
        failure_reason text,
        settled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // A failed payout is redirected once: one live redirect at a time.
      `CREATE UNIQUE INDEX payout_redirects_live ON payout_redirects (payout_id) WHERE status <> 'failed'`,
      `CREATE INDEX payout_redirects_status ON payout_redirects (status, created_at)`,
    ],
  },
  {
    version: 18,
    name: "a payout redirected from one compliance refused is held for review",
    statements: [
      // Its owner may redirect a refused payout to another address on-chain, bypassing the API: the
      // payouts hold the new payout (subject "payout", its on-chain id) until a screener decides.
      `ALTER TABLE compliance_alerts DROP CONSTRAINT compliance_alerts_subject_type_check`,
      `ALTER TABLE compliance_alerts ADD CONSTRAINT compliance_alerts_subject_type_check CHECK (subject_type IN
        ('mint', 'redemption', 'deposit', 'address', 'payout'))`,
      `ALTER TABLE compliance_holds DROP CONSTRAINT compliance_holds_subject_type_check`,
      `ALTER TABLE compliance_holds ADD CONSTRAINT compliance_holds_subject_type_check CHECK (subject_type IN
        ('mint', 'redemption', 'payout'))`,
      // The redemption request a held payout descends from: its account's agents decide, and its events name it.
      `ALTER TABLE compliance_holds ADD COLUMN redemption_request_id text`,
    ],
  },
  ...ACCOUNT_MIGRATIONS,
  ...WEBHOOK_MIGRATIONS,
  ...COMPLIANCE_MIGRATIONS,
  ...RELAY_MIGRATIONS,
  {
    version: 26,
    name: "a note released or redirected by the relay is named by its leaf-queue sequence",
    statements: [
      // The registry queues such a note's leaf (LeafQueued) and inserts it later in a batch: the
      // events give its place in that queue, not a leaf index, and the column says so.
      `ALTER TABLE position_actions RENAME COLUMN note_index TO note_sequence`,
      `ALTER TABLE payout_redirects RENAME COLUMN note_index TO note_sequence`,
    ],
  },
  {
    version: 27,
    name: "custody's reserves read against the chain, kept as a history",
    statements: [
      `CREATE TABLE reserve_readings (
        id bigserial PRIMARY KEY,
        read_at timestamptz NOT NULL,
        held_zat numeric NOT NULL,
        in_flight_zat numeric NOT NULL,
        zcash_height integer NOT NULL,
        expected_zat numeric NOT NULL,
        deposited_zat numeric NOT NULL,
        paid_out_zat numeric NOT NULL,
        block_number bigint NOT NULL,
        difference_zat numeric NOT NULL,
        tolerance_zat numeric NOT NULL,
        status text NOT NULL CHECK (status IN ('ok', 'shortfall')),
        mints_paused boolean NOT NULL,
        -- The watch stopped mints itself, and so may resume them; a pause of anyone else's it leaves be.
        paused_by_watch boolean NOT NULL
      )`,
    ],
  },
  {
    version: 28,
    name: "a reading is kept even when the guardian's transaction fails, and says so",
    statements: [
      // The reading and its alert are stored before the guardian acts: a pause that fails must not
      // take the alert with it. The error stays here (and in the log), never in the public reading.
      `ALTER TABLE reserve_readings ADD COLUMN pause_failed boolean NOT NULL DEFAULT false`,
      `ALTER TABLE reserve_readings ADD COLUMN pause_error text`,
    ],
  },
  {
    version: 29,
    name: "governance: relayed queue and execute of a proposal",
    statements: [
      // Anyone may queue a succeeded proposal and execute it once the timelock's delay has passed: the relay
      // sends the governor's queue or execute, with the proposal's calls encoded when it was asked.
      `CREATE TABLE governance_proposal_actions (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        proposal_id text NOT NULL,
        action text NOT NULL CHECK (action IN ('queue', 'execute')),
        calldata text NOT NULL,
        eta text,
        status text NOT NULL CHECK (status IN ('queued', 'submitted', 'confirmed', 'failed')),
        tx_hash text,
        raw_tx text,
        nonce integer,
        submitted_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        block_number bigint,
        failure_code text,
        failure_reason text,
        settled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // One queue (or execute) of a proposal in flight at a time: a second could only revert.
      `CREATE UNIQUE INDEX governance_proposal_actions_in_flight ON governance_proposal_actions (proposal_id, action)
         WHERE status IN ('queued', 'submitted')`,
      `CREATE INDEX governance_proposal_actions_status ON governance_proposal_actions (status, created_at)`,
    ],
  },
  {
    version: 30,
    name: "the block a relayed redemption was burned in",
    statements: [
      // What the payout waits for while the redemption is burned: its confirmations are counted from it.
      `ALTER TABLE redemption_requests ADD COLUMN block_number bigint`,
    ],
  },
];
