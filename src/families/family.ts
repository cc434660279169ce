/**
 * A chain family: what changes between chains whose nodes speak different protocols (docs/architecture.md
 * §10). One plain object, chosen once from CHAIN (families/familyOf.ts) and handed down by the composition
 * root; the shared floors (http, engine, cache, upstream, the indexer loop, watch registration, realtime,
 * db, fleet) import no family, only the interfaces they declare for what a family gives them, which this
 * interface gathers.
 */
import type { AddressCodec } from "../addresses";
import type { Blockchain, ChainInfo } from "../blockchain";
import type { BlockRefs } from "../blockRef";
import type { Sql } from "../db/database";
import type { FinalityTags } from "../engine/chainFollower";
import type { Engine } from "../engine/engineApi";
import type { HeadMethod } from "../engine/headMethods";
import type { MethodTable } from "../engine/methodTable";
import type { IndexFamily } from "../indexer/indexFamily";
import type { Logger } from "../log";
import type { EsploraDeps, EsploraSource } from "../operations/esploraSource";
import type { FamilyOperationDeps, FamilyOperations } from "../operations/familyOperations";
import type { NodePaths } from "../operations/nodePaths";
import type { StreamSpec } from "../operations/operation";
import type { BlockTimes, DayStatsSource } from "../operations/stats";
import type { TransferQueries, TransferShape } from "../operations/transferQueries";
import type { TronGridDeps, TronGridSource } from "../operations/tronGridSource";
import type { SubscriptionKind } from "../realtime/subscriptionKind";
import type { PendingWatch, PendingWatchOptions } from "../realtime/watchFiltersSubscription";
import type { FamilyExamples } from "../schemas";
import type { NodeProtocol } from "../upstream/protocol";
import type { WatchMatcher, WatchMatcherOptions } from "../watch/watchMatcher";

/** A node the service started itself, where no upstream is configured. */
export interface DevNode {
  /** Its JSON-RPC URL. */
  url: string;
  /** How often its head is polled where HEAD_POLL_MS is unset: it makes blocks on demand, so closely. */
  headPollMs: number;
  stop(): Promise<void>;
}

/** What a family's mempool follower is made with (compose/dataPath.ts). */
export interface MempoolDeps {
  engine: Engine;
  /** The index's database (the primary's). */
  sql: Sql;
  /** The service's statement deadline and retries, put on the family's queries. */
  guard<T extends object>(queries: T): T;
  log: Logger;
  /** MEMPOOL_MAX_MB, in bytes: the most its view of the mempool may hold. */
  maxBytes: number;
}

/** A family's mempool follower, and the readers made on it. */
export interface FamilyMempool {
  /**
   * Its Esplora-compatible API's reads: blocks and transactions in Esplora's shapes, addresses from the
   * index, the mempool from the follower (which it holds running while served).
   */
  createEsplora?(deps: EsploraDeps): EsploraSource;
  /** Its pending watch-filter matches, on the follower (held while a pending subscription lives). */
  createPendingWatch?(options: PendingWatchOptions): PendingWatch;
  /** Resolves once the follower has read the node's mempool once (bounded): the start waits for it. */
  ready(): Promise<void>;
  /** Stops the follower; resolves once its last reads have ended. */
  stop(): Promise<void>;
}

