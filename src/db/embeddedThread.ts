/**
 * The embedded PostgreSQL's thread (started by db/embedded.ts): PGlite and its socket server, in a JavaScript
 * VM of their own. PGlite runs each statement synchronously in WebAssembly, and its memory (~300 MB) is an
 * ArrayBuffer that the VM's collector accounts for: on the service's own thread the first stopped the event
 * loop for every query's duration, and the second made each cache hit cost more (docs/architecture.md §9).
 *
 * Messages: in, {type:"start", dir, sharedBuffersMb, maxConnections} then {type:"stop"}; out,
 * {type:"started", address}, {type:"failed", message}, {type:"stopped"}.
 */
import type { EmbeddedReply, EmbeddedRequest } from "./embedded";

declare const self: Worker;

let stop: (() => Promise<void>) | undefined;

const reply = (message: EmbeddedReply) => self.postMessage(message);

self.onmessage = async (event: MessageEvent<EmbeddedRequest>) => {
  const message = event.data;
  if (message.type === "stop") {
    try {
      await stop?.();
    } finally {
      reply({ type: "stopped" });
    }
    return;
  }
  try {
    const { PGlite } = await import("@electric-sql/pglite");
    const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
    const pglite = await PGlite.create(message.dir, {
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${message.sharedBuffersMb}MB`],
    });
    const server = new PGLiteSocketServer({
      db: pglite,
      host: "127.0.0.1",
      port: 0,
      maxConnections: message.maxConnections,
    });
    await server.start();
    stop = async () => {
      await server.stop();
      await pglite.close();
    };
    // A first start runs initdb in a WebAssembly instance of its own, then starts another: nothing else in
    // this thread allocates enough to make the collector free the first (~260 MB held resident otherwise).
    Bun.gc(true);
    reply({ type: "started", address: server.getServerConn() });
  } catch (error) {
    reply({ type: "failed", message: (error as Error).message ?? String(error) });
  }
};
