-- Webhooks (docs/interface.md §18): watch-filter results pushed to the caller's endpoint. An endpoint
-- belongs to the SHA-256 of the API key that made it (empty in open mode), as watch filters do.
create table if not exists webhook_endpoints (
  endpoint_id uuid primary key default gen_random_uuid(),
  key_hash bytea not null,
  url text not null,
  description text not null default '',
  -- The results it takes: check's (v1) or check_v2's (v2); mempool results too (the Bitcoin family).
  version text not null default 'v1' check (version in ('v1', 'v2')),
  pending boolean not null default false,
  -- The signing secret, sealed (AES-256-GCM under WEBHOOK_SECRETS_KEY: webhooks/secrets.ts), never as shown.
  secret bytea not null,
  -- The secret before a rotation, signing beside the new one until previous_until.
  previous_secret bytea,
  previous_until timestamptz,
  created_at timestamptz not null default now(),
  -- Sending: the next delivery is not tried before next_at; a sender holds the endpoint until lease_until
  -- (one delivery in flight per endpoint, whatever the worker or instance).
  next_at timestamptz not null default now(),
  lease_until timestamptz,
  lease_owner text,
  -- Set when its oldest undelivered delivery has failed for a day; cleared by a success.
  failing_since timestamptz,
  -- The first failure of the delivery at the head of its queue (null while none fails).
  failing_from timestamptz
);
create index if not exists webhook_endpoints_key on webhook_endpoints (key_hash, created_at, endpoint_id);

-- The outbox: one row per delivery, in the order made (seq). Written in the transaction that moves
-- webhook_progress, so a block's deliveries exist exactly when the block is recorded as made.
create table if not exists webhook_deliveries (
  seq bigint generated always as identity primary key,
  -- What the receiver sees as webhook-id: the same on every attempt.
  delivery_id text not null unique,
  endpoint_id uuid not null references webhook_endpoints (endpoint_id) on delete cascade,
  -- block, removed, pending, test.
  kind text not null,
  block_number bigint,
  block_hash bytea,
  -- The JSON body as sent, signed at each attempt.
  body text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'dropped')),
  attempts integer not null default 0,
  last_status integer,
  last_error text,
  last_at timestamptz,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
-- A sender takes an endpoint's oldest pending delivery; the backlog bound counts them.
create index if not exists webhook_deliveries_queue on webhook_deliveries (endpoint_id, seq) where state = 'pending';
create index if not exists webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, seq desc);
create index if not exists webhook_deliveries_block on webhook_deliveries (block_number) where kind = 'block';
-- Delivered and dropped deliveries are kept a week (the deliveries list, redelivery), then swept by age.
create index if not exists webhook_deliveries_finished on webhook_deliveries (created_at) where state <> 'pending';

-- How far deliveries are made: the last block whose results went into the outbox, and the recent blocks
-- made with their hashes, so a reorg that drops any of them is seen and their results sent as removed.
create table if not exists webhook_progress (
  only_row boolean primary key default true check (only_row),
  last_block bigint not null
);
create table if not exists webhook_blocks (
  block_number bigint primary key,
  block_hash bytea not null
);
