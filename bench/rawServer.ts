/**
 * The limit: a bare Bun.serve answering every request with the same bytes (read from a file), as fast as
 * Bun can. The service's figures are read against it. Usage: bun bench/rawServer.ts <port> <body-file>
 */
const [port, file] = process.argv.slice(2);
const body = await Bun.file(file!).bytes();
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
console.log(`listening ${server.port}`);

export {};
