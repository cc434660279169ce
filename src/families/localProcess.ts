/** What a family's dev node needs of the machine: a free loopback port, and whether a process still runs. */

/** A port the kernel gives a listener on 127.0.0.1 now (free until someone else takes it). */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Whether a process with this pid runs (a stale one left by a crash, say). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
