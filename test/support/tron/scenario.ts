/**
 * The stand-in java-tron's one scenario chain, held in memory, and the types every face of the stand-in
 * (its HTTP API, its JSON-RPC hook in test/support/tron/jsonrpc.ts) reads it through. Blocks and transaction
 * infos are given in java-tron's HTTP form (`visible: false`, `detail` transactions), as
 * test/fixtures/tron/SOURCES.md records them.
 */
import { AbiCoder, keccak256, id as keccakText } from "ethers";
import {
  addressOut,
  bytesToHex,
  hexToBytes,
  type JsonObject,
  keyFromPrivate,
  rawDataJson,
  recoverAddress,
  sha256Bytes,
  sha256Hex,
  signDigest,
  type TronKey,
  txIdOf,
} from "./codec";
import {
  type Bytes,
  type ContractParameter,
  encodeBlockHeaderRaw,
  encodeTransaction,
  type RawTransaction,
} from "./protobuf";

export type TronNetwork = "NILE" | "TRON";

/** Block 0's blockID: its last 4 bytes are the chain id (SOURCES.md says where each was read). */
export const GENESIS_BLOCK_ID: Record<TronNetwork, string> = {
  TRON: "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
  NILE: "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
};
export const CHAIN_ID: Record<TronNetwork, string> = { TRON: "0x2b6653dc", NILE: "0xcd8690dc" };

// ---- java-tron's HTTP forms (visible: false) ----

export interface TronContractJson {
  parameter: { value: JsonObject; type_url: string };
  type: string;
}
export interface TronTransactionJson {
  ret: { contractRet: string }[];
  signature: string[];
  txID: string;
  raw_data: {
    contract: TronContractJson[];
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    fee_limit?: number;
    timestamp?: number;
  };
  raw_data_hex: string;
}
export interface TronBlockHeaderJson {
  raw_data: {
    number: number;
    txTrieRoot: string;
    witness_address: string;
    parentHash: string;
    version: number;
    timestamp: number;
  };
  witness_signature: string;
}
export interface TronBlockJson {
  blockID: string;
  block_header: TronBlockHeaderJson;
  transactions?: TronTransactionJson[];
}
/** A log as java-tron writes it: `address` 20 bytes hex without `41`, topics without `0x`. */
export interface TronLogJson {
  address: string;
  topics: string[];
  data?: string;
}
export interface TronReceiptJson {
  energy_usage?: number;
  energy_fee?: number;
  origin_energy_usage?: number;
  energy_usage_total?: number;
  net_usage?: number;
  net_fee?: number;
  result?: string;
  energy_penalty_total?: number;
}
export interface TronTransactionInfoJson {
  id: string;
  fee?: number;
  blockNumber: number;
  blockTimeStamp: number;
  contractResult: string[];
  contract_address?: string;
  receipt: TronReceiptJson;
  log?: TronLogJson[];
  result?: "FAILED";
  resMessage?: string;
  withdraw_amount?: number;
  unfreeze_amount?: number;
  internal_transactions?: JsonObject[];
}

/** What the JSON-RPC face (and any other reader) gets: the canonical chain in java-tron's HTTP form. */
export interface TronChainView {
  network: TronNetwork;
  /** `0x2b6653dc` or `0xcd8690dc` */
  chainId: string;
  genesisBlockId: string;
  headNumber(): number;
  solidifiedNumber(): number;
  /** Block `n` of the canonical chain with its transactions (`detail`), or undefined. */
  block(n: number): TronBlockJson | undefined;
  blockById(id: string): TronBlockJson | undefined;
  /** The infos of block `n`'s transactions, in block order ([] for an empty block). */
  infos(n: number): TronTransactionInfoJson[] | undefined;
  transaction(txID: string): { tx: TronTransactionJson; blockNumber: number } | undefined;
  info(txID: string): TronTransactionInfoJson | undefined;
  /** A TRC-20 constant call (`balanceOf`, `decimals`, `symbol`, `name`, `totalSupply`) at block `n`. */
  call(contractHex41: string, data: string, atBlock?: number): { ok: boolean; result: string } | undefined;
  /** TRX balance in sun at block `n` (default head), 0n for an unknown account. */
  balance(addressHex41: string, atBlock?: number): bigint;
}

// ---- the scenario's parts ----

const keyOf = (label: string): TronKey =>
  keyFromPrivate(sha256Hex(new TextEncoder().encode(`tron-standin:${label}`)));

