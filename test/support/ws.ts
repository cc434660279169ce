/**
 * WebSocket clients for the tests: a JSON-RPC client over Bun's WebSocket, and a raw one over TCP that
 * can stop reading (a slow reader) or show the HTTP answer to an upgrade that is refused.
 */
import { type Socket, connect as tcpConnect } from "node:net";
import { onTeardown } from "./shared";

export interface TestSocket {
  send(message: unknown): void;
  /** The next message (parsed) that matches, among those not yet taken; waits up to `timeoutMs`. */
  next(predicate?: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Sends a request and waits for the answer with its id. */
  request(method: string, params?: unknown[], timeoutMs?: number): Promise<any>;
  /** Every notification of a subscription received so far, in order (their `result`s). */
  notifications(subscription: string): any[];
  /** Waits until a subscription has at least `count` notifications; returns them. */
  waitFor(subscription: string, count: number, timeoutMs?: number): Promise<any[]>;
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function wsUrl(httpUrl: string, key?: string): string {
  return `${httpUrl.replace(/^http/, "ws")}/node/jsonrpc${key ? `?api_key=${encodeURIComponent(key)}` : ""}`;
}

export async function connectSocket(url: string, headers?: Record<string, string>): Promise<TestSocket> {
  const ws = new WebSocket(url, { headers } as never);
  const messages: any[] = [];
  const byId = new Map<unknown, any>();
  const notifications = new Map<string, any[]>();
  let wake: (() => void) | undefined;
  let nextId = 1_000_000;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (event) => {
      resolve({ code: event.code, reason: event.reason });
      wake?.();
    };
  });
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data));
    if (message?.method === "eth_subscription") {
      const id = message.params.subscription;
      notifications.set(id, [...(notifications.get(id) ?? []), message.params.result]);
    } else {
      messages.push(message);
      if (!Array.isArray(message) && message?.id !== undefined) byId.set(message.id, message);
    }
    wake?.();
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`WebSocket ${url} did not open`));
  });
  onTeardown(async () => ws.close());

  async function waitUntil<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  return {
    send: (message) => ws.send(typeof message === "string" ? message : JSON.stringify(message)),
    next(predicate = () => true, timeoutMs = 5_000) {
      return waitUntil(
        () => {
          const index = messages.findIndex(predicate);
          return index < 0 ? undefined : messages.splice(index, 1)[0];
        },
        timeoutMs,
        "a message",
      );
    },
    async request(method, params = [], timeoutMs = 5_000) {
      const id = nextId++;
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      const answer = await waitUntil(() => byId.get(id), timeoutMs, `the answer to ${method}`);
      messages.splice(messages.indexOf(answer), 1);
      return answer;
    },
    notifications: (subscription) => notifications.get(subscription) ?? [],
    waitFor(subscription, count, timeoutMs = 5_000) {
      return waitUntil(
        () => {
          const list = notifications.get(subscription) ?? [];
          return list.length >= count ? list : undefined;
        },
        timeoutMs,
        `${count} notifications`,
      );
    },
    closed,
    close: () => ws.close(),
  };
}

/** A masked client frame (RFC 6455 §5.2), text. */
export function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x81, 0x80 | length])
      : length < 65_536
        ? Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff])
        : Buffer.concat([
            Buffer.from([0x81, 0x80 | 127]),
            (() => {
              const b = Buffer.alloc(8);
              b.writeBigUInt64BE(BigInt(length));
              return b;
            })(),
          ]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}

export interface RawSocket {
  /** The status line and headers of the HTTP answer to the upgrade, and its body when it was refused. */
  status: number;
  body: string;
  socket: Socket;
  /** Resolves when the connection ends (the server closed or dropped it). */
  ended: Promise<void>;
  /** What came after the answer's headers in the same read (the first frames of an accepted upgrade). */
  rest: Buffer;
}

/** An upgrade request over raw TCP, so a refusal shows its HTTP answer and the socket can stop reading. */
export async function rawUpgrade(
  httpUrl: string,
  path: string,
  headers: Record<string, string> = {},
  /** The loopback address the connection comes from (127.0.0.2, say: another client's IP). */
  from?: string,
): Promise<RawSocket> {
  const { hostname, port } = new URL(httpUrl);
  const socket = tcpConnect({ port: Number(port), host: hostname, localAddress: from });
  onTeardown(async () => void socket.destroy());
  const ended = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.on("connect", () => resolve()));
  const lines = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  let received = Buffer.alloc(0);
  const head = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      resolve(received.subarray(0, end).toString());
      received = received.subarray(end + 4);
    };
    socket.on("data", onData);
    socket.on("close", () => reject(new Error("closed before an answer")));
  });
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)![1]);
  let body = "";
  if (status !== 101) {
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    while (received.length < length) {
      received = Buffer.concat([
        received,
        await new Promise<Buffer>((resolve) => socket.once("data", resolve)),
      ]);
    }
    body = received.subarray(0, length).toString();
  }
  return { status, body, socket, ended, rest: received };
}

export interface RawClient {
  send(message: unknown): void;
  /** The next text message from the server (parsed); waits up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** The server's close frame (code and reason), or code 1006 when the connection ended without one. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/**
 * A JSON-RPC client over an accepted raw upgrade: masked text frames out, the server's frames read as they
 * come (unfragmented, as Bun sends them). Pings are answered by nobody; tests end well before they matter.
 */
export function rawClient(raw: RawSocket): RawClient {
  let buffer = raw.rest;
  const messages: any[] = [];
  let wake: (() => void) | undefined;
  let closeFrame: { code: number; reason: string } | undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    raw.socket.on("close", () => resolve(closeFrame ?? { code: 1006, reason: "" }));
  });
  const parse = () => {
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0]! & 0x0f;
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffer.length < offset + length) return;
      const payload = buffer.subarray(offset, offset + length);
      buffer = buffer.subarray(offset + length);
      if (opcode === 1) messages.push(JSON.parse(payload.toString("utf8")));
      else if (opcode === 8) {
        closeFrame = {
          code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
          reason: payload.subarray(2).toString("utf8"),
        };
      }
    }
  };
  raw.socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    parse();
    wake?.();
  });
  parse();
  return {
    send: (message) =>
      raw.socket.write(clientFrame(typeof message === "string" ? message : JSON.stringify(message))),
    async next(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length === 0) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error("timed out waiting for a message");
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 50));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return messages.shift();
    },
    closed,
    close: () => raw.socket.end(),
  };
}
