/**
 * Webhook endpoints and receivers for the tests. `createEndpoint` writes an endpoint's row as the endpoints'
 * API makes it (its secret sealed under the instance's WEBHOOK_SECRETS_KEY by webhooks/secrets.ts); a
 * receiver is a Bun.serve on 127.0.0.1 that verifies every delivery with the `standardwebhooks` package and
 * the endpoint's secret, answers as the test says, and keeps what it got in order.
 */
import { createHash, randomBytes } from "node:crypto";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { createSecretBox, newSecret } from "../../src/webhooks/secrets";
import { onTeardown } from "./shared";

/** The instances' WEBHOOK_SECRETS_KEY in these tests (64 hex digits), and their settings. */
export const SECRETS_KEY = randomBytes(32).toString("hex");
export const WEBHOOK_ENV = {
  WEBHOOK_SECRETS_KEY: SECRETS_KEY,
  WEBHOOK_ALLOW_PRIVATE: "1",
  WEBHOOK_TIMEOUT_MS: "1000",
};

export interface TestEndpoint {
  id: string;
  secret: string;
}

/** An endpoint of `key` (undefined: open mode) on `url`, as POST /webhooks makes it. */
export async function createEndpoint(
  databaseUrl: string,
  options: { key?: string; url: string; version?: "v1" | "v2"; pending?: boolean; secret?: string },
): Promise<TestEndpoint> {
  const secret = options.secret ?? newSecret();
  const sealed = createSecretBox(Buffer.from(SECRETS_KEY, "hex")).seal(secret);
  const keyHash = options.key === undefined ? "" : createHash("sha256").update(options.key).digest("hex");
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await db`insert into webhook_endpoints (key_hash, url, version, pending, secret)
      values (decode(${keyHash}, 'hex'), ${options.url}, ${options.version ?? "v1"}, ${options.pending ?? false},
        ${Buffer.from(sealed)}) returning endpoint_id::text as id`;
    return { id: row!.id as string, secret };
  } finally {
    await db.end();
  }
}

/** A delivery as a receiver got it. */
export interface Received {
  id: string;
  timestamp: number;
  /** The body, parsed (amounts past 2^53 are not in these tests). */
  body: any;
  text: string;
  /** The status the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  /** The secret it verifies with (its endpoint's: `createEndpoint` takes it). */
  secret: string;
  /** Every delivery that reached it, verified, in arrival order (whatever it answered). */
  got: Received[];
  /** Those it answered 2xx, in order. */
  accepted(): Received[];
  /** Deliveries whose signature did not verify (must stay empty). */
  forged: string[];
  /** Stops listening (connections refused) until `resume`, on the same port. */
  down(): void;
  resume(): void;
  stop(): void;
}

/**
 * A receiver verifying with a secret of its own, made here. `answer` says the status of each delivery
 * (default 200) given how many times its id came; it may wait (a receiver slow or never answering).
 */
export function startReceiver(
  answer: (delivery: Received, seen: number) => number | Promise<number> = () => 200,
): Receiver {
  const secret = newSecret();
  const verifier = new Webhook(secret);
  const got: Received[] = [];
  const forged: string[] = [];
  const seen = new Map<string, number>();
  const serve = (port: number) =>
    Bun.serve({
      hostname: "127.0.0.1",
      port,
      idleTimeout: 0,
      async fetch(request) {
        const text = await request.text();
        const headers = Object.fromEntries(request.headers);
        try {
          verifier.verify(text, headers);
        } catch (error) {
          forged.push(`${(error as Error).message}: ${headers["webhook-id"]}`);
          return new Response("bad signature", { status: 400 });
        }
        const id = headers["webhook-id"]!;
        const times = (seen.get(id) ?? 0) + 1;
        seen.set(id, times);
        const delivery: Received = {
          id,
          timestamp: Number(headers["webhook-timestamp"]),
          body: JSON.parse(text),
          text,
          status: 0,
        };
        got.push(delivery);
        delivery.status = await answer(delivery, times);
        return new Response(null, { status: delivery.status });
      },
    });
  let server: ReturnType<typeof Bun.serve> | undefined = serve(0);
  const port = server.port as number;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    secret,
    got,
    forged,
    accepted: () => got.filter((d) => d.status >= 200 && d.status < 300),
    down() {
      server?.stop(true);
      server = undefined;
    },
    resume() {
      server ??= serve(port);
    },
    stop() {
      server?.stop(true);
      server = undefined;
    },
  };
  onTeardown(async () => receiver.stop());
  return receiver;
}

/** The deliveries of the database, by endpoint, in the order made. */
export async function deliveriesOf(
  databaseUrl: string,
  endpointId: string,
): Promise<{ id: string; kind: string; state: string; attempts: number; body: string }[]> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await db`select delivery_id as id, kind, state, attempts, body from webhook_deliveries
      where endpoint_id = ${endpointId}::uuid order by seq`;
    return rows.map((r) => ({
      id: r.id as string,
      kind: r.kind as string,
      state: r.state as string,
      attempts: r.attempts as number,
      body: r.body as string,
    }));
  } finally {
    await db.end();
  }
}