/** Deterministic keys: every test knows them (the stand-in is a test part, never a wallet). */
export const SCENARIO_KEYS = {
  alice: keyOf("alice"),
  bob: keyOf("bob"),
  carol: keyOf("carol"),
  issuer: keyOf("issuer"),
  witnesses: [keyOf("witness-0"), keyOf("witness-1"), keyOf("witness-2")],
} as const;

/** The TRC-20 of the scenario: USDT-like, 6 decimals. */
export const TRC20 = {
  address: `41${keccakText("tron-standin:trc20").slice(-40)}`,
  name: "Tether USD",
  symbol: "USDT",
  decimals: 6,
  owner: SCENARIO_KEYS.issuer.hex,
} as const;

/** The TRC-10 asset of the scenario. */
export const TRC10 = {
  id: "1000001",
  name: "StandinToken",
  abbr: "STT",
  precision: 6,
  owner: SCENARIO_KEYS.issuer.hex,
  totalSupply: 100_000_000_000_000n,
} as const;

/** Genesis allocations (sun / token units). */
export const GENESIS_TRX: Record<string, bigint> = {
  [SCENARIO_KEYS.alice.hex]: 5_000_000_000n,
  [SCENARIO_KEYS.bob.hex]: 1_000_000_000n,
  [SCENARIO_KEYS.issuer.hex]: 50_000_000_000n,
};
export const GENESIS_TRC20: Record<string, bigint> = {
  [SCENARIO_KEYS.alice.hex]: 1_000_000_000n, // 1,000 USDT
  [SCENARIO_KEYS.issuer.hex]: 1_000_000_000_000n,
};

export const SELECTORS = {
  balanceOf: "70a08231",
  decimals: "313ce567",
  symbol: "95d89b41",
  name: "06fdde03",
  totalSupply: "18160ddd",
  transfer: "a9059cbb",
} as const;
export const TRANSFER_TOPIC = keccakText("Transfer(address,address,uint256)").slice(2);

/** Fees and resource figures the scenario charges (constants; java-tron's come from chain parameters). */
const BLOCK_INTERVAL_MS = 3_000;
const CREATE_ACCOUNT_FEE_SUN = 1_000_000n;
const NEW_ACCOUNT_NET_FEE_SUN = 100_000n;
/** A USDT-like transfer: its energy, of which the dynamic energy model's penalty, and the sender's own share. */
const TRC20_TRANSFER_ENERGY = 64_285;
const TRC20_TRANSFER_PENALTY = 34_635;
const SENDER_OWN_ENERGY = 1_000;
const TRC20_REVERT_ENERGY = 4_500;
const ENERGY_PRICE_SUN = 420;
const SIGNATURE_BYTES = 65;
const BLOCK_VERSION = 32;
/** Genesis time: blocks cross a UTC midnight (2025-01-01) at block 10. */
export const SCENARIO_GENESIS_MS = Date.UTC(2025, 0, 1) - 10 * BLOCK_INTERVAL_MS + 1_500;

interface Account {
  balance: bigint;
  assets: Map<string, bigint>;
  createTime: number;
  lastOperation?: number;
}
interface State {
  accounts: Map<string, Account>;
  trc20: Map<string, bigint>;
}
const cloneState = (s: State): State => ({
  accounts: new Map([...s.accounts].map(([k, a]) => [k, { ...a, assets: new Map(a.assets) }])),
  trc20: new Map(s.trc20),
});

/** A signed transaction as the chain holds it (its JSON is rendered per request: hex or base58). */
export interface SignedTx {
  raw: RawTransaction;
  rawBytes: Bytes;
  txID: string;
  signatures: Bytes[];
}
interface StoredTx extends SignedTx {
  contractRet: string;
}
interface StoredBlock {
  number: number;
  blockID: string;
  header: TronBlockHeaderJson;
  txs: StoredTx[];
  infos: TronTransactionInfoJson[];
  state: State;
}

const CONTRACT_RET_NUMBERS: Record<string, number> = { SUCCESS: 1, REVERT: 2 };

