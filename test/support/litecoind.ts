/**
 * A real Litecoin Core in regtest for a test (Debian's litecoind, installed by the pretest script): on free
 * loopback ports, its data in a temporary directory, RPC behind a user and a password, with a wallet and
 * an address to mine to. `rpc` goes straight to the node (the ground truth), `post` sends raw JSON-RPC
 * text and gives the HTTP status with the body. Stopped (and its directory removed) on teardown; `halt`
 * stops it (connections refused) and `resume` starts it again on the same ports and data.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./service";
import { onTeardown } from "./shared";

/** How long litecoind may take to answer RPC (it takes 1-2 s), and to exit once asked to. */
const START_MS = 30_000;
const STOP_MS = 15_000;
/**
 * RPC threads: every service in front of the node holds one in a `waitfornewblock` long-poll (4 by
 * default, so a few services would leave none for the calls).
 */
const RPC_THREADS = 32;
/**
 * Seconds an idle keep-alive connection is kept by the node: litecoind's shutdown waits for its idle
 * connections to time out (30 s by default), so a halted node would take that long to go.
 */
const RPC_SERVER_TIMEOUT_S = 3;

export interface LitecoinNode {
  /** The node's JSON-RPC URL with its credentials, as UPSTREAM_URLS takes it. */
  url: string;
  /** The same URL without credentials (and what a request without them gets: 401). */
  bareUrl: string;
  user: string;
  password: string;
  rpcPort: number;
  /** The node's P2P port (loopback), for another node to connect to. */
  p2pPort: number;
  /** An address of its wallet, mined to by `mine`. */
  address: string;
  /** A call straight to the node: its result, or a thrown NodeRpcError with the node's code. */
  rpc<T = any>(method: string, params?: unknown): Promise<T>;
  /** Raw JSON-RPC text to the node (with its credentials): the HTTP status and body. */
  post(body: string): Promise<{ status: number; text: string }>;
  /** Mines `n` blocks to `address`; their hashes. */
  mine(n: number): Promise<string[]>;
  /** The process id of the running node. */
  pid(): number | undefined;
  /** Stops the process (connections refused); `resume` starts it again on the same ports and data. */
  halt(): Promise<void>;
  resume(): Promise<void>;
}

/** A JSON-RPC error the node answered. */
export class NodeRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startLitecoind(options: { connect?: LitecoinNode; args?: string[] } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "cg-ltc-"));
  // Unique, so a test can look for them anywhere they must not be.
  const user = `rpc-${crypto.randomUUID().slice(0, 8)}`;
  // Characters a URL must escape, so the credentials are seen decoded as the node expects them.
  const password = `pw-${crypto.randomUUID().slice(0, 8)}@:x`;
  const rpcPort = freePort();
  const p2pPort = freePort();
  const bareUrl = `http://127.0.0.1:${rpcPort}`;
  const url = `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${rpcPort}`;
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const args = [
    "litecoind",
    "-regtest",
    `-datadir=${dataDir}`,
    "-txindex=1",
    "-fallbackfee=0.0001",
    `-rpcuser=${user}`,
    `-rpcpassword=${password}`,
    `-rpcport=${rpcPort}`,
    "-rpcbind=127.0.0.1",
    "-rpcallowip=127.0.0.1",
    `-rpcthreads=${RPC_THREADS}`,
    `-rpcservertimeout=${RPC_SERVER_TIMEOUT_S}`,
    `-port=${p2pPort}`,
    "-bind=127.0.0.1",
    "-listen=1",
    "-discover=0",
    "-dnsseed=0",
    "-server=1",
    "-printtoconsole=0",
    ...(options.connect ? [`-connect=127.0.0.1:${options.connect.p2pPort}`] : ["-connect=0"]),
    ...(options.args ?? []),
  ];
  let child: ReturnType<typeof Bun.spawn> | undefined;

  async function post(body: string) {
    const response = await fetch(bareUrl, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", authorization },
    });
    return { status: response.status, text: await response.text() };
  }

  let nextId = 1;
  async function rpc<T = any>(method: string, params: unknown = []): Promise<T> {
    const { text } = await post(JSON.stringify({ jsonrpc: "1.0", id: nextId++, method, params }));
    const answer = JSON.parse(text) as { result: T; error: { code: number; message: string } | null };
    if (answer.error) throw new NodeRpcError(answer.error.code, answer.error.message);
    return answer.result;
  }

  async function launch() {
    child = Bun.spawn(args, { stdout: "ignore", stderr: "inherit" });
    const deadline = Date.now() + START_MS;
    for (;;) {
      try {
        await rpc("getblockchaininfo");
        return;
      } catch {
        // Refused until it listens, then -28 while it loads.
      }
      if (child.exitCode !== null) throw new Error(`litecoind exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`litecoind did not answer within ${START_MS} ms`);
      await Bun.sleep(50);
    }
  }

  async function halt() {
    const running = child;
    if (!running || running.exitCode !== null) return;
    running.kill("SIGTERM");
    const exited = await Promise.race([
      running.exited.then(() => true),
      Bun.sleep(STOP_MS).then(() => false),
    ]);
    if (!exited) {
      running.kill("SIGKILL");
      await running.exited;
    }
  }

  await launch();
  onTeardown(async () => {
    await halt();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await rpc("createwallet", ["test"]);
  const address = await rpc<string>("getnewaddress");
  const node: LitecoinNode = {
    url,
    bareUrl,
    user,
    password,
    rpcPort,
    p2pPort,
    address,
    rpc,
    post,
    mine: (n) => rpc<string[]>("generatetoaddress", [n, address]),
    pid: () => child?.pid,
    halt,
    async resume() {
      await launch();
      // The wallet is not loaded again by itself.
      await rpc("loadwallet", ["test"]).catch(() => {});
    },
  };
  return node;
}
