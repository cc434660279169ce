import { expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { newSecret } from "./secrets";
import { signDelivery } from "./signature";

test("the signature is Standard Webhooks' own: the spec's published example signs to its published value", () => {
  // The example of the Standard Webhooks specification and of the svix libraries' tests.
  const headers = signDelivery({
    id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    timestamp: 1614265330,
    body: '{"test": 2432232314}',
    secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  });
  expect(headers).toEqual({
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  });
});

test("the standardwebhooks package verifies a delivery signed now, and refuses it altered", () => {
  const secret = newSecret();
  const body = '{"type":"block","chain":"ETHEREUM","block":{"number":7,"hash":"0xab"},"results":[]}';
  const headers = signDelivery({ id: "msg_01", timestamp: new Date(), body, secrets: [secret] });
  expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  expect(() => new Webhook(secret).verify(body.replace("7", "8"), headers)).toThrow("No matching signature");
  expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow("No matching signature");
  expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "msg_02" })).toThrow();
});

test("during a rotation both secrets sign, space-separated, current first: either secret verifies", () => {
  const [current, previous] = [newSecret(), newSecret()];
  const body = '{"type":"webhook.test"}';
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = signDelivery({ id: "msg_r", timestamp, body, secrets: [current, previous] });
  const parts = headers["webhook-signature"].split(" ");
  expect(parts).toEqual([
    signDelivery({ id: "msg_r", timestamp, body, secrets: [current] })["webhook-signature"],
    signDelivery({ id: "msg_r", timestamp, body, secrets: [previous] })["webhook-signature"],
  ]);
  expect(new Webhook(current).verify(body, headers)).toEqual({ type: "webhook.test" });
  expect(new Webhook(previous).verify(body, headers)).toEqual({ type: "webhook.test" });
  expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow("No matching signature");
});

test("a timestamp is whole seconds: a Date and its seconds sign alike; no secret or an empty one is refused", () => {
  const at = new Date(1_700_000_000_999);
  const secrets = [newSecret()];
  expect(signDelivery({ id: "m", timestamp: at, body: "", secrets })).toEqual(
    signDelivery({ id: "m", timestamp: 1_700_000_000, body: "", secrets }),
  );
  expect(() => signDelivery({ id: "m", timestamp: 1, body: "", secrets: [] })).toThrow("at least one secret");
  expect(() => signDelivery({ id: "m", timestamp: 1, body: "", secrets: ["whsec_"] })).toThrow("empty");
});
