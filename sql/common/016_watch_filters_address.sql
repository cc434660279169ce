-- A block's results for many keys at once (the webhooks' producer: every key with an endpoint, one query,
-- families' watchMatchQueries.ts `matchesOfKeys`) find their filters from the block's addresses: the
-- (key, address) index of 004 would be probed once per key and movement. With the key second, the keys'
-- condition is checked in the index, so the filters of keys not asked for on a busy address cost no
-- heap reads.
create index if not exists watch_filters_address on watch_filters (address, key_hash);
