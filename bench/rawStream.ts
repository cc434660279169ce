/**
 * The streaming limit: a bare Bun.serve streaming the bytes of a file (an NDJSON stream the service sent),
 * in chunks of the size the service hands over a pull, as the reader takes them.
 * Usage: bun bench/rawStream.ts <port> <ndjson-file>
 */
const [port, file] = process.argv.slice(2);
const bytes = await Bun.file(file!).bytes();
/** The service's stream hands over at most this much a pull (src/http/stream.ts, PULL_BYTES). */
const CHUNK_BYTES = 256 * 1024;
const headers = { "content-type": "application/x-ndjson" };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  idleTimeout: 60,
  async fetch(request) {
    await request.text();
    let at = 0;
    return new Response(
      new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            controller.enqueue(bytes.subarray(at, at + CHUNK_BYTES));
            at += CHUNK_BYTES;
            if (at >= bytes.length) controller.close();
          },
        },
        { highWaterMark: 1 },
      ),
      { headers },
    );
  },
});
console.log(`listening ${server.port}`);

export {};
