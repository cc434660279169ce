/**
 * A token contract's name, symbol and decimals, read with eth_call at the head. Old tokens (MKR, SAI) return
 * bytes32 instead of a string for name and symbol; both forms are read. What has no code, or no decimals,
 * is not an (ERC-20) token.
 */
import { NodeError } from "../../errors";
import { type RawJson, rawText } from "../../json";

/** What reading needs of the node: calls at the head (the engine, engine/engineApi.ts, is one). */
export interface NodeReader {
  call(method: string, params: unknown[]): { raw: RawJson } | Promise<{ raw: RawJson }>;
}

const NAME = "0x06fdde03";
const SYMBOL = "0x95d89b41";
const DECIMALS = "0x313ce567";

export interface TokenMetadata {
  /** Has code and answers decimals(): an ERC-20 token. */
  isToken: boolean;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

function bytesOf(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.slice(2), "hex"));
}

/** An ABI `string` return, or a `bytes32` one (right-padded with zeros); null when it is neither. */
export function decodeText(hex: string): string | null {
  const bytes = bytesOf(hex);
  if (bytes.length === 32) {
    const end = bytes.indexOf(0);
    const text = decoder.decode(bytes.subarray(0, end < 0 ? 32 : end));
    return text.length > 0 ? text : null;
  }
  if (bytes.length < 64) return null;
  const offset = Number(BigInt(`0x${Buffer.from(bytes.subarray(0, 32)).toString("hex")}`));
  if (offset + 32 > bytes.length) return null;
  const length = Number(BigInt(`0x${Buffer.from(bytes.subarray(offset, offset + 32)).toString("hex")}`));
  if (offset + 32 + length > bytes.length) return null;
  // PostgreSQL text holds no NUL; a name padded or cut with them reads the same without.
  return decoder.decode(bytes.subarray(offset + 32, offset + 32 + length)).replaceAll("\0", "");
}

const text = async (node: NodeReader, method: string, params: unknown[]) =>
  rawText((await node.call(method, params)).raw);

async function call(node: NodeReader, to: string, data: string): Promise<string | null> {
  try {
    const result = JSON.parse(await text(node, "eth_call", [{ to, data }, "latest"])) as string;
    return result === "0x" ? null : result;
  } catch (error) {
    // A revert: the contract does not answer this. No answer at all (an upstream down) is not a "no".
    if (error instanceof NodeError) return null;
    throw error;
  }
}

export async function readTokenMetadata(node: NodeReader, address: string): Promise<TokenMetadata> {
  const code = JSON.parse(await text(node, "eth_getCode", [address, "latest"])) as string;
  if (code === "0x") return { isToken: false, name: null, symbol: null, decimals: null };
  const [name, symbol, decimals] = await Promise.all([
    call(node, address, NAME),
    call(node, address, SYMBOL),
    call(node, address, DECIMALS),
  ]);
  const decimalsValue = decimals && decimals.length === 66 ? BigInt(decimals) : null;
  const validDecimals = decimalsValue !== null && decimalsValue <= 255n ? Number(decimalsValue) : null;
  return {
    isToken: validDecimals !== null,
    name: name === null ? null : decodeText(name),
    symbol: symbol === null ? null : decodeText(symbol),
    decimals: validDecimals,
  };
}
