/**
 * The node's mempool as the Esplora API reads it: the instance's follower's view (../mempoolFollower.ts,
 * ../mempoolStore.ts), never a read of the node per request. While the view is not caught up (it has not
 * read every transaction of the node's latest listing), a read refuses with 503 and Retry-After
 * (MempoolBehindError): a part of the mempool answered as the whole would say false things (an address's
 * pending transactions missing, an output spent in the mempool answered unspent).
 */
import { MempoolBehindError } from "../../../errors";
import type { MempoolFollower, MempoolProgress } from "../mempoolFollower";
import type { FeeInfo, MempoolReads } from "../mempoolStore";

/** When a refused read may be tried again: the follower reads the node's listing once a second. */
const RETRY_AFTER_S = 1;
/** electrs' fee histogram bins (util/fees.rs VSIZE_BIN_WIDTH), in vbytes. */
const VSIZE_BIN_WIDTH = 50_000;

export interface MempoolView {
  /** The follower's view as it is now; throws MempoolBehindError while it is not caught up. */
  snapshot(): MempoolReads;
  /** `{count, vsize, total_fee, fee_histogram}` (electrs' BacklogStats) of that view; throws likewise. */
  backlog(): string;
}

/**
 * The mempool's backlog as electrs writes it (new_index/mempool.rs BacklogStats, util/fees.rs TxFeeInfo and
 * make_fee_histogram): each transaction's vsize is ceil(weight / 4) and its fee rate its fee over weight / 4
 * (a float); the histogram walks them from the highest rate, closing a bin of at least VSIZE_BIN_WIDTH
 * vbytes where the rate changes, each bin [its lowest rate, its vbytes].
 */
export function backlogJson(txs: Iterable<FeeInfo>): string {
  const rows: { fee: bigint; vsize: number; rate: number }[] = [];
  for (const { fee, weight } of txs) {
    rows.push({ fee, vsize: Math.ceil(weight / 4), rate: Number(fee) / (weight / 4) });
  }
  rows.sort((a, b) => b.rate - a.rate);
  const histogram: [number, number][] = [];
  let bin = 0;
  let lastRate = 0;
  for (const row of rows) {
    if (bin > VSIZE_BIN_WIDTH && lastRate !== row.rate) {
      histogram.push([lastRate, bin]);
      bin = 0;
    }
    lastRate = row.rate;
    bin += row.vsize;
  }
  if (bin > 0) histogram.push([lastRate, bin]);
  const vsize = rows.reduce((s, r) => s + r.vsize, 0);
  const fee = rows.reduce((s, r) => s + r.fee, 0n);
  return `{"count":${rows.length},"vsize":${vsize},"total_fee":${fee},"fee_histogram":${JSON.stringify(histogram)}}`;
}

/** Why the view is not caught up, in a refusal's words. */
function behind(progress: MempoolProgress): MempoolBehindError {
  const { listed, unread, age, stale } = progress;
  const why =
    listed === undefined
      ? "the node's mempool has not been read yet"
      : stale
        ? `the node's mempool could not be listed for ${Math.round(age / 1000)} s`
        : `${unread} of the ${listed} transactions of the node's mempool are still to be read`;
  return new MempoolBehindError(`${why}; retry shortly`, RETRY_AFTER_S);
}

export function createMempoolView(follower: MempoolFollower): MempoolView {
  const { view } = follower;
  /** The backlog of the view's version it was worked out for: one sort of the mempool a change at most. */
  let backlog = { version: -1, json: "" };
  function snapshot(): MempoolReads {
    const progress = follower.progress();
    if (!progress.caughtUp) throw behind(progress);
    return view;
  }
  return {
    snapshot,
    backlog() {
      snapshot();
      if (backlog.version !== view.version)
        backlog = { version: view.version, json: backlogJson(view.feeInfo()) };
      return backlog.json;
    },
  };
}
