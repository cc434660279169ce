/**
 * Webhook endpoints and receivers for the tests. `createEndpoint` makes an endpoint through the service's API
 * (POST /webhooks) for a receiver, which then verifies with its secret; a receiver is a Bun.serve on
 * 127.0.0.1 that verifies every delivery with the `standardwebhooks` package, answers as the test says, and
 * keeps what it got in order.
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { post } from "./service";
import { onTeardown } from "./shared";

/** The instances' settings in these tests: one WEBHOOK_SECRETS_KEY for all, loopback receivers, 1 s attempts. */
export const WEBHOOK_ENV = {
  WEBHOOK_SECRETS_KEY: randomBytes(32).toString("hex"),
  WEBHOOK_ALLOW_PRIVATE: "1",
  WEBHOOK_TIMEOUT_MS: "1000",
};

/** An endpoint of `key` for `receiver`, made by POST /webhooks; the receiver verifies with its secret. */
export async function createEndpoint(
  serviceUrl: string,
  options: { key: string; receiver: Receiver; version?: "v1" | "v2"; pending?: boolean },
): Promise<{ id: string; secret: string }> {
  const made = await post(
    `${serviceUrl}/webhooks`,
    { url: options.receiver.url, version: options.version ?? "v1", pending: options.pending ?? false },
    { headers: { "x-api-key": options.key } },
  );
  if (made.status !== 201) throw new Error(`POST /webhooks: ${made.status} ${made.text}`);
  options.receiver.verifyWith(made.json.secret);
  return { id: made.json.id, secret: made.json.secret };
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
  /** Sets the secret it verifies with (its endpoint's, as POST /webhooks showed it). */
  verifyWith(secret: string): void;
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
 * A receiver, verifying with its endpoint's secret once told it. `answer` says the status of each delivery
 * (default 200) given how many times its id came; it may wait (a receiver slow or never answering).
 */
export function startReceiver(
  answer: (delivery: Received, seen: number) => number | Promise<number> = () => 200,
): Receiver {
  let verifier: Webhook | undefined;
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
          if (!verifier) throw new Error("a delivery before its endpoint was made");
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
    verifyWith(secret) {
      verifier = new Webhook(secret);
    },
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