/** java-tron's txTrieRoot: a binary sha256 tree over sha256(Transaction bytes); zeros for no transactions. */
function txTrieRoot(txs: StoredTx[]): Bytes {
  let level = txs.map((t) =>
    sha256Bytes(encodeTransaction(t.rawBytes, t.signatures, CONTRACT_RET_NUMBERS[t.contractRet])),
  );
  if (level.length === 0) return new Uint8Array(32);
  while (level.length > 1) {
    const next: Bytes[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const right = level[i + 1];
      next.push(right ? sha256Bytes(new Uint8Array([...level[i]!, ...right])) : level[i]!);
    }
    level = next;
  }
  return level[0]!;
}

export function renderTransaction(tx: StoredTx, visible: boolean): JsonObject {
  return {
    ret: [{ contractRet: tx.contractRet }],
    signature: tx.signatures.map(bytesToHex),
    txID: tx.txID,
    raw_data: rawDataJson(tx.raw, visible),
    raw_data_hex: bytesToHex(tx.rawBytes),
  };
}

export function signTransaction(raw: RawTransaction, key: TronKey): SignedTx {
  const { rawBytes, txID } = txIdOf(raw);
  return { raw, rawBytes, txID, signatures: [signDigest(hexToBytes(txID), key.privateKey)] };
}

/** Why a transaction cannot enter the pool, in java-tron's broadcast codes and messages; undefined if it can. */
export interface Refusal {
  code: string;
  message: string;
}

const abi = AbiCoder.defaultAbiCoder();
const word = (hex41: string) => `000000000000000000000000${hex41.slice(2)}`;

/**
 * The chain: blocks, their infos, the state after each block (so the solidified face reads the state at
 * the solidified block), a pool of broadcast transactions mined into the next block.
 */
export class TronScenario implements TronChainView {
  readonly chainId: string;
  readonly genesisBlockId: string;
  readonly blocks: StoredBlock[] = [];
  readonly pool: SignedTx[] = [];
  private readonly txIndex = new Map<string, number>();
  private branch = 0;

  constructor(
    readonly network: TronNetwork,
    public solidifyDepth: number,
  ) {
    this.chainId = CHAIN_ID[network];
    this.genesisBlockId = GENESIS_BLOCK_ID[network];
    this.blocks.push(this.genesis());
  }

  private genesis(): StoredBlock {
    const state: State = { accounts: new Map(), trc20: new Map(Object.entries(GENESIS_TRC20)) };
    for (const [address, balance] of Object.entries(GENESIS_TRX)) {
      state.accounts.set(address, { balance, assets: new Map(), createTime: SCENARIO_GENESIS_MS });
    }
    state.accounts.get(TRC10.owner)!.assets.set(TRC10.id, TRC10.totalSupply);
    const witness = SCENARIO_KEYS.witnesses[0]!;
    // Block 0 keeps the network's real genesis blockID (an identity check reads it); its header fields are
    // the stand-in's own (the real genesis header is not recorded here), so this id is not sha256 of them.
    return {
      number: 0,
      blockID: this.genesisBlockId,
      header: {
        raw_data: {
          number: 0,
          txTrieRoot: "0".repeat(64),
          witness_address: witness.hex,
          parentHash: "0".repeat(64),
          version: 0,
          timestamp: SCENARIO_GENESIS_MS,
        },
        witness_signature: "",
      },
      txs: [],
      infos: [],
      state,
    };
  }

  get head(): StoredBlock {
    return this.blocks[this.blocks.length - 1]!;
  }
  headNumber(): number {
    return this.head.number;
  }
  solidifiedNumber(): number {
    return Math.max(0, this.head.number - this.solidifyDepth);
  }

  // ---- builders of scenario transactions (signed by the scenario's keys) ----

  /** ref_block of a new transaction: bytes 6..8 of the head's number, bytes 8..16 of its id (as java-tron). */
  refBlock(): { ref_block_bytes: Bytes; ref_block_hash: Bytes } {
    const id = hexToBytes(this.head.blockID);
    return { ref_block_bytes: id.subarray(6, 8), ref_block_hash: id.subarray(8, 16) };
  }

  unsigned(
    contract: ContractParameter,
    feeLimit?: bigint,
    nowMs = this.head.header.raw_data.timestamp,
  ): RawTransaction {
    const raw: RawTransaction = {
      ...this.refBlock(),
      expiration: BigInt(nowMs + 60_000),
      contract,
      timestamp: BigInt(nowMs),
    };
    if (feeLimit !== undefined) raw.fee_limit = feeLimit;
    return raw;
  }

  trx(from: TronKey, toHex41: string, amount: bigint): SignedTx {
    return signTransaction(
      this.unsigned({
        type: "TransferContract",
        value: { owner_address: hexToBytes(from.hex), to_address: hexToBytes(toHex41), amount },
      }),
      from,
    );
  }