export interface ChainFamily {
  /** Its name, in logs and the docs. */
  readonly name: string;
  /**
   * Whether it serves a chain of the `Blockchain` enumeration (CHAIN); `undefined` (no CHAIN): the family
   * that reads its chain from the node.
   */
  serves(chain: Blockchain | undefined): boolean;
  /** How its nodes write block references. */
  readonly blockRefs: BlockRefs;
  /**
   * The chain served, from the node's identity (NodeProtocol.readIdentity: EVM its chain id in 0x hex, the
   * Bitcoin family `<chain>:<genesis hash>`) and the configuration. Throws (a ConfigError) when the identity
   * is not of the chain CHAIN names, saying which identities CHAIN would take: the start stops, and
   * compose/chain.ts adds which upstream served what.
   */
  describe(identity: string, overrides: { blockchain?: Blockchain; confirmations?: number }): ChainInfo;
  /**
   * Starts its dev node (state kept under `dataDir`), for a service with no UPSTREAM_URLS; `chain`: CHAIN,
   * where the family's nodes serve several coins (the Bitcoin family: a regtest litecoind for LTC).
   */
  startDevNode(options: { dataDir: string; log: Logger; chain?: Blockchain }): Promise<DevNode>;
  /** What the API docs' examples name: an account, a token and a transaction its dev node has. */
  readonly examples?: FamilyExamples;
  // The node protocol, and what the chain follower and the engine take of it (upstream, engine)
  /** How the service speaks to its nodes: their identity, headers, errors, pub/sub (upstream/protocol.ts). */
  readonly node: NodeProtocol;
  /** The tags its nodes name their final and safe blocks by; undefined: finality is counted in blocks. */
  readonly finalityTags?: FinalityTags;
  /** Its methods whose answer is the head (its number, its hash), answered from the followed head. */
  readonly headMethods?: readonly HeadMethod[];
  // Method rows, operations, streams (engine, operations, http)
  /** Its node methods' cache policies, and its methods that need more than one call, for the engine. */
  readonly methods: MethodTable;
  /** Its operations: its node methods (from its method rows) and its own data operations; none unsaid. */
  operations?(deps: FamilyOperationDeps): FamilyOperations;
  /** Its bulk streams of node operations over ranges of blocks (http/stream.ts); none unsaid. */
  readonly streams?: readonly StreamSpec[];
  /**
   * Its nodes' own API served at their own paths, beside JSON-RPC (java-tron's `/wallet/...`: so its clients
   * take the service's URL as the node's), answered through the engine (http/nodePaths.ts); none unsaid.
   */
  nodePaths?(deps: { engine: Engine }): NodePaths;
  // The index (indexer, db, the data operations, watch filters). A family without one (a new family's first
  // step, as the Bitcoin family's was) gets no indexer, no data operations and no watch filters: compose/
  // builds them only with it, and the instance refuses them naming its chain (compose/unserved.ts).
  /** How its blocks are read, decoded and written into the index, and its tables (sql/<migrations>/). */
  readonly index?: IndexFamily;
  /** The transfers operation's reads of its index (shared by every instance reading it, a replica's too). */
  createTransferQueries?(sql: Sql): TransferQueries;
  /** What its transfer rows are (the types its index holds, their shape); unsaid: the EVM's. */
  readonly transferShape?: TransferShape;
  /**
   * TronGrid's v1 API's reads (http/tronGrid/: served under /v1/ only where given), from its index and its
   * node; with `index` only.
   */
  createTronGrid?(deps: TronGridDeps): TronGridSource;
  /** Its daily figures (their shape, their read of its index); with `index` only. */
  readonly dayStats?: DayStatsSource;
  /** How its block times run, for the answers by time; unsaid: monotonic. */
  readonly blockTimes?: BlockTimes;
  // Addresses, watch filters, subscriptions (every floor, watch, realtime)
  /** Which texts are its addresses, their canonical form, and how the index keeps them. */
  readonly addresses: AddressCodec;
  /**
   * The codec of the chain served, where its family's chains write addresses differently (the Bitcoin
   * family: each network's version bytes and bech32 prefix, from ChainInfo.network); unsaid: `addresses`.
   * The composition root reads it once the node is identified (compose/chain.ts `chainAddresses`).
   */
  addressesFor?(chain: ChainInfo): AddressCodec;
  /** Its watch filters' results of a processed block, from its index and its node (with `index` only). */
  createWatchMatcher?(options: WatchMatcherOptions): WatchMatcher;
  /**
   * Its follower of the nodes' mempool, one per instance (with `index`; the composition root makes it and
   * stops it at shutdown), and what reads the mempool through it, so that what it reads is read once: its
   * Esplora-compatible API (http/esplora/: served under /esplora/ only where given) and its matching of the
   * mempool with the watch filters for the `watch_filters` subscription's `"pending": true`
   * (realtime/watchFiltersSubscription.ts; none: `pending` is refused naming the chain).
   */
  followMempool?(deps: MempoolDeps): FamilyMempool;
  /** Its kinds of subscription, beside the hub's own (newHeads, watch_filters): realtime/subscriptions.ts. */
  readonly subscriptions?: readonly SubscriptionKind[];
  // What the API docs and the refusals say of it (http/docs.ts, compose/unserved.ts)
  /** What an instance of it serves, one sentence, for the API docs (unsaid: a generic one). */
  readonly summary?: string;
  /**
   * The prefixes its method and REST route names carry (EVM: `eth_`, ...): an instance of another family
   * refuses such a name naming its chain, not as a method it never heard of. None where names are bare.
   */
  readonly namespaces?: readonly string[];
  /**
   * Why its nodes refuse a method another family has (java-tron: `eth_sendRawTransaction`, traces), for the
   * refusal naming the chain; undefined: the plain "another family's method".
   */
  refuses?(method: string): string | undefined;
  /**
   * Why its nodes have nothing for a subscription kind another family serves (java-tron: no pending
   * transactions), for eth_subscribe's refusal naming the chain; undefined: the plain unknown kind.
   */
  refusesSubscription?(kind: string): string | undefined;
}
