/**
 * The operator's files in monitoring/: the Grafana dashboard and the Prometheus rules are well formed, ask
 * only for metrics (and labels) a running service really exports, and the rules pass promtool's checks and
 * their own unit tests.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { post, startTestService } from "./support/service";
import { fixtureChain } from "./support/shared";
import { promtoolPath } from "./support/tools";

const MONITORING = join(import.meta.dir, "..", "monitoring");
const DASHBOARD = join(MONITORING, "grafana-dashboard.json");
const ALERTS = join(MONITORING, "alerts.yml");
const ALERT_TESTS = join(MONITORING, "alerts.test.yml");
const PROMETHEUS = join(MONITORING, "prometheus.yml");

const REQUIRED_ALERTS = [
  "GatewayDown",
  "GatewayNoUpstreamInRotation",
  "GatewayUpstreamOut",
  "GatewayHeadNotMoving",
  "GatewayIndexerLagGrowing",
  "GatewayErrorRatio",
  "GatewayDiskTierFull",
  "GatewayDatabaseSlow",
  "GatewayDatabaseTimeouts",
  "GatewayCacheBadRecords",
  "GatewayRedisDown",
  "GatewayWebhookDeliveriesStuck",
];

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's placeholder for the datasource chosen at import.
const DATASOURCE = { type: "prometheus", uid: "${DS_PROMETHEUS}" };

/** Labels Prometheus adds to every scraped series: they are never in /metrics. */
const TARGET_LABELS = new Set(["job", "instance"]);
/** Series Prometheus makes itself rather than scraping them. */
const SYNTHETIC_SERIES = new Set(["up"]);

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8"));
const alerts = Bun.YAML.parse(readFileSync(ALERTS, "utf8")) as any;
const alertTests = Bun.YAML.parse(readFileSync(ALERT_TESTS, "utf8")) as any;
const prometheus = Bun.YAML.parse(readFileSync(PROMETHEUS, "utf8")) as any;

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { refId: string; expr?: string; datasource?: { uid: string } }[];
  panels?: Panel[];
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Every panel, those inside collapsed rows included. */
function allPanels(): Panel[] {
  return (dashboard.panels as Panel[]).flatMap((p) => [p, ...(p.panels ?? [])]);
}

const queryPanels = () => allPanels().filter((p) => p.type !== "row");
const rules = (): Rule[] => (alerts.groups as { rules: Rule[] }[]).flatMap((g) => g.rules);

/** Each PromQL expression with where it comes from, for messages. */
function expressions(): { where: string; expr: string; dashboard: boolean }[] {
  const fromPanels = queryPanels().flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      where: `panel "${p.title}" ${t.refId}`,
      expr: t.expr!,
      dashboard: true,
    })),
  );
  const fromVariables = (dashboard.templating.list as { name: string; definition: string }[])
    .filter((v) => v.definition?.startsWith("label_values("))
    .map((v) => ({
      where: `variable ${v.name}`,
      // label_values(metric, label) is Grafana's, not PromQL: its metric is what must exist.
      expr: v.definition.slice("label_values(".length, v.definition.indexOf(",")),
      dashboard: false,
    }));
  const fromRules = rules().map((r) => ({ where: `alert ${r.alert}`, expr: r.expr, dashboard: false }));
  return [...fromPanels, ...fromVariables, ...fromRules];
}

// ---------------------------------------------------------------------------------------------------------
// A small PromQL reader: enough to find the metric names, their matchers, and the labels that grouping
// clauses name, without mistaking function names, keywords, label names or durations for metrics.

interface Selector {
  name: string;
  at: number;
  matchers: { label: string; op: string; value: string }[];
}

interface Grouping {
  keyword: string;
  labels: string[];
  /** The span of expression the clause applies to (by/without: the aggregated group; on/ignoring: all). */
  from: number;
  to: number;
}

const GROUPING_KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const OTHER_KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "atan2"]);

/** Index just past the quoted string that starts at `i`. */
function skipString(expr: string, i: number): number {
  const quote = expr[i]!;
  let j = i + 1;
  while (j < expr.length && expr[j] !== quote) j += expr[j] === "\\" && quote !== "`" ? 2 : 1;
  if (j >= expr.length) throw new Error(`unterminated string in: ${expr}`);
  return j + 1;
}

/** Index just past the bracket that closes the one at `i`, strings skipped. */
function skipGroup(expr: string, i: number): number {
  const open = expr[i]!;
  const close = ({ "(": ")", "{": "}", "[": "]" } as Record<string, string>)[open]!;
  let depth = 0;
  for (let j = i; j < expr.length; j++) {
    const c = expr[j]!;
    if (c === '"' || c === "'" || c === "`") {
      j = skipString(expr, j) - 1;
    } else if (c === open) depth++;
    else if (c === close && --depth === 0) return j + 1;
  }
  throw new Error(`unbalanced ${open} in: ${expr}`);
}