  trc10(from: TronKey, toHex41: string, amount: bigint, assetId: string = TRC10.id): SignedTx {
    return signTransaction(
      this.unsigned({
        type: "TransferAssetContract",
        value: {
          asset_name: new TextEncoder().encode(assetId),
          owner_address: hexToBytes(from.hex),
          to_address: hexToBytes(toHex41),
          amount,
        },
      }),
      from,
    );
  }

  trc20Transfer(from: TronKey, toHex41: string, amount: bigint): SignedTx {
    const data = `${SELECTORS.transfer}${abi.encode(["address", "uint256"], [`0x${toHex41.slice(2)}`, amount]).slice(2)}`;
    return signTransaction(
      this.unsigned(
        {
          type: "TriggerSmartContract",
          value: {
            owner_address: hexToBytes(from.hex),
            contract_address: hexToBytes(TRC20.address),
            data: hexToBytes(data),
          },
        },
        100_000_000n,
      ),
      from,
    );
  }

  // ---- validation (broadcast) and execution (mining) ----

  /** What java-tron's broadcast refuses before the pool: signature, TaPoS, duplicates, balances. */
  validate(tx: SignedTx): Refusal | undefined {
    if (this.txIndex.has(tx.txID) || this.pool.some((p) => p.txID === tx.txID)) {
      return { code: "DUP_TRANSACTION_ERROR", message: "Dup transaction." };
    }
    const owner = bytesToHex(tx.raw.contract.value.owner_address);
    const signer = tx.signatures[0] && recoverAddress(hexToBytes(tx.txID), tx.signatures[0]);
    if (signer !== owner) return { code: "SIGERROR", message: "validate signature error" };
    const ref = bytesToHex(tx.raw.ref_block_bytes) + bytesToHex(tx.raw.ref_block_hash);
    const known = this.blocks.some((b) => {
      const id = hexToBytes(b.blockID);
      return bytesToHex(id.subarray(6, 8)) + bytesToHex(id.subarray(8, 16)) === ref;
    });
    if (!known) return { code: "TAPOS_ERROR", message: "Tapos failed" };
    const state = this.head.state;
    const account = state.accounts.get(owner);
    const c = tx.raw.contract;
    if (!account) {
      return { code: "CONTRACT_VALIDATE_ERROR", message: `Validate ${c.type} error, no OwnerAccount.` };
    }
    if (c.type === "TransferContract") {
      if (c.value.amount <= 0n)
        return { code: "CONTRACT_VALIDATE_ERROR", message: "Amount must be greater than 0." };
      if (account.balance < c.value.amount) {
        return {
          code: "CONTRACT_VALIDATE_ERROR",
          message: "Validate TransferContract error, balance is not sufficient.",
        };
      }
    }
    if (c.type === "TransferAssetContract") {
      const held = account.assets.get(new TextDecoder().decode(c.value.asset_name)) ?? 0n;
      if (held < c.value.amount)
        return { code: "CONTRACT_VALIDATE_ERROR", message: "assetBalance is not sufficient." };
    }
    return undefined;
  }

  private account(state: State, hex: string, time: number): { account: Account; created: boolean } {
    const found = state.accounts.get(hex);
    if (found) return { account: found, created: false };
    const account: Account = { balance: 0n, assets: new Map(), createTime: time };
    state.accounts.set(hex, account);
    return { account, created: true };
  }

