/**
 * The limits: a bare Bun.serve answering every request with the same bytes (read from a file).
 *  - mode "static": the request is never read, the strictest limit there is;
 *  - mode "read": the request body is read and parsed as JSON first, as any JSON-RPC server must.
 * Usage: bun bench/rawServer.ts <port> <body-file> [static|read]
 */
const [port, file, mode = "static"] = process.argv.slice(2);
const body = await Bun.file(file!).bytes();
const headers = { "content-type": "application/json" };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  fetch:
    mode === "read"
      ? async (request) => {
          JSON.parse(await request.text());
          return new Response(body, { headers });
        }
      : () => new Response(body, { headers }),
});
console.log(`listening ${server.port}`);

export {};
