/**
 * Standard Webhooks signing (standardwebhooks.com; the `standardwebhooks` npm package verifies it): the
 * signature is `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` under the secret's bytes (the
 * base64 after `whsec_`). During a rotation both secrets sign, their signatures space-separated, so a
 * receiver holding either verifies.
 */
import { createHmac } from "node:crypto";

const SECRET_PREFIX = "whsec_";

export type DeliveryHeaders = Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>;

function secretBytes(secret: string): Buffer {
  const bytes = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    "base64",
  );
  if (bytes.length === 0) throw new Error("a webhook secret is empty");
  return bytes;
}

/**
 * The headers of one attempt. `timestamp` is the attempt's time, in whole seconds since the epoch (a Date is
 * taken to its second); `secrets` are the endpoint's secrets as shown (`whsec_...`), the current one first.
 */
export function signDelivery(options: {
  id: string;
  timestamp: number | Date;
  body: string;
  secrets: string[];
}): DeliveryHeaders {
  if (options.secrets.length === 0) throw new Error("a delivery needs at least one secret to sign it");
  const seconds =
    options.timestamp instanceof Date
      ? Math.floor(options.timestamp.getTime() / 1000)
      : Math.floor(options.timestamp);
  const signed = `${options.id}.${seconds}.${options.body}`;
  const signatures = options.secrets.map(
    (secret) => `v1,${createHmac("sha256", secretBytes(secret)).update(signed, "utf8").digest("base64")}`,
  );
  return {
    "webhook-id": options.id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": signatures.join(" "),
  };
}