function scanPromql(expr: string): { selectors: Selector[]; groupings: Grouping[] } {
  const selectors: Selector[] = [];
  const groupings: Grouping[] = [];
  const nextNonSpace = (j: number) => {
    while (j < expr.length && /\s/.test(expr[j]!)) j++;
    return j;
  };
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    const rest = expr.slice(i);
    if (/\s/.test(c)) i++;
    else if (c === '"' || c === "'" || c === "`") i = skipString(expr, i);
    // Range and subquery durations.
    else if (c === "[") i = skipGroup(expr, i);
    else if (c === "{") throw new Error(`a selector without a metric name in: ${expr}`);
    else if (c === "$") i += /^\$\w+/.exec(rest)![0].length;
    else if (/^\d/.test(rest) || /^\.\d/.test(rest)) {
      // A number, or a duration after offset (5m, 1h30m).
      i += /^(0x[0-9a-f]+|(\d+(ms|[smhdwy]))+|\d*\.?\d+(e[+-]?\d+)?)/i.exec(rest)![0].length;
    } else if (/^[a-zA-Z_:]/.test(rest)) {
      const word = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(rest)![0];
      const after = nextNonSpace(i + word.length);
      if (GROUPING_KEYWORDS.has(word)) {
        if (expr[after] !== "(") {
          i = after; // group_left without labels
          continue;
        }
        const end = skipGroup(expr, after);
        const labels = expr
          .slice(after + 1, end - 1)
          .split(",")
          .map((l) => l.trim())
          .filter(Boolean);
        const next = nextNonSpace(end);
        // `sum by (l) (x)`: the clause applies to the group that follows; on/ignoring and the postfix
        // form `sum (x) by (l)` are checked against the whole expression.
        const prefix = (word === "by" || word === "without") && expr[next] === "(";
        groupings.push({
          keyword: word,
          labels,
          from: prefix ? next : 0,
          to: prefix ? skipGroup(expr, next) : expr.length,
        });
        i = end;
      } else if (
        OTHER_KEYWORDS.has(word) ||
        expr[after] === "(" ||
        /^(by|without)\b/.test(expr.slice(after))
      ) {
        i += word.length; // a keyword, or a function or aggregation called
      } else {
        const matchers: Selector["matchers"] = [];
        i += word.length;
        if (expr[after] === "{") {
          const end = skipGroup(expr, after);
          const body = expr.slice(after + 1, end - 1);
          for (const m of body.matchAll(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g))
            matchers.push({ label: m[1]!, op: m[2]!, value: m[3]! });
          i = end;
        }
        selectors.push({ name: word, at: i - word.length, matchers });
      }
    } else i++;
  }
  return { selectors, groupings };
}

// ---------------------------------------------------------------------------------------------------------

interface Exposition {
  types: Map<string, string>;
  /** Label names seen on the samples of each series name (a histogram's _bucket, _sum, _count apart). */
  labels: Map<string, Set<string>>;
}

function readExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0];
    const seen = labels.get(name) ?? new Set<string>();
    const open = line.indexOf("{");
    if (open === name.length)
      for (const m of line.slice(open, line.lastIndexOf("}")).matchAll(/([a-zA-Z_]\w*)="/g)) seen.add(m[1]!);
    labels.set(name, seen);
  }
  return { types, labels };
}

/** Why a series name cannot be queried from this exposition, or undefined when it can. */
function missing(name: string, exposition: Exposition): string | undefined {
  const type = exposition.types.get(name);
  if (type === "histogram" || type === "summary")
    return `${name} is a ${type}: query ${name}_bucket, _sum or _count`;
  if (type) return undefined;
  const part = /^(.+)_(bucket|sum|count)$/.exec(name);
  const baseType = part && exposition.types.get(part[1]!);
  if (baseType === "histogram" || (baseType === "summary" && part![2] !== "bucket")) return undefined;
  return `${name} is not in /metrics`;
}

