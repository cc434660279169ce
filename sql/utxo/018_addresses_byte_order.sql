-- The Bitcoin family's address columns compare as bytes (collation "C"). Addresses are ASCII (base58, bech32
-- lower-case), for which a database's usual collations (en_US.UTF-8, C.UTF-8) order as bytes do, so no
-- answer or page changes; but PostgreSQL compares such text through the C library's collation, and sorts
-- it without its abbreviated keys, where "C" is a byte comparison. The indexes by address are built and
-- kept up that much cheaper: an index of the bench's 1.1 million outputs by address in 0.94 s against 1.55
-- (README "Bench", utxoindex), the bulk load's end builds three of them, and every group the writers add
-- descends them. The tables are not rewritten (the type is the same); the indexes on these columns are
-- built again (those a bulk load under way dropped are built at its end, as their definitions say, on the
-- columns as they are then).
alter table outputs alter column address type text collate "C";
alter table address_transactions alter column address type text collate "C";
alter table address_totals alter column address type text collate "C";
alter table address_scripts alter column address type text collate "C";
alter table day_addresses alter column address type text collate "C";
