-- The tables that grow with the chain (transfers, transfer_addresses, approvals, block_addresses) are
-- partitioned by block range: a partition is a fixed number of blocks (index_partitioning.blocks, set once,
-- from INDEX_PARTITION_BLOCKS when this runs), and the indexer makes each one before the blocks it holds
-- (ensure_index_partitions). Queries are unchanged: each partition has the same primary key and indexes, and
-- an address page is an ordered scan of the partitions' primary keys, read from the index alone. A reorg
-- still deletes from `blocks`, which cascades into every partition.

create table if not exists index_partitioning (
  only_row boolean primary key default true check (only_row),
  blocks bigint not null check (blocks > 0)
);
insert into index_partitioning (blocks)
  values (coalesce(nullif(current_setting('gateway.index_partition_blocks', true), '')::bigint, 100000))
  on conflict do nothing;

-- Makes the partitions of every grown table that cover blocks lo to hi (those missing); returns how many.
create or replace function ensure_index_partitions(lo bigint, hi bigint) returns integer
language plpgsql as $$
declare
  width bigint := (select blocks from index_partitioning);
  part bigint;
  grown text;
  made integer := 0;
begin
  for part in (greatest(lo, 0) / width) .. (greatest(hi, 0) / width) loop
    foreach grown in array array['transfers', 'transfer_addresses', 'approvals', 'block_addresses'] loop
      if to_regclass(format('%I', grown || '_p' || part)) is null then
        execute format('create table %I partition of %I for values from (%s) to (%s)',
          grown || '_p' || part, grown, part * width, (part + 1) * width);
        made := made + 1;
      end if;
    end loop;
  end loop;
  return made;
end $$;

-- The tables as 003 made them, now partitioned; rows already indexed move into their partitions. The old
-- primary keys' indexes are renamed first, so the new ones get the usual names.
alter index transfers_pkey rename to transfers_unpartitioned_pkey;
alter index transfer_addresses_pkey rename to transfer_addresses_unpartitioned_pkey;
alter index approvals_pkey rename to approvals_unpartitioned_pkey;
alter index block_addresses_pkey rename to block_addresses_unpartitioned_pkey;
alter table transfers rename to transfers_unpartitioned;
alter table transfer_addresses rename to transfer_addresses_unpartitioned;
alter table approvals rename to approvals_unpartitioned;
alter table block_addresses rename to block_addresses_unpartitioned;

-- Each the table it replaces, column for column, with its keys and indexes (made on every partition), and
-- its cascade from blocks.
create table transfers (like transfers_unpartitioned including all) partition by range (block_number);
create table transfer_addresses (like transfer_addresses_unpartitioned including all)
  partition by range (block_number);
create table approvals (like approvals_unpartitioned including all) partition by range (block_number);
create table block_addresses (like block_addresses_unpartitioned including all) partition by range (block_number);
alter table transfers add foreign key (block_number) references blocks (number) on delete cascade;
alter table transfer_addresses add foreign key (block_number) references blocks (number) on delete cascade;
alter table approvals add foreign key (block_number) references blocks (number) on delete cascade;
alter table block_addresses add foreign key (block_number) references blocks (number) on delete cascade;

select ensure_index_partitions(
  coalesce((select min(number) from blocks), 0),
  coalesce((select max(number) from blocks), 0)
);

insert into transfers select * from transfers_unpartitioned;
insert into transfer_addresses select * from transfer_addresses_unpartitioned;
insert into approvals select * from approvals_unpartitioned;
insert into block_addresses select * from block_addresses_unpartitioned;

drop table transfers_unpartitioned;
drop table transfer_addresses_unpartitioned;
drop table approvals_unpartitioned;
drop table block_addresses_unpartitioned;
