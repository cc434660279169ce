-- The TRON family's index (the design's §14 "Index and data operations"; /work/tron-schema.md describes it for
-- the readers): blocks, their transactions, the transfers and approvals decoded from them, per-address rows,
-- each UTC day's figures, token metadata and the indexer's progress. Written by
-- src/families/tron/indexWriter.ts (the one writer); read by the family's transfers, daily figures, watch
-- filters and TronGrid v1 API.
--
-- Forms: addresses are bytea of 21 bytes, 0x41 then the 20-byte account (addresses.ts `toBytes`/`fromBytes`
-- give base58 `T...` back exactly); hashes and transaction ids 32 bytes (`encode(x, 'hex')` is the node's
-- text: no 0x); amounts numeric(78) in sun or token units, never floats; TRC-10 asset ids text as the node
-- names them (decimal digits). Block times are kept exactly in ms (`timestamp_ms`); `timestamp` is their
-- seconds (floored), the unit of every answer and of the shared reads (db/blockQueries.ts).
--
-- Reorgs: every row of a block goes when the block does: the rewind deletes the rows of the blocks from the
-- fork up, table by table, in one transaction (each table has block_number first in a key or index; no
-- foreign keys, whose per-row checks would slow the writes), and the days those blocks fell in get their
-- figures again from what remains.

create table if not exists blocks (
  number bigint primary key,
  hash bytea not null unique,
  parent_hash bytea not null,
  -- Seconds (timestamp_ms / 1000, floored), and the block's own ms.
  timestamp bigint not null,
  timestamp_ms bigint not null,
  -- The UTC date of timestamp_ms: the daily figures group by it.
  day date not null,
  -- The producing super representative (witness_address).
  witness bytea not null,
  transaction_count integer not null,
  -- Its rows in transfers, and of them: trx rows and erc20transfer rows of successful transactions.
  transfer_count integer not null,
  trx_transfer_count integer not null,
  trc20_transfer_count integer not null,
  -- TRX moved by its successful transactions' trx rows (top-level and internal), in sun.
  trx_moved numeric(78) not null,
  -- Sum of its transaction infos' `fee` (TRX burned: energy, bandwidth and the other fees), and of their
  -- receipts' energy_fee and net_fee parts, in sun.
  total_fees numeric(78) not null,
  energy_fee numeric(78) not null,
  net_fee numeric(78) not null,
  -- Sum of receipts' energy_usage_total (all energy the calls consumed, however paid) and net_usage
  -- (bandwidth points from stake or the free allowance; bandwidth paid by burning TRX is in net_fee).
  energy_used numeric(78) not null,
  bandwidth_used numeric(78) not null
);
create index if not exists blocks_timestamp on blocks (timestamp, number);
create index if not exists blocks_day on blocks (day, number);

-- One row per transaction, in block order. contract_type: the contract's type as the node names it
-- (TransferContract, TriggerSmartContract, ...); owner the contract's owner_address; to_address its
-- to_address / contract_address / receiver where it names one (null else); contract_ret the node's
-- `ret[0].contractRet` (SUCCESS, REVERT, OUT_OF_ENERGY, ...; null where the node writes none); the usage
-- columns are its info's receipt's (0 where absent); created the contract a creation made (info's
-- contract_address of a CreateSmartContract).
create table if not exists transactions (
  block_number bigint not null,
  transaction_index integer not null,
  hash bytea not null,
  contract_type text not null,
  owner_address bytea,
  to_address bytea,
  contract_ret text,
  fee numeric(78) not null,
  energy_used bigint not null,
  energy_fee numeric(78) not null,
  net_usage bigint not null,
  net_fee numeric(78) not null,
  created bytea,
  primary key (block_number, transaction_index)
);
create index if not exists transactions_hash on transactions (hash);