  /** Runs one transaction on `state`; its ret and info (blockNumber/time filled by the caller). */
  private execute(
    state: State,
    tx: SignedTx,
    time: number,
  ):
    | { contractRet: string; info: Omit<TronTransactionInfoJson, "blockNumber" | "blockTimeStamp"> }
    | undefined {
    const netUsage = tx.rawBytes.length + SIGNATURE_BYTES * tx.signatures.length + 64;
    const c = tx.raw.contract;
    const owner = state.accounts.get(bytesToHex(c.value.owner_address));
    if (!owner) return undefined;
    owner.lastOperation = time;
    if (c.type === "TransferContract" || c.type === "TransferAssetContract") {
      const to = this.account(state, bytesToHex(c.value.to_address), time);
      const fee = to.created ? CREATE_ACCOUNT_FEE_SUN + NEW_ACCOUNT_NET_FEE_SUN : 0n;
      if (c.type === "TransferContract") {
        if (owner.balance < c.value.amount + fee) return undefined;
        owner.balance -= c.value.amount + fee;
        to.account.balance += c.value.amount;
      } else {
        const asset = new TextDecoder().decode(c.value.asset_name);
        const held = owner.assets.get(asset) ?? 0n;
        if (held < c.value.amount || owner.balance < fee) return undefined;
        owner.assets.set(asset, held - c.value.amount);
        owner.balance -= fee;
        to.account.assets.set(asset, (to.account.assets.get(asset) ?? 0n) + c.value.amount);
      }
      // as recorded (mainnet/transactioninfos.json): a new account's transfer burns 1.1 TRX, others use bandwidth
      const info =
        fee > 0n
          ? {
              id: tx.txID,
              fee: Number(fee),
              contractResult: [""],
              receipt: { net_fee: Number(NEW_ACCOUNT_NET_FEE_SUN) },
            }
          : { id: tx.txID, contractResult: [""], receipt: { net_usage: netUsage } };
      return { contractRet: "SUCCESS", info };
    }
    return this.executeTrigger(state, tx, owner, netUsage);
  }

  private executeTrigger(state: State, tx: SignedTx, owner: Account, netUsage: number) {
    const c = tx.raw.contract;
    if (c.type !== "TriggerSmartContract") return undefined;
    const contract = bytesToHex(c.value.contract_address);
    const data = bytesToHex(c.value.data ?? new Uint8Array());
    if (contract !== TRC20.address || !data.startsWith(SELECTORS.transfer)) return undefined;
    const [to, amount] = abi.decode(["address", "uint256"], `0x${data.slice(8)}`) as unknown as [
      string,
      bigint,
    ];
    const from = bytesToHex(c.value.owner_address);
    const toHex = `41${to.slice(2).toLowerCase()}`;
    const held = state.trc20.get(from) ?? 0n;
    const ok = held >= amount;
    const energy = ok ? TRC20_TRANSFER_ENERGY : TRC20_REVERT_ENERGY;
    const energyFee = (energy - (ok ? SENDER_OWN_ENERGY : 0)) * ENERGY_PRICE_SUN;
    if (owner.balance < BigInt(energyFee)) return undefined;
    owner.balance -= BigInt(energyFee);
    // members in java-tron's ResourceReceipt order (mainnet/transactioninfos.json)
    const receipt: TronReceiptJson = ok
      ? {
          energy_usage: SENDER_OWN_ENERGY,
          energy_fee: energyFee,
          energy_usage_total: energy,
          net_usage: netUsage,
          result: "SUCCESS",
          energy_penalty_total: TRC20_TRANSFER_PENALTY,
        }
      : { energy_fee: energyFee, energy_usage_total: energy, net_usage: netUsage, result: "REVERT" };
    if (!ok) {
      const reason = abi.encode(["string"], ["ERC20: transfer amount exceeds balance"]).slice(2);
      return {
        contractRet: "REVERT",
        info: {
          id: tx.txID,
          fee: energyFee,
          contractResult: [`08c379a0${reason}`],
          contract_address: contract,
          receipt,
          result: "FAILED" as const,
          resMessage: bytesToHex(new TextEncoder().encode("REVERT opcode executed")),
        },
      };
    }
    state.trc20.set(from, held - amount);
    state.trc20.set(toHex, (state.trc20.get(toHex) ?? 0n) + amount);
    return {
      contractRet: "SUCCESS",
      info: {
        id: tx.txID,
        fee: energyFee,
        contractResult: [`${"0".repeat(63)}1`],
        contract_address: contract,
        receipt,
        log: [
          {
            address: contract.slice(2),
            topics: [TRANSFER_TOPIC, word(from), word(toHex)],
            data: abi.encode(["uint256"], [amount]).slice(2),
          },
        ],
      },
    };
  }

  // ---- mining, reorgs ----

  /** Mines `count` blocks; the first takes the pool and `txs` (transactions that fail to run are dropped). */
  mine(count = 1, txs: SignedTx[] = []): TronBlockJson[] {
    const mined: TronBlockJson[] = [];
    for (let i = 0; i < count; i++) {
      const take = i === 0 ? [...this.pool.splice(0), ...txs] : [];
      mined.push(this.produce(take));
    }
    return mined;
  }

