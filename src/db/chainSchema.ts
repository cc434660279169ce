/**
 * Several chains, one database: each chain's tables live in a schema of their own, named by DB_SCHEMA or
 * chosen here. A schema records the chain it holds (`chain_identity`: chain id and genesis hash), so an
 * instance never reads or writes another chain's index, keys or filters. Without DB_SCHEMA the first chain
 * on a database takes `public` (a database of one chain looks as it always did), and any other chain gets
 * `chain_<id>_<first 8 hex digits of its genesis hash>` (two dev chains with the same id differ by genesis).
 */
import type postgres from "postgres";
import { hashDigits } from "../blockHeader";

/** The connection the schema is chosen on (database.ts's Sql, named here so the two do not import each other). */
type Sql = postgres.Sql<Record<string, never>>;

/** Held while a schema is chosen and claimed, so two instances starting together agree. */
const SCHEMA_LOCK = 0x7363_686d;

export interface ChainIdentity {
  chainId: bigint;
  /** Hex, any case, with or without 0x. */
  genesisHash: string;
}

export class SchemaTakenError extends Error {}

const bytesOf = (hex: string) => Buffer.from(hashDigits(hex), "hex");

/** The schema this chain's tables live in, created and claimed for it when new. */
export async function claimSchema(sql: Sql, chain: ChainIdentity, configured?: string): Promise<string> {
  const genesis = bytesOf(chain.genesisHash);
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${SCHEMA_LOCK})`;
    /** The chain a schema holds: undefined when it holds none yet. */
    const holder = async (schema: string) => {
      const [table] = await tx`select to_regclass(${`${schema}.chain_identity`}) as name`;
      if (!table?.name) return undefined;
      const [row] = await tx`select chain_id, genesis_hash from ${tx(schema)}.chain_identity`;
      return row && { chainId: BigInt(row.chain_id as string), genesis: row.genesis_hash as Buffer };
    };
    const ours = (held: { chainId: bigint; genesis: Buffer } | undefined) =>
      held === undefined || (held.chainId === chain.chainId && held.genesis.equals(genesis));
    let schema = configured;
    if (schema === undefined) {
      schema = ours(await holder("public"))
        ? "public"
        : `chain_${chain.chainId}_${hashDigits(chain.genesisHash).slice(0, 8)}`;
    }
    const held = await holder(schema);
    if (!ours(held)) {
      throw new SchemaTakenError(
        `the database schema ${schema} holds chain ${held!.chainId} (genesis 0x${held!.genesis.toString("hex")}), not chain ${chain.chainId} (genesis ${chain.genesisHash}): set DB_SCHEMA to another schema`,
      );
    }
    if (held !== undefined) return schema;
    // Created only when missing: a role that may use a schema but not create one still starts.
    const [exists] = await tx`select to_regnamespace(${schema}) as oid`;
    if (!exists?.oid) await tx`create schema ${tx(schema)}`;
    await tx`create table if not exists ${tx(schema)}.chain_identity (
      chain_id numeric(78) not null,
      genesis_hash bytea not null,
      only_row boolean primary key default true check (only_row)
    )`;
    await tx`insert into ${tx(schema)}.chain_identity (chain_id, genesis_hash)
      values (${chain.chainId.toString()}, ${genesis}) on conflict do nothing`;
    return schema;
  });
}
