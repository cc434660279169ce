/** What every part of a start-up is built with (service.ts hands it to the builders of this folder). */
import type { Config } from "../config";
import type { ChainFamily } from "../families/family";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { Lifetime } from "./lifetime";

export interface StartContext {
  config: Config;
  log: Logger;
  /** The chain's family, chosen once from CHAIN. */
  family: ChainFamily;
  metrics: Metrics;
  /** Where each part says how it stops. */
  lifetime: Lifetime;
}
