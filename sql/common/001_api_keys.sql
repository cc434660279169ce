-- API keys accepted besides those of API_KEYS. Only the SHA-256 of a key is stored.
create table if not exists api_keys (
  key_hash bytea primary key check (octet_length(key_hash) = 32),
  label text not null default '',
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