-- transfer_type: 0 trx (TRX in sun: TransferContract, a TriggerSmartContract's call_value, internal
-- transfers), 1 erc20transfer (a TRC-20 Transfer log, 3 topics), 2 erc721transfer (a TRC-721 Transfer log,
-- 4 topics: value is the token id), 3 trc10 (TransferAssetContract: asset_id set, value in the asset's units).
-- log_index orders a transaction's rows: -1 its top-level transfer (TransferContract, TransferAssetContract,
-- call_value), then its logs' block-wide positions (0, 1, ... over the block's transaction infos in order, as
-- java-tron's JSON-RPC numbers logIndex), then its internal transfers at 1000000000 + their position among the
-- transaction's internal transfer rows.
-- A failed transaction (contract_ret not SUCCESS) has its top-level row with transaction_error true (it moved
-- nothing: its value is what it asked to move), no log rows (the node keeps none) and no internal rows.
-- contract_address: the TRC-20/721 contract (null for trx and trc10); fee: the transaction's info `fee` in sun.
create table if not exists transfers (
  block_number bigint not null,
  transaction_index integer not null,
  log_index integer not null,
  transaction_hash bytea not null,
  transfer_type smallint not null,
  contract_address bytea,
  asset_id text,
  from_address bytea not null,
  to_address bytea,
  value numeric(78) not null,
  fee numeric(78) not null,
  transaction_error boolean not null,
  primary key (block_number, transaction_index, log_index)
);
create index if not exists transfers_contract
  on transfers (contract_address, block_number, transaction_index, log_index) where contract_address is not null;
create index if not exists transfers_type on transfers (transfer_type, block_number, transaction_index, log_index);
create index if not exists transfers_hash on transfers (transaction_hash);

-- One row per address a transfer touches (side: 1 sends, 2 receives, 3 both), with what the address queries
-- filter on, so a page deep in an address's history is read from this index alone.
create table if not exists transfer_addresses (
  address bytea not null,
  block_number bigint not null,
  transaction_index integer not null,
  log_index integer not null,
  side smallint not null,
  transfer_type smallint not null,
  contract_address bytea,
  primary key (address, block_number, transaction_index, log_index)
);
create index if not exists transfer_addresses_block on transfer_addresses (block_number);

-- TRC-20 Approval logs (3 topics, 32 bytes of data) of successful transactions, for the watch filters.
create table if not exists approvals (
  block_number bigint not null,
  transaction_index integer not null,
  log_index integer not null,
  transaction_hash bytea not null,
  contract_address bytea not null,
  owner bytea not null,
  spender bytea not null,
  value numeric(78) not null,
  fee numeric(78) not null,
  transaction_error boolean not null,
  primary key (block_number, log_index)
);

-- Every address that sent or received a transaction or a transfer in a block: the days' active addresses.
create table if not exists block_addresses (
  block_number bigint not null,
  address bytea not null,
  primary key (block_number, address)
);

-- Each UTC day's figures, kept as blocks are written and rewound: the sums of the blocks columns of the same
-- names over the day's blocks, and its active addresses (the count of its day_addresses rows).
create table if not exists daily_stats (
  day date primary key,
  from_block bigint not null,
  to_block bigint not null,
  block_count integer not null,
  transaction_count bigint not null,
  transfer_count bigint not null,
  trx_transfer_count bigint not null,
  trc20_transfer_count bigint not null,
  active_addresses bigint not null,
  trx_moved numeric(78) not null,
  total_fees numeric(78) not null,
  energy_fee numeric(78) not null,
  net_fee numeric(78) not null,
  energy_used numeric(78) not null,
  bandwidth_used numeric(78) not null
);
-- An address counts as active on a day while any of that day's blocks touches it (blocks: how many).
create table if not exists day_addresses (
  day date not null,
  address bytea not null,
  blocks integer not null,
  primary key (day, address)
);

-- TRC-20/721 name, symbol and decimals read from the contract by triggerconstantcontract (null for what is
-- not a token). Facts about contracts, kept through reorgs.
create table if not exists token_metadata (
  address bytea primary key,
  is_token boolean not null,
  name text,
  symbol text,
  decimals integer,
  updated_at timestamptz not null default now()
);

-- TRC-10 assets as getassetissuebyid names them (id the decimal text; abbr the ticker; precision the
-- decimals, 0 where the node writes none; owner the issuer). Kept through reorgs.
create table if not exists trc10_assets (
  id text primary key,
  name text,
  abbr text,
  precision integer not null,
  owner_address bytea,
  updated_at timestamptz not null default now()
);

-- The indexer's progress: the last block written, in the same transaction as that block.
create table if not exists indexer_state (
  id integer primary key default 1 check (id = 1),
  first_block bigint not null,
  last_block bigint not null,
  updated_at timestamptz not null default now()
);
