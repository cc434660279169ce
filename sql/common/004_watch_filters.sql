-- Address watch filters. A filter belongs to the SHA-256 of the API key that added it (empty in open
-- mode), so one key never sees another's. contract_address null means the native coin and every token.
create table if not exists watch_filters (
  filter_id uuid primary key default gen_random_uuid(),
  key_hash bytea not null,
  address bytea not null,
  contract_address bytea,
  with_approval boolean not null,
  created_at timestamptz not null default now()
);
-- Adding the same filter again finds this row; a block's movements find their filters through it too.
create unique index if not exists watch_filters_key_address
  on watch_filters (key_hash, address, coalesce(contract_address, '\x'::bytea), with_approval);
