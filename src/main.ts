/** Entry point: `bun src/main.ts` (npm start). Configuration comes from the environment only. */
import { ConfigError, loadConfig } from "./config";
import { createLogger } from "./log";
import { startService } from "./service";

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
  const log = createLogger({ level: config.logLevel });
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(config, log);
  } catch (error) {
    log.error("start-up failed", { error });
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    await service.stop();
    process.exit(0);
  };
  // The last line of defence: a promise rejected where no one listens is logged, not allowed to end the
  // service for every caller.
  process.on("unhandledRejection", (reason) => log.error("unhandled rejection", { error: reason }));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

await main();
