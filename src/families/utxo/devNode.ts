/**
 * The Bitcoin family's dev node: a regtest Litecoin Core (Debian's `litecoind`, /usr/bin/litecoind) started
 * when CHAIN=LTC runs with no UPSTREAM_URLS, as the anvil dev chain is for EVM. Its chain, wallet and RPC
 * credentials are kept under DATA_DIR/devchain (the credentials made once, readable by their owner only); its
 * ports are free ones found at each start; `-txindex=1` so every transaction can be read by id. On its first
 * start it makes a wallet and an address, and mines a first block to it. It is stopped with the service.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Blockchain } from "../../blockchain";
import { ConfigError } from "../../config";
import type { Logger } from "../../log";
import type { DevNode } from "../family";
import { freePort, type LocalProcess, startLocalProcess } from "../localProcess";

/** Debian's litecoind: a wrapper script that runs the binary below. */
export const LITECOIND = "/usr/bin/litecoind";
/** The binary the wrapper runs: used when present, so the wrapper's ~/.litecoin is never made. */
const LITECOIND_BINARY = "/usr/lib/litecoin/litecoind";
const START_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
const STOP_TIMEOUT_MS = 15_000;
/** Regtest makes blocks on demand: its head is followed closely. */
const DEV_HEAD_POLL_MS = 250;
/** RPC threads: each upstream's long-poll holds one (nodeProtocol.ts), requests take the others. */
const RPC_THREADS = 16;
/**
 * Seconds litecoind keeps an idle keep-alive connection: its shutdown waits for them to close (30 s by
 * default), and the service's own connections stay open until the node drops them.
 */
const RPC_SERVER_TIMEOUT_S = 3;
const WALLET = "dev";
/** Bitcoin Core's RPC codes the start meets: warming up, a wallet already loaded or not there. */
const RPC_IN_WARMUP = -28;
const RPC_WALLET_ALREADY_LOADED = -35;
const RPC_WALLET_NOT_FOUND = -18;

/** No litecoind to start: a configuration problem (exit 2), named with what to install. */
export class DevNodeMissingError extends ConfigError {}

interface Credentials {
  user: string;
  password: string;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The RPC credentials kept under the dev node's folder, made on its first start. */
function credentialsIn(dir: string): Credentials {
  const file = join(dir, "rpc.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as Credentials;
  const credentials = { user: "gateway", password: randomBytes(24).toString("hex") };
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

/** One JSON-RPC call to the node (its errors as RpcError; these nodes answer them with HTTP 500 and a body). */
async function rpc(port: number, auth: Credentials, method: string, params: unknown[] = [], wallet?: string) {
  const path = wallet === undefined ? "/" : `/wallet/${wallet}`;
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}`,
    },
    body: JSON.stringify({ jsonrpc: "1.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    result: unknown;
    error: { code: number; message: string } | null;
  };
  if (body.error) throw new RpcError(body.error.code, body.error.message);
  return body.result;
}

/** Whether the node answers (and is done warming up). */
async function ready(port: number, auth: Credentials): Promise<boolean> {
  try {
    await rpc(port, auth, "getblockchaininfo");
    return true;
  } catch (error) {
    if (error instanceof RpcError && error.code !== RPC_IN_WARMUP) throw error;
    return false;
  }
}

/** The dev wallet, loaded or made; a first block mined to it on a fresh chain. */
async function seed(port: number, auth: Credentials, log: Logger): Promise<void> {
  try {
    await rpc(port, auth, "loadwallet", [WALLET]);
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    if (error.code === RPC_WALLET_NOT_FOUND) await rpc(port, auth, "createwallet", [WALLET]);
    else if (error.code !== RPC_WALLET_ALREADY_LOADED) throw error;
  }
  if ((await rpc(port, auth, "getblockcount")) !== 0) return;
  const address = (await rpc(port, auth, "getnewaddress", [], WALLET)) as string;
  await rpc(port, auth, "generatetoaddress", [1, address], WALLET);
  log.info("dev node: first block mined", { address });
}

/** Starts litecoind in regtest on free ports and waits until it answers; its stop ends the process. */
async function launch(dir: string, auth: Credentials, log: Logger): Promise<LocalProcess> {
  const node = await startLocalProcess({
    name: "litecoind",
    binary: existsSync(LITECOIND_BINARY) ? LITECOIND_BINARY : LITECOIND,
    args: (port) => [
      "-regtest",
      `-datadir=${dir}`,
      "-server=1",
      "-txindex=1",
      "-fallbackfee=0.0001",
      "-listen=0",
      `-port=${freePort()}`,
      "-rpcbind=127.0.0.1",
      "-rpcallowip=127.0.0.1",
      `-rpcport=${port}`,
      `-rpcuser=${auth.user}`,
      `-rpcpassword=${auth.password}`,
      `-rpcthreads=${RPC_THREADS}`,
      `-rpcservertimeout=${RPC_SERVER_TIMEOUT_S}`,
      "-printtoconsole=0",
    ],
    ready: (port) => ready(port, auth).catch(() => false),
    // A litecoind a killed service left running on this folder holds the folder's lock.
    pidFile: join(dir, "gateway.pid"),
    startTimeoutMs: START_TIMEOUT_MS,
    pollMs: POLL_MS,
    // SIGTERM: litecoind flushes its chain state and wallet, then exits.
    stopSignal: "SIGTERM",
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
  log.info("dev node started", { node: "litecoind -regtest", port: node.port, pid: node.pid, dataDir: dir });
  return node;
}

/** A DevNodeMissingError naming Debian's package unless litecoind is at `binary`. */
export function requireLitecoind(binary = LITECOIND): void {
  if (existsSync(binary)) return;
  throw new DevNodeMissingError(
    `CHAIN=LTC with no UPSTREAM_URLS starts a regtest litecoind, and ${binary} is missing: install Debian's litecoind package (apt-get install litecoind), or set UPSTREAM_URLS`,
  );
}

/**
 * The dev node for CHAIN=LTC (the only coin whose node this machine has: Debian's litecoind); for another
 * coin, or without litecoind, a DevNodeMissingError saying what to do instead.
 */
export async function startUtxoDevNode(options: {
  dataDir: string;
  log: Logger;
  chain?: Blockchain;
}): Promise<DevNode> {
  const { dataDir, log, chain } = options;
  if (chain !== "LTC") {
    throw new DevNodeMissingError(
      `CHAIN=${chain} with no UPSTREAM_URLS: the service starts a dev node for LTC only (a regtest litecoind); set UPSTREAM_URLS=http://user:password@host:port to a ${chain} node`,
    );
  }
  requireLitecoind();
  const dir = join(dataDir, "devchain");
  mkdirSync(dir, { recursive: true });
  const auth = credentialsIn(dir);
  const node = await launch(dir, auth, log);
  try {
    await seed(node.port, auth, log);
  } catch (error) {
    await node.stop();
    throw error;
  }
  const url = `http://${auth.user}:${auth.password}@127.0.0.1:${node.port}`;
  log.info("UPSTREAM_URLS is unset: serving a local dev node (regtest litecoind)", { port: node.port });
  return { url, headPollMs: DEV_HEAD_POLL_MS, stop: () => node.stop() };
}