  private produce(candidates: SignedTx[]): TronBlockJson {
    const parent = this.head;
    const number = parent.number + 1;
    const timestamp = SCENARIO_GENESIS_MS + number * BLOCK_INTERVAL_MS;
    const state = cloneState(parent.state);
    const stored: StoredTx[] = [];
    const infos: TronTransactionInfoJson[] = [];
    for (const tx of candidates) {
      const done = this.execute(state, tx, timestamp);
      if (!done) continue;
      stored.push({ ...tx, contractRet: done.contractRet });
      const { id, ...rest } = done.info;
      infos.push({
        id,
        ...pick(rest, "fee"),
        blockNumber: number,
        blockTimeStamp: timestamp,
        ...omit(rest, "fee"),
      });
    }
    const witness = SCENARIO_KEYS.witnesses[(number + this.branch) % SCENARIO_KEYS.witnesses.length]!;
    const raw = {
      timestamp: BigInt(timestamp),
      txTrieRoot: txTrieRoot(stored),
      parentHash: hexToBytes(parent.blockID),
      number: BigInt(number),
      witness_address: hexToBytes(witness.hex),
      version: BLOCK_VERSION,
    };
    const rawBytes = encodeBlockHeaderRaw(raw);
    const digest = sha256Bytes(rawBytes);
    const blockID = number.toString(16).padStart(16, "0") + bytesToHex(digest.subarray(8));
    const header: TronBlockHeaderJson = {
      raw_data: {
        number,
        txTrieRoot: bytesToHex(raw.txTrieRoot),
        witness_address: witness.hex,
        parentHash: parent.blockID,
        version: BLOCK_VERSION,
        timestamp,
      },
      witness_signature: bytesToHex(signDigest(digest, witness.privateKey)),
    };
    const block: StoredBlock = { number, blockID, header, txs: stored, infos, state };
    this.blocks.push(block);
    for (const tx of stored) this.txIndex.set(tx.txID, number);
    return this.renderBlock(block, false, true) as unknown as TronBlockJson;
  }

  /**
   * Drops the top `depth` blocks and mines `depth + 1` blocks of another branch in their place (its first
   * block holds `replacement`), as java-tron switches to a longer fork. Solidified blocks never reorg.
   */
  reorg(depth: number, replacement: SignedTx[] = []): { dropped: string[] } {
    if (depth < 1 || this.head.number - depth < this.solidifiedNumber()) {
      throw new Error(`a reorg of ${depth} would undo solidified block ${this.solidifiedNumber()}`);
    }
    const gone = this.blocks.splice(this.blocks.length - depth, depth);
    const dropped = gone.flatMap((b) => b.txs.map((t) => t.txID));
    for (const txID of dropped) this.txIndex.delete(txID);
    this.branch++;
    this.mine(depth + 1, replacement);
    return { dropped };
  }

  // ---- reads ----

  stored(n: number): StoredBlock | undefined {
    return Number.isSafeInteger(n) && n >= 0 ? this.blocks[n] : undefined;
  }
  storedById(id: string): StoredBlock | undefined {
    if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
    const block = this.stored(Number.parseInt(id.slice(0, 16), 16));
    return block?.blockID === id ? block : undefined;
  }

  renderBlock(block: StoredBlock, visible: boolean, detail: boolean): JsonObject {
    const { raw_data } = block.header;
    const out: JsonObject = {
      blockID: block.blockID,
      block_header: {
        raw_data: {
          number: raw_data.number,
          txTrieRoot: raw_data.txTrieRoot,
          witness_address: addressOut(raw_data.witness_address, visible),
          parentHash: raw_data.parentHash,
          // java-tron leaves a zero version and number out, as every default (block 0 has both).
          ...(raw_data.version ? { version: raw_data.version } : {}),
          timestamp: raw_data.timestamp,
        },
        ...(block.header.witness_signature ? { witness_signature: block.header.witness_signature } : {}),
      },
    };
    if (raw_data.number === 0) delete (out.block_header as { raw_data: JsonObject }).raw_data.number;
    if (detail && block.txs.length > 0)
      out.transactions = block.txs.map((t) => renderTransaction(t, visible));
    return out;
  }

