/**
 * A broadcast's text read as the node reads it before anything else (Bitcoin Core's `sendrawtransaction`:
 * `DecodeHexTx` with witnesses, Litecoin Core and Dogecoin Core alike): hex digits, an even number of them,
 * then one transaction's serialization to its last byte (version, inputs, outputs, witnesses when flagged,
 * lock time), each count and length a canonical compact size. What fails here the node refuses with
 * TX_DECODE_FAILED, so the Esplora API refuses it so without a node call. A transaction flagged with
 * Litecoin's MWEB data (flag 8) is read up to that data and left to the node, which alone reads it.
 */

/**
 * The node's refusal of a text it cannot read as a transaction (RPC_DESERIALIZATION_ERROR, -22), as Bitcoin
 * Core (0.20 on) and Litecoin Core word it; Dogecoin Core 1.14 says "TX decode failed" alone.
 */
export const TX_DECODE_FAILED =
  '{"code":-22,"message":"TX decode failed. Make sure the tx has at least one input."}';

const HEX = /^[0-9a-fA-F]*$/;
/** The serialization's flags after an empty input list: witnesses, and Litecoin's MWEB data. */
const WITNESS_FLAG = 1;
const MWEB_FLAG = 8;
/** Bytes of an input before its script (the outpoint), of its sequence, of an output's value. */
const OUTPOINT_BYTES = 36;
const SEQUENCE_BYTES = 4;
const VALUE_BYTES = 8;
const VERSION_BYTES = 4;
const LOCK_TIME_BYTES = 4;
/** The largest compact size the node reads (Bitcoin Core's MAX_SIZE). */
const MAX_SIZE = 0x0200_0000;
/** A compact size's first byte for 2, 4 and 8 bytes following, and the least each may carry (canonical). */
const WIDE = new Map([
  [0xfd, { width: 2, least: 0xfd }],
  [0xfe, { width: 4, least: 0x1_0000 }],
  [0xff, { width: 8, least: 0x1_0000_0000 }],
]);

/** Thrown where the bytes end early or hold what the node would not read; caught below. */
const UNREAD = Symbol("unread");

/** Whether `hex` is a transaction the node would read; false for what it refuses with TX_DECODE_FAILED. */
export function readsAsTransaction(hex: string): boolean {
  if (hex.length === 0 || hex.length % 2 !== 0 || !HEX.test(hex)) return false;
  const bytes = Buffer.from(hex, "hex");
  let at = 0;
  const skip = (count: number) => {
    if (count > bytes.length - at) throw UNREAD;
    at += count;
  };
  const byte = () => {
    skip(1);
    return bytes[at - 1]!;
  };
  const compactSize = () => {
    const first = byte();
    const wide = WIDE.get(first);
    if (wide === undefined) return first;
    skip(wide.width);
    let value = 0;
    for (let i = 1; i <= wide.width; i++) value = value * 256 + bytes[at - i]!;
    if (value < wide.least || value > MAX_SIZE) throw UNREAD;
    return value;
  };
  const inputs = () => {
    const count = compactSize();
    for (let i = 0; i < count; i++) {
      skip(OUTPOINT_BYTES);
      skip(compactSize());
      skip(SEQUENCE_BYTES);
    }
    return count;
  };
  const outputs = () => {
    const count = compactSize();
    for (let i = 0; i < count; i++) {
      skip(VALUE_BYTES);
      skip(compactSize());
    }
  };
  try {
    skip(VERSION_BYTES);
    let count = inputs();
    // An empty input list is the witness serialization's marker: its flags follow, then the real lists.
    let flags = 0;
    if (count === 0) {
      flags = byte();
      if (flags !== 0) {
        count = inputs();
        outputs();
      }
    } else {
      outputs();
    }
    if (flags & WITNESS_FLAG) {
      flags ^= WITNESS_FLAG;
      let witnessed = false;
      for (let i = 0; i < count; i++) {
        const items = compactSize();
        for (let j = 0; j < items; j++) skip(compactSize());
        witnessed ||= items > 0;
      }
      // The node refuses a witness flag with every input's witness empty.
      if (!witnessed) return false;
    }
    if (flags & ~MWEB_FLAG) return false;
    if (flags & MWEB_FLAG) return true;
    skip(LOCK_TIME_BYTES);
    return at === bytes.length;
  } catch (error) {
    if (error === UNREAD) return false;
    throw error;
  }
}
