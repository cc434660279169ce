-- A key's own rate limit; null: the default of RATE_LIMIT.
alter table api_keys add column if not exists rate_per_second double precision check (rate_per_second > 0);
alter table api_keys add column if not exists burst integer check (burst > 0);
