-- Each address's running totals over its address_transactions rows (sql/utxo/007): Esplora's chain_stats of
-- an address (docs/interface.md §16.7) are one row's read, whatever the length of its history, where a sum
-- over the history per call grew with it (a million transactions: a million rows a request).
--
-- Kept by the index writer (src/families/utxo/indexWriter.ts) in the transaction that writes or removes the
-- rows: a group's rows are added, a rewind's removed rows subtracted, and an address left without rows loses
-- its row, so the table always equals `select address, sum(outputs), sum(received), sum(inputs), sum(sent),
-- count(*) from address_transactions group by address`. Sums of satoshis are numeric: what an address ever
-- received may pass a bigint (DOGE's supply alone is above 2^63 satoshis).
create table if not exists address_totals (
  address text primary key,
  -- How many outputs paid it, and their value (Esplora's funded_txo_count, funded_txo_sum).
  funded_count bigint not null,
  funded_sum numeric(30) not null,
  -- How many inputs spent from it, and their value (spent_txo_count, spent_txo_sum).
  spent_count bigint not null,
  spent_sum numeric(30) not null,
  -- Its transactions: its address_transactions rows (tx_count).
  tx_count bigint not null
);

-- An index written before this file gets its totals now. The lock keeps a writer from adding rows between the
-- sums and the commit (an instance of an earlier version must not write the index once this has run: it
-- would not keep the totals).
lock table address_transactions in share mode;
insert into address_totals (address, funded_count, funded_sum, spent_count, spent_sum, tx_count)
  select address, sum(outputs), sum(received), sum(inputs), sum(sent), count(*)
  from address_transactions group by address;
