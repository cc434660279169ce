/**
 * The HTTP server: an Elysia app for health, metrics, the docs and everything unmatched, and our own routes
 * (node REST and JSON-RPC, streams, watch filters, webhooks) handed to Bun's router directly.
 *
 * Why two: on a cache hit the service does a few microseconds of work of its own, and Elysia's per-request
 * adapter (merging headers into the response, a cookie jar per request) cost ~12% of the CPU in profiles of
 * the hit path. Our handlers never use what it provides (they read the body, authenticate and answer
 * themselves), so Bun calls them straight; unknown paths and methods still fall through to Elysia.
 */
import { Elysia } from "elysia";
import type { AddressCodec } from "../addresses";
import type { BlockRefs } from "../blockRef";
import type { ChainFollower } from "../engine/chainFollower";
import type { ServiceError } from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { EsploraSource } from "../operations/esploraSource";
import type { NodePaths } from "../operations/nodePaths";
import type { StreamSpec } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import type { TronGridSource } from "../operations/tronGridSource";
import type { Subscriptions } from "../realtime/subscriptions";
import type { FamilyExamples } from "../schemas";
import { withTimeout } from "../timeout";
import { json, restError } from "./answer";
import { buildOpenApi, docsRoutes } from "./docs";
import { esploraRouteDocs, esploraRoutes } from "./esplora/esploraRoutes";
import type { Guard, Handler } from "./guard";
import { type Health, healthRoutes } from "./health";
import { createJsonRpc, jsonRpcRoute } from "./jsonrpc";
import { nodePathRoutes } from "./nodePaths";
import { restRoutes } from "./rest";
import { type RouteSpec, specRoutes } from "./routes";
import { type Status, statusRoutes } from "./status";
import { streamRoutes } from "./stream";
import { tronGridRouteDocs, tronGridRoutes } from "./tronGrid/tronGridRoutes";
import { createWebSocketTransport, type WebSocketTransport } from "./websocket";

export type Routes = Record<string, Partial<Record<"GET" | "POST" | "DELETE", Handler>>>;

/**
 * What the service has but this instance does not serve (another family's methods, or what reads an index
 * its family does not keep), as the refusals that name the chain and why (compose/unserved.ts); undefined
 * for a name the service never heard of, which keeps the plain refusal.
 */
export interface Unserved {
  /** What it refuses so, one sentence for the API docs; undefined: nothing. */
  readonly summary?: string;
  /** A JSON-RPC method's refusal (-32601). */
  method(name: string): ServiceError | undefined;
  /** A path's refusal (404 `{detail}`). */
  path(pathname: string): ServiceError | undefined;
}

export interface App {
  elysia: Elysia;
  routes: Routes;
  websocket: WebSocketTransport;
}

export interface HttpServer {
  readonly port: number;
  stop(): Promise<void>;
}

