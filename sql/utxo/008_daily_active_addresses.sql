-- Each day's active addresses kept in its daily_stats row as blocks are written and rewound, as the EVM
-- family keeps them (src/families/utxo/indexWriter.ts): a (day, address) pair the writer inserts adds one
-- to its day, a rewind counts its days' pairs again. A read of a day's figures then counts nothing; before
-- this file it counted the day's day_addresses rows, up to a million on a busy day.
alter table daily_stats add column if not exists active_addresses bigint not null default 0;
update daily_stats d set active_addresses = (select count(*) from day_addresses a where a.day = d.day);
alter table daily_stats alter column active_addresses drop default;
