-- TronGrid's v1 API from the index (src/families/tron/tronGrid/): the orders its pages are read in, by key
-- (keyset paging), newest or oldest first. Indexes only: the rows are 009's, written as before.
--   /v1/accounts/:a/transactions: an account's transactions as owner (only_from) and as receiver (only_to);
--   /v1/accounts/:a/transactions/trc20: its TRC-20 approvals as owner and as spender;
--   /v1/contracts/:c/events: a contract's approvals (its transfers: 009's transfers_contract).
create index if not exists transactions_owner on transactions (owner_address, block_number, transaction_index);
create index if not exists transactions_to on transactions (to_address, block_number, transaction_index)
  where to_address is not null;
create index if not exists approvals_owner on approvals (owner, block_number, log_index);
create index if not exists approvals_spender on approvals (spender, block_number, log_index);
create index if not exists approvals_contract on approvals (contract_address, block_number, log_index);
