/**
 * Rows in COPY's binary format (PostgreSQL's docs, "COPY", "Binary Format"; each type's `*_recv`): what a bulk
 * load sends (indexRows.ts `copyRows`). Written straight into buffers: the text format had the service build
 * and escape a string of every row and the database parse every cell back (a profile of a bulk load put half
 * of the service's time in building, escaping and converting COPY text), and it sent bytea as twice its bytes
 * in hex. A row is a field count, then each field as its length (-1: null) and its bytes in network order.
 */

/** The columns' types the index tables use, as their cells are given (indexRows.ts `ColumnType`). */
export type BinaryType =
  | "bigint"
  | "integer"
  | "smallint"
  | "numeric"
  | "boolean"
  | "date"
  | "text"
  | "text[]"
  | "hex";

/** A cell: a number or its decimal digits, a boolean, text, hex digits (`hex`), texts (`text[]`), or null. */
export type BinaryCell = string | number | bigint | boolean | readonly string[] | null;

/** The signature, flags (none) and header extension length (0) that open the data. */
const HEADER = Buffer.from([
  ...Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"),
  ...[0, 0, 0, 0],
  ...[0, 0, 0, 0],
]);
/** A field count of -1 ends the data. */
const TRAILER = Buffer.from([0xff, 0xff]);
/** The OID of `text`, an array's element type. */
const TEXT_OID = 25;
/** PostgreSQL's dates count days from 2000-01-01 (10,957 days after 1970-01-01). */
const POSTGRES_EPOCH_DAYS = 10_957;
const DAY_MS = 86_400_000;
/** numeric's digits are base 10,000 (four decimal digits each); its sign word for a negative value. */
const NUMERIC_DIGIT = 4;
const NUMERIC_NEGATIVE = 0x4000;
/** A buffer is sent once it holds about this many bytes. */
const CHUNK_BYTES = 1 << 20;
const TWO_32 = 2 ** 32;

/** Rows appended in COPY's binary format; `finish` gives the buffers to send. */
export function createBinaryRows(types: readonly BinaryType[]) {
  const chunks: Buffer[] = [HEADER];
  let buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let at = 0;

  /** Room for `bytes` more in the buffer (a full buffer is kept, a new one begun). */
  function room(bytes: number): void {
    if (at + bytes <= buf.length) return;
    chunks.push(buf.subarray(0, at));
    buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    at = 0;
  }

  function int64(value: string | number | bigint): void {
    const n = Number(value);
    if (Number.isSafeInteger(n)) {
      const high = Math.floor(n / TWO_32);
      buf.writeInt32BE(high, at);
      buf.writeUInt32BE(n - high * TWO_32, at + 4);
    } else {
      buf.writeBigInt64BE(BigInt(value), at);
    }
  }

  /** An integer (decimal digits) as numeric: base-10,000 digits, the first's weight, the sign, no scale. */
  function numeric(value: string | number | bigint): void {
    let digits = String(value);
    const negative = digits.startsWith("-");
    if (negative) digits = digits.slice(1);
    if (!/^\d+$/.test(digits)) throw new Error(`numeric cell ${value} is not an integer`);
    digits = digits.replace(/^0+/, "");
    const padded = "0".repeat((NUMERIC_DIGIT - (digits.length % NUMERIC_DIGIT)) % NUMERIC_DIGIT) + digits;
    const groups: number[] = [];
    for (let i = 0; i < padded.length; i += NUMERIC_DIGIT)
      groups.push(Number(padded.slice(i, i + NUMERIC_DIGIT)));
    const weight = groups.length - 1;
    // Trailing zero digits are implied by the weight.
    while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
    room(4 + 8 + 2 * groups.length);
    buf.writeInt32BE(8 + 2 * groups.length, at);
    buf.writeInt16BE(groups.length, at + 4);
    buf.writeInt16BE(groups.length === 0 ? 0 : weight, at + 6);
    buf.writeUInt16BE(negative && groups.length > 0 ? NUMERIC_NEGATIVE : 0, at + 8);
    buf.writeInt16BE(0, at + 10);
    at += 12;
    for (const group of groups) {
      buf.writeInt16BE(group, at);
      at += 2;
    }
  }

  /** UTF-8 text with its length before it. */
  function text(value: string): void {
    room(4 + 3 * value.length);
    const written = buf.write(value, at + 4, "utf8");
    buf.writeInt32BE(written, at);
    at += 4 + written;
  }

  /** A one-dimensional text[] (lower bound 1, no nulls); an empty one has no dimensions. */
  function texts(values: readonly string[]): void {
    room(4 + 20 + values.reduce((sum, v) => sum + 4 + 3 * v.length, 0));
    const start = at;
    at += 4;
    buf.writeInt32BE(values.length === 0 ? 0 : 1, at);
    buf.writeInt32BE(0, at + 4);
    buf.writeInt32BE(TEXT_OID, at + 8);
    at += 12;
    if (values.length > 0) {
      buf.writeInt32BE(values.length, at);
      buf.writeInt32BE(1, at + 4);
      at += 8;
      for (const value of values) text(value);
    }
    buf.writeInt32BE(at - start - 4, start);
  }

  function cell(type: BinaryType, value: BinaryCell): void {
    if (value === null) {
      room(4);
      buf.writeInt32BE(-1, at);
      at += 4;
      return;
    }
    switch (type) {
      case "hex": {
        const hex = value as string;
        room(4 + hex.length / 2);
        const written = buf.write(hex, at + 4, "hex");
        if (written * 2 !== hex.length) throw new Error(`cell ${hex.slice(0, 80)} is not hex digits`);
        buf.writeInt32BE(written, at);
        at += 4 + written;
        return;
      }
      case "text":
        text(value as string);
        return;
      case "text[]":
        texts(value as readonly string[]);
        return;
      case "numeric":
        numeric(value as string | number | bigint);
        return;
      case "bigint":
        room(12);
        buf.writeInt32BE(8, at);
        at += 4;
        int64(value as string | number | bigint);
        at += 8;
        return;
      case "integer":
        room(8);
        buf.writeInt32BE(4, at);
        buf.writeInt32BE(Number(value), at + 4);
        at += 8;
        return;
      case "smallint":
        room(6);
        buf.writeInt32BE(2, at);
        buf.writeInt16BE(Number(value), at + 4);
        at += 6;
        return;
      case "boolean":
        room(5);
        buf.writeInt32BE(1, at);
        buf[at + 4] = value === true || value === "true" ? 1 : 0;
        at += 5;
        return;
      case "date": {
        const ms = Date.parse(`${value as string}T00:00:00Z`);
        if (Number.isNaN(ms)) throw new Error(`date cell ${value} is not YYYY-MM-DD`);
        room(8);
        buf.writeInt32BE(4, at);
        buf.writeInt32BE(ms / DAY_MS - POSTGRES_EPOCH_DAYS, at + 4);
        at += 8;
        return;
      }
    }
  }

  return {
    /** Appends a row, its cells in the order of `types`. */
    add(row: readonly BinaryCell[]): void {
      room(2);
      buf.writeInt16BE(row.length, at);
      at += 2;
      for (let i = 0; i < row.length; i++) cell(types[i]!, row[i]!);
    },
    /** The data to send, the trailer included; the rows are not added to after. */
    finish(): Buffer[] {
      if (at > 0) chunks.push(buf.subarray(0, at));
      chunks.push(TRAILER);
      return chunks;
    },
  };
}
