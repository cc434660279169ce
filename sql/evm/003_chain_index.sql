-- The chain index: blocks, the transfers and approvals decoded from them, and the indexer's progress.
-- 20- and 32-byte values are bytea, amounts numeric(78) (every uint256 fits), never floats. Every table
-- derived from a block cascades from it, so undoing a reorganized block is one delete.

create table if not exists blocks (
  number bigint primary key,
  hash bytea not null,
  parent_hash bytea not null,
  timestamp bigint not null,
  -- The block's UTC date, which the daily figures group by.
  day date not null,
  miner bytea not null,
  gas_used bigint not null,
  gas_limit bigint not null,
  base_fee_per_gas numeric(78),
  transaction_count integer not null,
  transfer_count integer not null,
  uncle_count integer not null,
  -- Sum of every transaction's fee, and of the base fee burnt, in wei.
  total_fees numeric(78) not null,
  burnt_fees numeric(78) not null,
  -- Sum of the transactions' effective gas prices (the day's average gas price is this over the count).
  gas_price_sum numeric(78) not null
);
create unique index if not exists blocks_hash on blocks (hash);
create index if not exists blocks_timestamp on blocks (timestamp, number);
create index if not exists blocks_day on blocks (day, number);

-- transfer_type: 0 trx (native), 1 erc20transfer, 2 erc721transfer.
-- log_index -1 is a transaction's native transfer: it sorts before the transaction's logs.
create table if not exists transfers (
  block_number bigint not null references blocks (number) on delete cascade,
  transaction_index integer not null,
  log_index integer not null,
  transaction_hash bytea not null,
  transfer_type smallint not null,
  contract_address bytea,
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

-- One row per address a transfer touches (side: 1 sends, 2 receives, 3 both), with what the address
-- queries filter on, so a page deep in an address's history is read from this index alone.
create table if not exists transfer_addresses (
  address bytea not null,
  block_number bigint not null references blocks (number) on delete cascade,
  transaction_index integer not null,
  log_index integer not null,
  side smallint not null,
  transfer_type smallint not null,
  contract_address bytea,
  primary key (address, block_number, transaction_index, log_index)
);
create index if not exists transfer_addresses_block on transfer_addresses (block_number);

-- ERC-20 Approval logs, for the watch filters.
create table if not exists approvals (
  block_number bigint not null references blocks (number) on delete cascade,
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
  block_number bigint not null references blocks (number) on delete cascade,
  address bytea not null,
  primary key (block_number, address)
);

-- The figures of each UTC day, kept up to date as blocks are written and undone: the sums add up, and an
-- address counts as active on a day while any of that day's blocks touches it (day_addresses.blocks).
create table if not exists daily_stats (
  day date primary key,
  from_block bigint not null,
  to_block bigint not null,
  block_count integer not null,
  transaction_count bigint not null,
  transfer_count bigint not null,
  active_addresses bigint not null,
  total_gas_used numeric(78) not null,
  gas_price_sum numeric(78) not null,
  total_fees numeric(78) not null,
  burnt_fees numeric(78) not null
);
create table if not exists day_addresses (
  day date not null,
  address bytea not null,
  blocks integer not null,
  primary key (day, address)
);

-- Token name, symbol and decimals, read from the contract (null for what is not a token).
create table if not exists token_metadata (
  address bytea primary key,
  is_token boolean not null,
  name text,
  symbol text,
  decimals integer,
  updated_at timestamptz not null default now()
);

-- The indexer's progress: the last block written, in the same transaction as that block.
create table if not exists indexer_state (
  id integer primary key default 1 check (id = 1),
  first_block bigint not null,
  last_block bigint not null,
  updated_at timestamptz not null default now()
);