  block(n: number): TronBlockJson | undefined {
    const b = this.stored(n);
    return b && (this.renderBlock(b, false, true) as unknown as TronBlockJson);
  }
  blockById(id: string): TronBlockJson | undefined {
    const b = this.storedById(id);
    return b && (this.renderBlock(b, false, true) as unknown as TronBlockJson);
  }
  infos(n: number): TronTransactionInfoJson[] | undefined {
    return this.stored(n)?.infos;
  }
  findTx(txID: string): { tx: StoredTx; block: StoredBlock; info: TronTransactionInfoJson } | undefined {
    const n = this.txIndex.get(txID);
    const block = n === undefined ? undefined : this.blocks[n];
    const i = block?.txs.findIndex((t) => t.txID === txID) ?? -1;
    return block && i >= 0 ? { tx: block.txs[i]!, block, info: block.infos[i]! } : undefined;
  }
  transaction(txID: string): { tx: TronTransactionJson; blockNumber: number } | undefined {
    const found = this.findTx(txID);
    return (
      found && {
        tx: renderTransaction(found.tx, false) as unknown as TronTransactionJson,
        blockNumber: found.block.number,
      }
    );
  }
  info(txID: string): TronTransactionInfoJson | undefined {
    return this.findTx(txID)?.info;
  }
  stateAt(n = this.head.number): State {
    return (this.blocks[Math.min(n, this.head.number)] ?? this.head).state;
  }
  balance(addressHex41: string, atBlock?: number): bigint {
    return this.stateAt(atBlock).accounts.get(addressHex41)?.balance ?? 0n;
  }
  accountAt(addressHex41: string, atBlock?: number): Account | undefined {
    return this.stateAt(atBlock).accounts.get(addressHex41);
  }

  call(contractHex41: string, data: string, atBlock?: number): { ok: boolean; result: string } | undefined {
    if (contractHex41 !== TRC20.address) return undefined;
    const state = this.stateAt(atBlock);
    const selector = data.slice(0, 8);
    const encode = (types: string[], values: unknown[]) => abi.encode(types, values).slice(2);
    switch (selector) {
      case SELECTORS.balanceOf: {
        if (data.length < 8 + 64) return { ok: false, result: "" };
        const owner = `41${data.slice(8 + 24, 8 + 64)}`;
        return { ok: true, result: encode(["uint256"], [state.trc20.get(owner) ?? 0n]) };
      }
      case SELECTORS.decimals:
        return { ok: true, result: encode(["uint8"], [TRC20.decimals]) };
      case SELECTORS.symbol:
        return { ok: true, result: encode(["string"], [TRC20.symbol]) };
      case SELECTORS.name:
        return { ok: true, result: encode(["string"], [TRC20.name]) };
      case SELECTORS.totalSupply:
        return {
          ok: true,
          result: encode(["uint256"], [[...state.trc20.values()].reduce((a, b) => a + b, 0n)]),
        };
      default:
        return { ok: false, result: "" };
    }
  }
}

function pick<T extends object, K extends keyof T>(o: T, k: K): Partial<Pick<T, K>> {
  return o[k] === undefined ? {} : ({ [k]: o[k] } as Partial<Pick<T, K>>);
}
function omit<T extends object, K extends keyof T>(o: T, k: K): Omit<T, K> {
  const { [k]: _, ...rest } = o;
  return rest;
}

/** The contract's ABI in java-tron's `getcontract` form (`entrys`, `Function`, `View`). */
export const TRC20_ABI_ENTRYS: JsonObject[] = [
  ...(["name", "symbol"] as const).map((name) => ({
    outputs: [{ type: "string" }],
    constant: true,
    name,
    stateMutability: "View",
    type: "Function",
  })),
  {
    outputs: [{ type: "uint8" }],
    constant: true,
    name: "decimals",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "uint256" }],
    constant: true,
    name: "totalSupply",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "uint256" }],
    constant: true,
    inputs: [{ name: "who", type: "address" }],
    name: "balanceOf",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "bool" }],
    inputs: [
      { name: "_to", type: "address" },
      { name: "_value", type: "uint256" },
    ],
    name: "transfer",
    stateMutability: "Nonpayable",
    type: "Function",
  },
  {
    inputs: [
      { indexed: true, name: "from", type: "address" },
      { indexed: true, name: "to", type: "address" },
      { name: "value", type: "uint256" },
    ],
    name: "Transfer",
    type: "Event",
  },
];
/** Stand-in bytecode: no EVM runs here; the contract's answers are computed (see TronScenario.call). */
export const TRC20_BYTECODE = "6080604052348015600f57600080fd5b50";
export const TRC20_CODE_HASH = keccak256(`0x${TRC20_BYTECODE}`).slice(2);
