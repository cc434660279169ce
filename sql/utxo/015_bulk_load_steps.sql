-- The end of a bulk load in steps (src/families/utxo/bulkLoad.ts `finish`): the address totals, the
-- scripthashes, the days' figures and each read-side index are made each in a transaction of its own, several
-- at once on connections of their own, and each names itself here in that transaction; the indexes' primary
-- keys and the end of `bulk_load` come last, in one transaction. An end that a crash or a stop cut short makes
-- only the steps not named: none is made twice (the totals would be added twice), none is left out.
alter table bulk_load add column if not exists finished text[] not null default '{}';
