/**
 * Entry point: `bun src/main.ts` (npm start). Configuration comes from the environment only. With
 * WORKERS > 1 this process becomes the primary of a pool of HTTP workers (cluster/primary.ts), each of
 * which runs this file again with its slot in GATEWAY_WORKER.
 */

import { WORKER_ENV } from "./cluster/messages";
import { startPrimary } from "./cluster/primary";
import { ConfigError, loadConfig } from "./config";
import { createLogger } from "./log";
import { type Service, startService } from "./service";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const slot = process.env[WORKER_ENV];
  const worker = slot === undefined ? undefined : Number(slot);
  const log = createLogger({ level: config.logLevel, fields: worker === undefined ? undefined : { worker } });
  let service: Service | undefined;
  let stopping = false;
  const shutdown = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { reason });
    await service?.stop();
    process.exit(0);
  };
  try {
    service =
      worker === undefined && config.workers > 1
        ? await startPrimary({ config, log, entry: import.meta.path })
        : await startService(
            config,
            log,
            worker === undefined
              ? undefined
              : { index: worker, onPrimaryLost: () => void shutdown("the primary is gone") },
          );
  } catch (error) {
    // What only the chain's family can check (its address forms, whether it serves CHAIN) is found here.
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    log.error("start-up failed", { error });
    process.exit(1);
  }
  // The last line of defence: a promise rejected where no one listens is logged, not allowed to end the
  // service for every caller.
  process.on("unhandledRejection", (reason) => log.error("unhandled rejection", { error: reason }));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

await main();
