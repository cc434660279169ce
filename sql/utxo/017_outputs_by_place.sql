-- Outputs are keyed by their place in the chain (block, transaction's position, vout), no longer by (txid,
-- vout): an outpoint is found through its transaction (`transactions_txid`, one entry a transaction, where the
-- old key had one an output), then the output at its place. The key of every new output then lands at the
-- end of the index (blocks are written in order) instead of at a random page of an index as large as the
-- table's outputs: a bulk load wrote its outputs at 8.7 µs a row with the old key kept up, most of it that
-- index (README "Bench", utxoindex), and a mainnet's billions of outputs carry one index fewer. The index by
-- place (`outputs_block`) becomes the key. BIP 30's repeated coinbase outputs, which the old key turned
-- away, are left out by the writers (src/families/utxo/indexTables.ts `repeatedOutputs`).
alter table outputs drop constraint if exists outputs_pkey;
drop index if exists outputs_block;
alter table outputs add constraint outputs_pkey primary key (block_number, position, vout);

-- A bulk load under way (013) that dropped the index by txid, which every outpoint's lookup now reads: made
-- now, and neither index is left among those its end builds.
create index if not exists transactions_txid on transactions (txid);
update bulk_load set
  index_definitions = array_remove(index_definitions, index_definitions[array_position(index_names, 'transactions_txid')]),
  index_names = array_remove(index_names, 'transactions_txid')
where 'transactions_txid' = any(index_names);
update bulk_load set
  index_definitions = array_remove(index_definitions, index_definitions[array_position(index_names, 'outputs_block')]),
  index_names = array_remove(index_names, 'outputs_block')
where 'outputs_block' = any(index_names);
