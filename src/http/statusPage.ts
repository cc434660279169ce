/**
 * The status page (GET /status): one HTML document with its style and script inline, no external asset, so
 * it works where the service runs with nothing else installed. The script reads /status.json every second
 * (http/status.ts) and draws with the DOM and inline SVG; values are written as text, never as markup.
 * The Content-Security-Policy allows this script by its hash and nothing else.
 */
import { createHash } from "node:crypto";

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1d2330; --muted: #6b7385; --line: #e3e6ec;
  --ok: #1f9d55; --refused: #d69e2e; --node: #805ad5; --failed: #e53e3e; --memory: #2b6cb0; --disk: #38a3a5; --miss: #c05621; }
@media (prefers-color-scheme: dark) { :root { --bg: #12151b; --card: #1b2029; --fg: #e6e9ef; --muted: #98a1b3; --line: #2c3340; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: baseline; padding: 12px 16px; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 18px; margin: 0; }
.badge { padding: 1px 8px; border-radius: 10px; font-weight: 600; color: #fff; background: var(--muted); }
.badge.ok, .badge.closed { background: var(--ok); } .badge.degraded, .badge.open, .badge.down { background: var(--failed); }
.muted { color: var(--muted); }
main { display: grid; gap: 12px; padding: 12px; grid-template-columns: repeat(auto-fit, minmax(min(100%, 360px), 1fr)); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-width: 0; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0 0 8px; }
.big { font-size: 32px; font-weight: 650; font-variant-numeric: tabular-nums; }
.figures { display: flex; flex-wrap: wrap; gap: 6px 20px; margin: 4px 0 8px; }
.figures div span { display: block; font-size: 12px; color: var(--muted); }
.figures div b { font-size: 17px; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 3px 6px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
svg.chart { width: 100%; height: 110px; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.bar { height: 8px; background: var(--line); border-radius: 4px; overflow: hidden; margin: 2px 0 8px; }
.bar div { height: 100%; background: var(--memory); }
#stale { display: none; color: var(--failed); font-weight: 600; }
`;

const BODY = `
<header>
  <h1>chain-gateway</h1>
  <span id="chain" class="muted"></span>
  <span id="status" class="badge">…</span>
  <span class="muted">up <span id="uptime">–</span></span>
  <span class="muted">RSS <span id="rss">–</span></span>
  <span id="stale">not updating</span>
  <span class="muted" id="updated"></span>
</header>
<main>
  <section>
    <h2>Head</h2>
    <div class="big" id="head-number">–</div>
    <div class="figures">
      <div><span>age</span><b id="head-age">–</b></div>
      <div><span>finalized</span><b id="head-finalized">–</b></div>
      <div id="head-node-final" hidden><span id="head-node-final-tag">node final</span><b id="head-node-final-number">–</b></div>
    </div>
  </section>
  <section>
    <h2>Requests</h2>
    <div class="figures"><div><span>per second (last 5 s)</span><b id="rps">–</b></div></div>
    <svg class="chart" id="requests-chart" viewBox="0 0 600 110" preserveAspectRatio="none" role="img" aria-label="requests per second by outcome"></svg>
    <div class="legend" id="requests-legend"></div>
  </section>
  <section>
    <h2>Cache</h2>
    <div class="figures">
      <div><span>memory hits</span><b id="hit-memory">–</b></div>
      <div><span>disk hits</span><b id="hit-disk">–</b></div>
      <div><span>to the node</span><b id="hit-miss">–</b></div>
      <div><span>lookups, last minute</span><b id="lookups">–</b></div>
    </div>
    <svg class="chart" id="cache-chart" viewBox="0 0 600 110" preserveAspectRatio="none" role="img" aria-label="share of lookups by tier"></svg>
    <div class="legend" id="cache-legend"></div>
    <div style="margin-top:8px"><span class="muted">memory</span> <span id="memory-usage"></span><div class="bar"><div id="memory-bar"></div></div>
    <span class="muted">disk</span> <span id="disk-usage"></span><div class="bar"><div id="disk-bar"></div></div></div>
  </section>
  <section class="wide">
    <h2>Upstreams</h2>
    <div class="scroll"><table>
      <thead><tr><th>upstream</th><th>circuit</th><th>head</th><th>behind</th><th>pushed heads</th><th>p50</th><th>p99</th><th>requests (1 min)</th><th>errors (1 min)</th><th>batch limit</th></tr></thead>
      <tbody id="upstreams"></tbody>
    </table></div>
  </section>
  <section id="indexer-card">
    <h2>Indexer</h2>
    <div class="figures">
      <div><span>state</span><b id="indexer-state">–</b></div>
      <div><span>last block</span><b id="indexer-last">–</b></div>
      <div><span>lag</span><b id="indexer-lag">–</b></div>
      <div><span>blocks/s</span><b id="indexer-rate">–</b></div>
      <div><span>ETA</span><b id="indexer-eta">–</b></div>
    </div>
    <div class="bar"><div id="indexer-bar"></div></div>
  </section>
  <section>
    <h2>Database</h2>
    <div class="figures">
      <div><span>state</span><b id="db-status">–</b></div>
      <div><span>ping</span><b id="db-ping">–</b></div>
      <div><span>query p50 (1 min)</span><b id="db-p50">–</b></div>
      <div><span>query p99 (1 min)</span><b id="db-p99">–</b></div>
    </div>
  </section>
  <section id="webhooks-card">
    <h2>Webhooks</h2>
    <div class="figures">
      <div><span>pending</span><b id="webhooks-pending">–</b></div>
      <div><span>oldest pending</span><b id="webhooks-oldest">–</b></div>
      <div><span>failing endpoints</span><b id="webhooks-failing">–</b></div>
      <div><span>delivered (1 min)</span><b id="webhooks-delivered">–</b></div>
      <div><span>failed attempts (1 min)</span><b id="webhooks-failed">–</b></div>
      <div><span>dropped (1 min)</span><b id="webhooks-dropped">–</b></div>
    </div>
  </section>
  <section>
    <h2>WebSocket</h2>
    <div class="figures">
      <div><span>connections</span><b id="ws-connections">–</b></div>
      <div><span>subscriptions</span><b id="ws-subscriptions">–</b></div>
    </div>
  </section>
  <section class="wide">
    <h2>Operations (req/s over 5 s; answers in the last minute by outcome)</h2>
    <div class="scroll"><table>
      <thead><tr><th>operation</th><th>req/s</th><th>outcomes (1 min)</th></tr></thead>
      <tbody id="operations"></tbody>
    </table></div>
  </section>
</main>
`;

const SCRIPT = `
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const num = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
const pct = (r) => (r === null || r === undefined ? "–" : (r * 100).toFixed(1) + "%");
const msText = (v) => (v === null || v === undefined ? "–" : v < 10 ? v.toFixed(2) + " ms" : Math.round(v) + " ms");
const bytes = (b) => {
  if (b === null || b === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
  return (i === 0 ? b : b.toFixed(1)) + " " + units[i];
};
const duration = (s) => {
  if (s === null || s === undefined) return "–";
  if (s < 120) return s + " s";
  if (s < 7200) return Math.round(s / 60) + " min";
  if (s < 172800) return (s / 3600).toFixed(1) + " h";
  return (s / 86400).toFixed(1) + " d";
};
const text = (id, value) => { const el = $(id); if (el.textContent !== value) el.textContent = value; };
const REQUEST_GROUPS = [["ok", "answered"], ["refused", "refused (client)"], ["node", "node error"], ["failed", "failed"]];
const CACHE_GROUPS = [["memory", "memory"], ["disk", "disk"], ["miss", "node"]];

function legend(id, groups) {
  const el = $(id);
  if (el.childElementCount) return;
  for (const [key, label] of groups) {
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = "var(--" + key + ")";
    item.append(swatch, label);
    el.append(item);
  }
}

/** Stacked areas, one layer per group; share: each point scaled to 100%. */
function chart(id, layers, share) {
  const svg = $(id);
  const W = 600, H = 110, n = layers[0][1].length;
  svg.replaceChildren();
  if (n < 2) return;
  const totals = layers[0][1].map((_, i) => layers.reduce((sum, [, values]) => sum + values[i], 0));
  const max = share ? 1 : Math.max(1, ...totals);
  const x = (i) => (i * W) / (n - 1);
  const base = new Array(n).fill(0);
  for (const [key, values] of layers) {
    const top = values.map((v, i) => base[i] + (share ? (totals[i] ? v / totals[i] : 0) : v));
    let d = "M" + x(0) + "," + (H - (top[0] / max) * H);
    for (let i = 1; i < n; i++) d += "L" + x(i) + "," + (H - (top[i] / max) * H);
    for (let i = n - 1; i >= 0; i--) d += "L" + x(i) + "," + (H - (base[i] / max) * H);
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d + "Z");
    path.setAttribute("fill", "var(--" + key + ")");
    path.setAttribute("fill-opacity", "0.85");
    svg.append(path);
    for (let i = 0; i < n; i++) base[i] = top[i];
  }
  const label = document.createElementNS(SVG, "text");
  label.setAttribute("x", "4");
  label.setAttribute("y", "12");
  label.setAttribute("font-size", "11");
  label.setAttribute("fill", "var(--muted)");
  label.textContent = share ? "100%" : num(Math.round(max)) + "/s";
  svg.append(label);
}

function cell(row, value, className) {
  const td = document.createElement("td");
  td.textContent = value;
  if (className) { const b = document.createElement("span"); b.className = className; b.textContent = value; td.replaceChildren(b); }
  row.append(td);
}

function usage(id, used, budget) {
  text(id + "-usage", used === null ? "off" : bytes(used) + " of " + bytes(budget));
  $(id + "-bar").style.width = used === null || !budget ? "0" : Math.min(100, (used / budget) * 100) + "%";
}

function render(s) {
  text("chain", s.chain + " · chain id " + s.chainId);
  const status = $("status");
  status.textContent = s.status;
  status.className = "badge " + s.status;
  text("uptime", duration(s.uptimeSeconds));
  text("rss", bytes(s.rssBytes));
  text("updated", "updated " + new Date(s.at).toLocaleTimeString());
  text("head-number", num(s.head.number));
  text("head-age", duration(s.head.ageSeconds));
  text("head-finalized", num(s.head.finalized));
  // The nodes' own final block where they name one, under their name for it (TRON: solidified).
  $("head-node-final").hidden = s.head.nodeFinal === null;
  if (s.head.nodeFinal) {
    text("head-node-final-tag", s.head.nodeFinal.tag);
    text("head-node-final-number", num(s.head.nodeFinal.number));
  }
  text("rps", num(s.requests.perSecond));
  legend("requests-legend", REQUEST_GROUPS);
  chart("requests-chart", REQUEST_GROUPS.map(([k]) => [k, s.series.requests[k]]), false);
  const minute = s.cache.lastMinute;
  text("hit-memory", pct(minute.memory));
  text("hit-disk", pct(minute.disk));
  text("hit-miss", pct(minute.miss));
  text("lookups", num(minute.lookups));
  legend("cache-legend", CACHE_GROUPS);
  chart("cache-chart", CACHE_GROUPS.map(([k]) => [k, s.series.cache[k]]), true);
  usage("memory", s.cache.memory.bytes, s.cache.memory.budgetBytes);
  usage("disk", s.cache.disk ? s.cache.disk.usedBytes : null, s.cache.disk ? s.cache.disk.budgetBytes : 0);

  const upstreams = $("upstreams");
  upstreams.replaceChildren();
  for (const u of s.upstreams) {
    const row = document.createElement("tr");
    row.dataset.upstream = u.name;
    cell(row, u.name);
    cell(row, u.state === "closed" ? "closed" : "open", "badge " + u.state);
    cell(row, num(u.headBlockNumber));
    cell(row, num(u.behind));
    cell(row, u.pushing ? "yes" : "no");
    cell(row, msText(u.lastMinute.p50Ms));
    cell(row, msText(u.lastMinute.p99Ms));
    cell(row, num(u.lastMinute.requests));
    cell(row, num(u.lastMinute.errors));
    cell(row, num(u.batchLimit));
    upstreams.append(row);
  }

  const ix = s.indexer;
  // No index on this chain's family: no card (rather than one that reads "off").
  $("indexer-card").hidden = ix === null;
  if (ix !== null) renderIndexer(ix);

  text("db-status", s.database.status + (s.database.embedded ? " (embedded)" : ""));
  text("db-ping", msText(s.database.pingMs));
  text("db-p50", msText(s.database.lastMinute.p50Ms));
  text("db-p99", msText(s.database.lastMinute.p99Ms));

  const wh = s.webhooks;
  text("webhooks-pending", num(wh.pending));
  text("webhooks-oldest", wh.pending > 0 ? duration(wh.oldestPendingSeconds) : "–");
  text("webhooks-failing", num(wh.failingEndpoints));
  text("webhooks-delivered", num(wh.lastMinute.delivered));
  text("webhooks-failed", num(wh.lastMinute.failedAttempts));
  text("webhooks-dropped", num(wh.lastMinute.dropped));

  text("ws-connections", num(s.websocket.connections));
  const kinds = Object.entries(s.websocket.subscriptions).filter(([, n]) => n > 0);
  text("ws-subscriptions", kinds.length ? kinds.map(([k, n]) => k + " " + num(n)).join(", ") : "0");

  const operations = $("operations");
  operations.replaceChildren();
  for (const op of s.requests.operations) {
    const row = document.createElement("tr");
    cell(row, op.operation);
    cell(row, num(op.perSecond));
    cell(row, Object.entries(op.lastMinute).map(([o, n]) => o + " " + num(n)).join(", ") || "–");
    operations.append(row);
  }
  document.body.dataset.rendered = String(s.at);
}

function renderIndexer(ix) {
  text("indexer-state", ix.leading ? (ix.backfilling ? "backfilling" : "following the head") : ix.lastBlockNumber === null ? (ix.enabled ? "starting" : "off") : "standby (another instance writes)");
  text("indexer-last", num(ix.lastBlockNumber));
  text("indexer-lag", num(ix.lag));
  text("indexer-rate", num(ix.blocksPerSecond));
  text("indexer-eta", ix.backfilling ? duration(ix.etaSeconds) : "–");
  const total = ix.lastBlockNumber !== null && ix.lag !== null ? ix.lastBlockNumber + ix.lag : 0;
  $("indexer-bar").style.width = total > 0 ? Math.min(100, (ix.lastBlockNumber / total) * 100) + "%" : "0";
}

async function tick() {
  try {
    const response = await fetch("status.json", { cache: "no-store" });
    if (!response.ok) throw new Error("status " + response.status);
    render(await response.json());
    $("stale").style.display = "none";
  } catch {
    $("stale").style.display = "inline";
  }
  setTimeout(tick, 1000);
}
tick();
`;

const scriptHash = `sha256-${createHash("sha256").update(SCRIPT).digest("base64")}`;

export const STATUS_PAGE = {
  html: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chain-gateway status</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>${BODY}<script>${SCRIPT}</script>
</body>
</html>
`,
  scriptHash,
};