describe("dashboard", () => {
  test("is an importable dashboard over a DS_PROMETHEUS input, with an instance variable", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.title).toBeString();
    expect(dashboard.uid).toBeString();
    expect(dashboard.__inputs).toContainEqual(
      expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus" }),
    );
    const instance = dashboard.templating.list.find((v: { name: string }) => v.name === "instance");
    expect(instance).toMatchObject({
      type: "query",
      definition: "label_values(gateway_upstream_up, instance)",
      datasource: DATASOURCE,
      includeAll: true,
      multi: true,
    });
  });

  test("every panel reads Prometheus through the input, with at least one query", () => {
    const panels = queryPanels();
    expect(panels.length).toBeGreaterThan(10);
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual(DATASOURCE);
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) {
        expect(target.expr, `${panel.title} ${target.refId}`).toBeString();
        expect(target.expr!.trim(), `${panel.title} ${target.refId}`).not.toBe("");
        if (target.datasource) expect(target.datasource.uid).toBe(DATASOURCE.uid);
      }
    }
  });

  test("every series a panel asks for is narrowed to the chosen instances", () => {
    for (const { where, expr } of expressions().filter((e) => e.dashboard))
      for (const selector of scanPromql(expr).selectors)
        expect(selector.matchers, `${where}: ${selector.name}`).toContainEqual({
          label: "instance",
          op: "=~",
          value: "$instance",
        });
  });

  test("panels have unique ids and do not overlap on the 24-column grid", () => {
    const panels = allPanels();
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const [i, a] of panels.entries()) {
      expect(a.gridPos.x + a.gridPos.w, a.title).toBeLessThanOrEqual(24);
      for (const b of panels.slice(i + 1)) {
        const overlap =
          a.gridPos.x < b.gridPos.x + b.gridPos.w &&
          b.gridPos.x < a.gridPos.x + a.gridPos.w &&
          a.gridPos.y < b.gridPos.y + b.gridPos.h &&
          b.gridPos.y < a.gridPos.y + a.gridPos.h;
        expect(overlap, `"${a.title}" and "${b.title}"`).toBe(false);
      }
    }
  });
});

describe("alert rules", () => {
  test("each alert waits (for), has a severity, a summary and a runbook line", () => {
    const names = rules().map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const name of REQUIRED_ALERTS) expect(names).toContain(name);
    for (const rule of rules()) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^Gateway[A-Z]\w+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(["critical", "warning"], rule.alert).toContain(rule.labels?.severity ?? "");
      expect(rule.annotations?.summary?.length ?? 0, rule.alert).toBeGreaterThan(10);
      expect(rule.annotations?.runbook?.length ?? 0, rule.alert).toBeGreaterThan(10);
      expect(rule.annotations!.runbook!, rule.alert).not.toContain("\n");
    }
  });

  test("GatewayDown watches the job prometheus.yml scrapes", () => {
    const down = rules().find((r) => r.alert === "GatewayDown")!;
    const job = prometheus.scrape_configs[0].job_name;
    expect(job).toBe("chain-gateway");
    expect(scanPromql(down.expr).selectors).toContainEqual({
      name: "up",
      at: expect.any(Number),
      matchers: [{ label: "job", op: "=", value: job }],
    });
  });

  test("the unit tests see every alert fire", () => {
    const fired = new Set<string>();
    for (const t of alertTests.tests as {
      alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
    }[])
      for (const case_ of t.alert_rule_test ?? [])
        if (case_.exp_alerts.length > 0) fired.add(case_.alertname);
    for (const rule of rules()) expect([...fired], rule.alert).toContain(rule.alert);
  });
});

test("prometheus.yml scrapes the service's default port and loads alerts.yml", () => {
  expect(prometheus.rule_files).toEqual(["alerts.yml"]);
  expect(prometheus.scrape_configs).toHaveLength(1);
  expect(prometheus.scrape_configs[0].static_configs[0].targets).toEqual([
    `localhost:${loadConfig({}).port}`,
  ]);
});

test("the PromQL reader finds metrics, not functions, keywords, labels or durations", () => {
  const { selectors, groupings } = scanPromql(
    'histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{x=~"y|z", q="}"}[5m] offset 1h30m))) > bool 0.5' +
      " and on (job) group_left b - ignoring(q) c unless d",
  );
  expect(selectors.map((s) => s.name)).toEqual(["a_bucket", "b", "c", "d"]);
  expect(selectors[0]!.matchers).toEqual([
    { label: "x", op: "=~", value: "y|z" },
    { label: "q", op: "=", value: "}" },
  ]);
  expect(groupings.map((g) => [g.keyword, g.labels])).toEqual([
    ["by", ["job", "le"]],
    ["on", ["job"]],
    ["ignoring", ["q"]],
  ]);
  expect(() => scanPromql('{__name__="x"}')).toThrow("without a metric name");
});

