/**
 * When a failed delivery is tried again (docs/interface.md §18.5): soon at first (1 s, 5 s, 30 s, 2 min), then
 * the delay doubling, each with ±20% jitter so that endpoints failing together do not retry together, up to
 * an hour; an endpoint whose head delivery has failed for a day is marked failing and still tried hourly.
 */

const SECOND_MS = 1_000;
/** The first delays, after the 1st, 2nd, 3rd and 4th failed attempt. */
const FIRST_DELAYS_MS = [1, 5, 30, 120].map((s) => s * SECOND_MS);
/** The longest wait between two attempts. */
export const MAX_DELAY_MS = 3_600 * SECOND_MS;
/** How far each doubled delay is moved at random, as a share of it. */
const JITTER = 0.2;
/** How long an endpoint's head delivery fails before the endpoint is marked failing. */
export const FAILING_AFTER_MS = 24 * 3_600 * SECOND_MS;

/**
 * The wait before the next attempt of a delivery that has failed `attempts` times (1 after its first).
 * `random` gives a number in [0, 1) (Math.random unless a test gives its own).
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const first = FIRST_DELAYS_MS[Math.max(0, attempts - 1)];
  if (first !== undefined) return first;
  // Doubling from the last of the first delays: 4 min after the 5th failure, 8 after the 6th...
  const doublings = attempts - FIRST_DELAYS_MS.length;
  const base = Math.min(
    MAX_DELAY_MS,
    FIRST_DELAYS_MS[FIRST_DELAYS_MS.length - 1]! * 2 ** Math.min(doublings, 16),
  );
  const jittered = base * (1 - JITTER + 2 * JITTER * random());
  return Math.round(Math.min(MAX_DELAY_MS, jittered));
}