export function createApp(deps: {
  table: OperationTable;
  guard: Guard;
  health: Health;
  status: Status;
  watchFilterRoutes: RouteSpec[];
  /** The webhook endpoints' routes (http/webhookRoutes.ts), where watch filters are served. */
  webhookRoutes: RouteSpec[];
  metrics: Metrics;
  /** What GET /metrics answers: this process's registry, or a worker pool's merged metrics. */
  metricsText: () => Promise<string>;
  head: ChainFollower;
  /** What the API docs' examples name (an account, a token, a transaction): the chain family's. */
  examples?: FamilyExamples;
  /** What the instance serves, one sentence, for the API docs: the chain family's. */
  summary?: string;
  /** What this instance refuses naming its chain; unsaid: every refusal is the plain one. */
  unserved?: Unserved;
  log: Logger;
  maxBatchLength: number;
  maxBodyBytes: number;
  /** The family's bulk streams and how its nodes write block numbers (http/stream.ts), and their limits. */
  stream: { streams: readonly StreamSpec[]; blockRefs: BlockRefs; maxBlocks: number; prefetch: number };
  subscriptions: Subscriptions;
  ws: { maxSubscriptions: number; maxConnections: number; maxBufferBytes: number };
  /** The Esplora API (http/esplora/), where the family serves one: its reads, the codec, UTXO_MAX. */
  esplora?: { source: EsploraSource; addresses: AddressCodec; utxoMax: number };
  /** The family's node API at the node's own paths (http/nodePaths.ts), where it has one. */
  nodePaths?: NodePaths;
  /** TronGrid's v1 API (http/tronGrid/), where the family serves one: its reads and the codec. */
  tronGrid?: { source: TronGridSource; addresses: AddressCodec };
}): App {
  const { table, guard, health, metrics, head, log } = deps;
  const specs = [...deps.watchFilterRoutes, ...deps.webhookRoutes];
  const rpc = createJsonRpc({
    table,
    log,
    metrics,
    maxBatchLength: deps.maxBatchLength,
    unserved: deps.unserved && ((method) => deps.unserved!.method(method)),
  });
  const elysia = new Elysia()
    .onError(({ code, error, request }) => {
      // Unknown routes and framework-level failures; our handlers answer their own errors.
      if (code === "NOT_FOUND") {
        const unserved = deps.unserved?.path(new URL(request.url).pathname);
        return unserved ? restError(unserved) : json({ detail: "Not Found" }, 404);
      }
      if (code === "PARSE") {
        return json({ detail: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] }, 422);
      }
      log.error("unhandled error", { code, path: new URL(request.url).pathname, error });
      return json({ detail: "internal error" }, 500);
    })
    .use(healthRoutes(health))
    .use(statusRoutes(deps.status))
    .get("/metrics", async () => {
      return new Response(await deps.metricsText(), {
        headers: { "content-type": metrics.registry.contentType },
      });
    })
    .use(
      docsRoutes(
        buildOpenApi(table, specs, deps.stream.streams, health.schema, {
          summary: deps.summary,
          subscriptionKinds: deps.subscriptions.kinds,
          examples: deps.examples,
          notServed: deps.unserved?.summary,
          esplora: deps.esplora ? esploraRouteDocs() : undefined,
          nodePaths: deps.nodePaths,
          tronGrid: deps.tronGrid ? tronGridRouteDocs() : undefined,
        }),
        { head, family: deps.examples },
      ),
    ) as unknown as Elysia;
  const websocket = createWebSocketTransport({
    guard,
    rpc,
    subscriptions: deps.subscriptions,
    metrics,
    log,
    maxBodyBytes: deps.maxBodyBytes,
    ...deps.ws,
  });
  const routes: Routes = {
    "/node/jsonrpc": { POST: jsonRpcRoute({ rpc, guard }), GET: websocket.upgrade },
    ...restRoutes({ table, guard, metrics }),
    ...streamRoutes({ table, guard, head, ...deps.stream, log }),
    ...specRoutes({ routes: specs, guard }),
    ...(deps.esplora ? esploraRoutes({ ...deps.esplora, guard }) : {}),
    ...(deps.nodePaths ? nodePathRoutes({ paths: deps.nodePaths, guard, metrics }) : {}),
    ...(deps.tronGrid ? tronGridRoutes({ ...deps.tronGrid, guard }) : {}),
  };
  return { elysia, routes, websocket };
}

/** Bun.serve with our routes first and Elysia for the rest. */
/** How much longer than the longest upstream wait a connection may stay silent before Bun closes it. */
const IDLE_MARGIN_S = 10;
/**
 * How long a stop lets requests in flight finish (no new connection is accepted, idle ones close at once)
 * before it cuts what is left: a rolling restart loses no answer that comes within this time.
 */
export const DRAIN_MS = 5_000;

export function listen(options: {
  app: App;
  host: string;
  port: number;
  maxBodyBytes: number;
  /** The longest a request may wait for the upstreams (UPSTREAM_DEADLINE_MS): no idle timeout cuts it. */
  upstreamWaitMs: number;
  /** One of a pool of workers on the port (SO_REUSEPORT); never alone, where a second instance must fail. */
  sharePort: boolean;
  log: Logger;
}): HttpServer {
  const { app, log } = options;
  const fallback = app.elysia.fetch;
  const server = Bun.serve({
    hostname: options.host,
    port: options.port,
    reusePort: options.sharePort,
    // Bun's own limit answers an empty 413; ours (in the guard) answers a clear one, so Bun's sits above it.
    maxRequestBodySize: options.maxBodyBytes * 2 + 1024,
    // Bun's default (10 s) is below the upstream deadline: a slow node would reset the client's connection
    // instead of letting it get the next upstream's answer or a 504. The config keeps this within Bun's 255.
    idleTimeout: Math.ceil(options.upstreamWaitMs / 1000) + IDLE_MARGIN_S,
    routes: app.routes as never,
    fetch: (request) => fallback(request),
    websocket: app.websocket.handler,
    error(error) {
      log.error("unhandled server error", { error });
      return json({ detail: "internal error" }, 500);
    },
  });
  return {
    port: server.port!,
    async stop() {
      app.websocket.stop();
      await withTimeout(server.stop(false), DRAIN_MS, () => new Error("drain time over")).catch(() => {});
      await server.stop(true);
    },
  };
}