describe("against a running service", () => {
  let exposition: Exposition;

  beforeAll(async () => {
    const { anvil } = await fixtureChain();
    const service = await startTestService({ upstreamUrls: [anvil.url] });
    const rpc = (body: unknown, raw = false) => post(`${service.url}/node/jsonrpc`, body, { raw });
    // Traffic enough for the labeled series: answers from the node and the cache, a caller's mistake, a
    // refused body.
    await rpc({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    await rpc({ jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: [] });
    for (let i = 0; i < 2; i++)
      await rpc({ jsonrpc: "2.0", id: 3, method: "eth_getBlockByNumber", params: ["0x1", false] });
    await rpc({ jsonrpc: "2.0", id: 4, method: "eth_noSuchMethod", params: [] });
    await rpc("{not json", true);
    const response = await fetch(`${service.url}/metrics`);
    expect(response.status).toBe(200);
    exposition = readExposition(await response.text());
  }, 120_000);

  test("the process metrics the dashboard reads are exported under Bun", () => {
    for (const name of [
      "gateway_process_resident_memory_bytes",
      "gateway_process_cpu_seconds_total",
      "gateway_process_open_fds",
      "gateway_nodejs_heap_size_used_bytes",
    ])
      expect(exposition.labels.has(name), name).toBe(true);
    // Collecting the heap's spaces walks the whole heap under Bun: a scrape would stall every request.
    expect([...exposition.labels.keys()].filter((name) => name.includes("heap_space"))).toEqual([]);
  });

  test("every metric the dashboard and the rules ask for is in /metrics", () => {
    const problems: string[] = [];
    for (const { where, expr } of expressions()) {
      const { selectors } = scanPromql(expr);
      const names = new Set(selectors.map((s) => s.name));
      // The reader must agree with a plain search: no gateway_ name hides where it does not look.
      const plain = new Set(expr.match(/\bgateway_[a-z0-9_]+\b/g) ?? []);
      expect([...plain].sort(), where).toEqual([...names].filter((n) => n.startsWith("gateway_")).sort());
      for (const name of names) {
        if (SYNTHETIC_SERIES.has(name)) continue;
        if (!name.startsWith("gateway_"))
          problems.push(`${where}: ${name} is not one of the service's metrics`);
        else {
          const why = missing(name, exposition);
          if (why) problems.push(`${where}: ${why}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test("every label a query names is on the series it names it for", () => {
    const problems: string[] = [];
    const checked = new Set<string>();
    const labelsOf = (name: string) => exposition.labels.get(name);
    for (const { where, expr } of expressions()) {
      const { selectors, groupings } = scanPromql(expr);
      for (const s of selectors) {
        const seen = labelsOf(s.name);
        // A labeled series without samples yet (no traffic of its kind) shows no label names to check.
        if (!seen || seen.size === 0) continue;
        checked.add(s.name);
        for (const m of s.matchers)
          if (!TARGET_LABELS.has(m.label) && !seen.has(m.label))
            problems.push(`${where}: ${s.name} has no label ${m.label}`);
      }
      for (const g of groupings) {
        const inside = selectors.filter((s) => s.at >= g.from && s.at < g.to).map((s) => labelsOf(s.name));
        if (inside.every((seen) => !seen || seen.size === 0)) continue;
        for (const label of g.labels)
          if (!TARGET_LABELS.has(label) && !inside.some((seen) => seen?.has(label)))
            problems.push(`${where}: ${g.keyword} (${label}) is on none of its series`);
      }
    }
    expect(problems).toEqual([]);
    // The traffic above gives these samples, so their labels were checked rather than skipped.
    for (const name of [
      "gateway_requests_total",
      "gateway_http_requests_total",
      "gateway_upstream_http_requests_total",
      "gateway_upstream_latency_seconds_bucket",
      "gateway_upstream_up",
      "gateway_cache_lookups_total",
      "gateway_refused_bodies_total",
    ])
      expect([...checked]).toContain(name);
  });
});

describe("promtool", () => {
  function promtool(...args: string[]): { code: number; output: string } {
    const result = Bun.spawnSync([promtoolPath(), ...args], { cwd: join(import.meta.dir, "..") });
    const output = `promtool ${args.join(" ")}\n${result.stdout.toString()}${result.stderr.toString()}`;
    if (result.exitCode !== 0) console.error(output);
    return { code: result.exitCode, output };
  }

  test("check rules: alerts.yml is valid", () => {
    expect(promtool("check", "rules", ALERTS).code).toBe(0);
  });

  test("test rules: every alert fires on its inputs and stays quiet on the others", () => {
    expect(promtool("test", "rules", ALERT_TESTS).code).toBe(0);
  });

  test("check config: prometheus.yml is valid", () => {
    expect(promtool("check", "config", PROMETHEUS).code).toBe(0);
  });

  test("every dashboard query is valid PromQL", () => {
    // promtool has no offline query check, but it parses a recording rule's expression; Grafana's
    // variables are put in as the values they take.
    const dir = mkdtempSync(join(tmpdir(), "cg-dashboard-"));
    try {
      const recording = queryPanels().flatMap((p) =>
        p.targets!.map((t) => ({
          record: `dashboard:panel_${p.id}_${t.refId}`,
          expr: t.expr!.replaceAll("$__rate_interval", "1m").replaceAll("$instance", ".*"),
        })),
      );
      const file = join(dir, "dashboard-rules.yml");
      // JSON is YAML.
      writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboard", rules: recording }] }));
      expect(promtool("check", "rules", file).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
