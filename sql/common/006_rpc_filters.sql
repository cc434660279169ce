-- Filters kept by the service (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter): in the
-- database, so that an id works on every worker and every instance sharing it. A filter belongs to the
-- SHA-256 of the API key that made it (empty in open mode); one key never sees another's.
create table if not exists rpc_filters (
  -- 16 random bytes: the id is 0x and their 32 hex digits.
  filter_id bytea primary key,
  key_hash bytea not null,
  kind text not null check (kind in ('logs', 'blocks', 'pending')),
  -- logs: {address?, topics?, fromBlock?, toBlock?} in the node's form.
  criteria jsonb,
  -- logs and blocks: the last block delivered, and the recent ones delivered as [[number, hash], ...],
  -- lowest first, so that a poll sees a reorg that dropped any of them.
  last_block bigint,
  delivered jsonb not null default '[]',
  -- pending: the last rpc_pending_transactions.seq delivered.
  last_seq bigint,
  -- Moved by every poll that moves the cursor: two polls at once deliver the same changes once.
  revision bigint not null default 0,
  polled_at timestamptz not null default now(),
  created_at timestamptz not null default now()
);
create index if not exists rpc_filters_key on rpc_filters (key_hash);
create index if not exists rpc_filters_polled on rpc_filters (polled_at);

-- Transaction hashes seen entering a node's pool, appended by every instance that knows a pending filter
-- alive; kept as long as a filter's timeout. seq orders them: they are appended under one lock, so a reader
-- never sees a later seq before an earlier one.
create table if not exists rpc_pending_transactions (
  seq bigint generated always as identity primary key,
  hash bytea not null unique,
  seen_at timestamptz not null default now()
);
create index if not exists rpc_pending_transactions_seen on rpc_pending_transactions (seen_at);

-- The logs of recent unfinalized blocks a log filter's poll read: a reorg's removed logs come from here,
-- whichever instance delivered them (a node may forget a block a reorg dropped). Kept until final.
create table if not exists rpc_filter_block_logs (
  block_hash bytea primary key,
  block_number bigint not null,
  -- The block's logs, a JSON array as the node gave them.
  logs text not null
);
create index if not exists rpc_filter_block_logs_number on rpc_filter_block_logs (block_number);
