-- The Bitcoin family's index (the design's §12 "Index"; docs/interface.md §16): blocks, transactions, every
-- output with what spends it, per-address rows for the read side, and each day's figures. Written by
-- src/families/utxo/indexWriter.ts (the one writer), read by the family's transfers, daily figures, watch
-- filters and Esplora API: this file is the contract they code against.
--
-- Forms: amounts are satoshis as integers (never floats; sums numeric); hashes and txids are bytea of the
-- bytes as the node writes them in hex (`encode(txid, 'hex')` gives the node's text back: no 0x, no
-- reversal); addresses are the text the node writes (the family codec's canonical form: base58 as is,
-- bech32 lower-case); an output that pays no single address (OP_RETURN, bare multisig, P2PK where the node
-- names no address, MWEB's) has address null.
--
-- Reorgs: every row of a block goes when the block does (the rewind deletes the rows of the blocks from
-- the fork up, table by table, in one transaction: every table has the block's number first in an index,
-- and no foreign key, whose per-row check would cost the writes a third); outputs the removed blocks spent
-- are unspent again (the rewind clears their spent_* columns); the days those blocks fell in get their
-- figures again from what remains.
-- INDEX_FROM_BLOCK > 0: outputs older than the index's first block are not rows; the inputs spending them
-- still count (their address and value are read from the node when the spending block is written).

-- Columns named as the shared reads of db/blockQueries.ts read them (number, hash, timestamp, day):
-- `timestamp` is the running maximum of the header times from block 0 up to the block, so answers by time
-- never go back in time on chains whose block times are not monotonic; `header_time` is the block's own,
-- `median_time` its median time past; `day` is the UTC date of `timestamp`. The sums are the block's
-- shares of its day's figures (daily_stats below), so a day's figures can be made again from its blocks.
create table if not exists blocks (
  number bigint primary key,
  hash bytea not null unique,
  parent_hash bytea not null,
  timestamp bigint not null,
  header_time bigint not null,
  median_time bigint not null,
  day date not null,
  size integer not null,
  weight integer not null,
  -- Every transaction, the coinbase included.
  transaction_count integer not null,
  -- Its paying outputs (transfer rows), and all its outputs.
  transfer_count integer not null,
  output_count integer not null,
  -- The outputs of its transactions other than the coinbase (getblockstats' total_out).
  total_output numeric(30) not null,
  -- Inputs minus outputs of its transactions other than the coinbase (getblockstats' totalfee).
  total_fees numeric(30) not null,
  -- What its coinbase pays: subsidy and the fees claimed.
  miners_reward numeric(30) not null,
  -- The vsize of its transactions other than the coinbase (the day's average fee rate divides by it).
  total_vsize bigint not null
);
create index if not exists blocks_timestamp on blocks (timestamp, number);
create index if not exists blocks_day on blocks (day, number);

-- One row per transaction. A txid is not unique on every chain (BIP 30: Bitcoin's blocks 91,842 and
-- 91,880 repeat two earlier coinbases), so the key is the block and the position.
create table if not exists transactions (
  block_number bigint not null,
  -- Its position in its block (0: the coinbase).
  position integer not null,
  txid bytea not null,
  -- Inputs minus outputs, from the index (0 for a coinbase): never the node's `fee`.
  fee bigint not null,
  size integer not null,
  vsize integer not null,
  weight integer not null,
  coinbase boolean not null,
  input_count integer not null,
  output_count integer not null,
  -- Its distinct input addresses, in input order ('{}' for a coinbase, and where no input pays an address):
  -- a transfer row's `fromAddresses`, and `from` its first element ("coinbase" for a coinbase).
  from_addresses text[] not null,
  primary key (block_number, position)
);
create index if not exists transactions_txid on transactions (txid);

-- Every output, with its spender once spent. `pays` marks a transfer row: the output pays an address that
-- is not among its transaction's input addresses (change back to a sender does not pay; a coinbase's
-- outputs with an address do). BIP 30's repeated coinbase outputs keep the first row.
create table if not exists outputs (
  txid bytea not null,
  vout integer not null,
  block_number bigint not null,
  -- Its transaction's position in the block.
  position integer not null,
  address text,
  script bytea not null,
  value bigint not null,
  pays boolean not null,
  -- The input spending it (its transaction, the input's index, the block): null while unspent.
  spent_txid bytea,
  spent_vin integer,
  spent_block bigint,
  primary key (txid, vout)
);
-- A transaction's outputs in order (the transfers of an address join its address_transactions rows here).
create index if not exists outputs_block on outputs (block_number, position, vout);
-- An address's unspent outputs (its balance, Esplora's utxo), in chain order.
create index if not exists outputs_unspent on outputs (address, block_number, position, vout)
  where spent_txid is null and address is not null;
-- What a rewind unspends.
create index if not exists outputs_spent_block on outputs (spent_block) where spent_block is not null;

-- One row per (address, transaction) whose outputs pay the address or whose inputs spend from it: an
-- address's history, page by page, and what each transaction did to it (the watch filters' net rule:
-- received - sent). `outputs`/`inputs`: how many of the transaction's outputs pay it and inputs spend from
-- it (Esplora's funded and spent counts). An address's transfer rows are read from here: with no input of
-- the address (inputs = 0), the transaction's outputs to it pay it; with one, every paying output of the
-- transaction is a row of its sending side.
create table if not exists address_transactions (
  address text not null,
  block_number bigint not null,
  position integer not null,
  txid bytea not null,
  received bigint not null,
  sent bigint not null,
  outputs integer not null,
  inputs integer not null,
  primary key (address, block_number, position) include (inputs)
);
-- An address's sending side alone (transfers with direction `from`).
create index if not exists address_transactions_sending on address_transactions (address, block_number, position)
  where inputs > 0;
create index if not exists address_transactions_block on address_transactions (block_number);

-- The scripthash (Electrum's and Esplora's key of a script: SHA-256 of the output script, stored in hash
-- order, so Esplora's hex is these bytes reversed) of every script an indexed output with an address
-- had, and that address. Facts about scripts, not about the chain: kept through reorgs.
create table if not exists address_scripts (
  script_hash bytea primary key,
  address text not null
);

-- Each UTC day's figures (docs/interface.md §16), kept as blocks are written and rewound: the sums of the
-- `blocks` columns of the same names over the blocks whose `day` it is, and its active addresses (the count
-- of its day_addresses pairs, counted as the writer inserts them and again by a rewind: a day's figures are
-- one row's read). The day's average fee rate is total_fees / total_vsize, floored (0 when total_vsize is 0).
create table if not exists daily_stats (
  day date primary key,
  from_block bigint not null,
  to_block bigint not null,
  block_count integer not null,
  transaction_count bigint not null,
  transfer_count bigint not null,
  total_output numeric(30) not null,
  total_fees numeric(30) not null,
  miners_reward numeric(30) not null,
  total_vsize numeric(30) not null,
  active_addresses bigint not null
);
-- The day's active addresses: every address an output of the day's blocks pays or an input spends from.
create table if not exists day_addresses (
  day date not null,
  address text not null,
  primary key (day, address)
);

create table if not exists indexer_state (
  id integer primary key default 1 check (id = 1),
  first_block bigint not null,
  last_block bigint not null,
  updated_at timestamptz not null default now()
);
