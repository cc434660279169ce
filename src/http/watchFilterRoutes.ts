/** Watch-filter routes (docs/interface.md §5). */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { Address, FilterInfo, filterResult } from "../schemas";
import type { WatchFilters } from "../watch/watchFilters";
import type { RouteSpec } from "./routes";

const TAG = "watch_filters";
const Filters = (item: TSchema) => T.Object({ filters: T.Array(item) });
/** The list, and the `error` member that ends one cut short once its answer began (docs/interface.md §5.2). */
const AllFilters = T.Object({
  filters: T.Array(FilterInfo),
  error: T.Optional(
    T.Object(
      { detail: T.String() },
      { description: "Present only when the list is incomplete: a failure after the answer began" },
    ),
  ),
});
const CheckBody = T.Object({
  block_number: T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  offset: T.Optional(T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
});

export function watchFilterRouteSpecs(watch: WatchFilters): RouteSpec[] {
  // The family's result types (a coin's chain: `trx` only, and a filter names no contract).
  const results = Filters(filterResult(watch.types));
  const contract = watch.contracts
    ? T.Optional(T.Union([Address, T.Null()]))
    : T.Optional(
        T.Null({ description: `null: ${watch.chain} has no token contracts, a filter follows the coin` }),
      );
  return [
    {
      method: "GET",
      path: "/watch_filters/lastBlockNumber",
      tag: TAG,
      summary: "The last block processed for filters (final: its results never change).",
      body: null,
      response: T.Object({ block_number: T.Integer() }),
      handle: () => watch.lastBlockNumber(),
    },
    {
      method: "POST",
      path: "/watch_filters/add",
      tag: TAG,
      summary: "Registers a filter on an address (idempotent).",
      body: T.Object({
        address: Address,
        contract_address: contract,
        with_approval: T.Optional(T.Union([T.Boolean(), T.Null()], { default: false })),
      }),
      response: T.Object({ filter_id: T.String() }),
      handle: (body, caller) => watch.add(caller, body),
    },
    {
      method: "POST",
      path: "/watch_filters/check",
      tag: TAG,
      summary: "Filter matches of one processed block: up to 1000 a call, from `offset`.",
      body: CheckBody,
      response: results,
      errors: { 404: "The block is not processed yet" },
      handle: (body, caller) => watch.check(caller, body.block_number, body.offset ?? 0),
    },
    {
      method: "POST",
      path: "/watch_filters/check_v2",
      tag: TAG,
      summary: "As check, plus native movements made inside contract execution (internal calls).",
      body: CheckBody,
      response: results,
      errors: { 404: "The block is not processed yet" },
      handle: (body, caller) => watch.checkV2(caller, body.block_number, body.offset ?? 0),
    },
    {
      method: "DELETE",
      path: "/watch_filters/remove",
      tag: TAG,
      summary: "Removes one of the caller's filters.",
      body: T.Object({ filter_id: T.String({ minLength: 1 }) }),
      response: T.Object({ detail: T.String(), filter_id: T.String() }),
      errors: { 404: "No such filter for this key" },
      handle: (body, caller) => watch.remove(caller, body.filter_id),
    },
    {
      method: "POST",
      path: "/watch_filters/info",
      tag: TAG,
      summary: "The caller's filters on an address.",
      body: T.Object({ address: Address }),
      response: Filters(FilterInfo),
      handle: (body, caller) => watch.info(caller, body.address),
    },
    {
      method: "POST",
      path: "/watch_filters/all",
      tag: TAG,
      summary: "All of the caller's filters.",
      body: null,
      response: AllFilters,
      handle: (_body, caller) => watch.all(caller),
    },
  ];
}
