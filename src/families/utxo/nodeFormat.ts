/**
 * How this chain's node writes what the service decodes itself (raw blocks for the index, raw transactions
 * for the Esplora API): its dialect (dialect.ts, from `getnetworkinfo`) and, where the service knows the
 * client, the raw format (rawBlock.ts: Dogecoin's AuxPoW, the chain's address codec as the node names
 * scripts). Read once, again after a failed read.
 */
import type { ChainInfo } from "../../blockchain";
import { callText, type Engine } from "../../engine/engineApi";
import { addressNetworkOf } from "./addresses";
import { dialectOf, type NodeDialect } from "./dialect";
import type { RawBlockFormat } from "./rawBlock";
import { createScriptAddresser } from "./scriptAddress";

export interface NodeFormat {
  dialect: NodeDialect;
  /** Undefined: a client the service does not recognize, whose JSON answers are read instead. */
  format?: RawBlockFormat;
}

/** How raw blocks of this chain, served by this node, are read; undefined: read its JSON instead. */
function rawFormatOf(chain: ChainInfo, dialect: NodeDialect): RawBlockFormat | undefined {
  const network = addressNetworkOf(chain.blockchain, chain.network);
  if (network === undefined || dialect.client === "unknown") return undefined;
  return { auxpow: dialect.client === "dogecoin-core", addressOf: createScriptAddresser(network, dialect) };
}

/** The node's format, asked once (again after a failed read). */
export function createNodeFormat(engine: Engine, chain: ChainInfo): () => Promise<NodeFormat> {
  let known: Promise<NodeFormat> | undefined;
  return () => {
    if (known) return known;
    const reading = callText(engine, "getnetworkinfo", [])
      .then(dialectOf)
      .then((dialect) => ({ dialect, format: rawFormatOf(chain, dialect) }));
    known = reading;
    reading.catch(() => {
      if (known === reading) known = undefined;
    });
    return reading;
  };
}
