/// The inspector's page: one HTML document with its CSS and JavaScript inline, embedded in the
/// binary (no CDN, no network). It reads the JSON endpoints of ``InspectorRoutes`` and refetches
/// them on each `update` server-sent event; charts are SVG drawn by its own few lines.
///
/// Element ids and `data-` attributes are stable: the browser test finds the live state's
/// leaves by `data-path`, actions by `data-seq`, diff rows by `data-path`.
enum InspectorPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ReactorBus inspector</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f5f6f8; }
header { background: #1d2330; color: #fff; padding: 10px 16px; display: flex; gap: 24px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; }
header .fact b { font-variant-numeric: tabular-nums; }
main { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; padding: 12px; }
section { background: #fff; border: 1px solid #d8dbe2; border-radius: 6px; padding: 10px 12px; min-width: 0; }
section h2 { font-size: 14px; margin: 0 0 8px; }
.tree { font-family: ui-monospace, monospace; font-size: 13px; overflow: auto; max-height: 360px; }
.tree details { margin-left: 14px; }
.tree summary { cursor: pointer; }
.tree .row { margin-left: 14px; }
.key { color: #7a3e9d; }
.leaf { color: #0b5cad; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eceef2; }
tr.action { cursor: pointer; }
tr.action:hover, tr.action.chosen { background: #eef3fb; }
#actions-box { max-height: 360px; overflow: auto; }
.mutation, .diff-row { font-family: ui-monospace, monospace; font-size: 13px; }
.before { color: #b42318; } .after { color: #067647; }
svg { width: 100%; height: 140px; background: #fbfbfc; border: 1px solid #eceef2; }
.muted { color: #6b7280; }
.wide { grid-column: 1 / span 2; }
#tt-slider { width: 100%; }
.error { color: #b42318; }
</style>
</head>
<body>
<header>
  <h1>ReactorBus inspector</h1>
  <span class="fact">app <b id="app">?</b></span>
  <span class="fact">version <b id="live-version">?</b></span>
  <span class="fact">last action <b id="live-action-seq">?</b></span>
  <span class="fact">workers <b id="workers">?</b></span>
  <span class="fact">observers <b id="observers">?</b></span>
  <span class="fact">open jobs <b id="open-jobs">?</b></span>
  <span class="fact muted" id="connection">connecting</span>
</header>
<main>
  <section>
    <h2>Live state</h2>
    <div id="live-state" class="tree muted">waiting for the authority's snapshot</div>
  </section>
  <section>
    <h2>Time travel</h2>
    <input type="range" id="tt-slider" min="0" max="0" value="0">
    <div>
      <label>version <input type="number" id="tt-version" min="0" value="0" style="width: 9em"></label>
      <button id="tt-go">show</button>
      <span id="tt-info" class="muted"></span>
    </div>
    <div id="tt-state" class="tree"></div>
  </section>
  <section>
    <h2>Action log <span class="muted" id="actions-note"></span></h2>
    <div id="actions-box">
      <table>
        <thead><tr><th>action</th><th>versions</th><th>sync</th><th>jobs</th><th>seen over</th><th>action</th></tr></thead>
        <tbody id="actions"></tbody>
      </table>
    </div>
  </section>
  <section>
    <h2>Action detail</h2>
    <div id="action-detail" class="muted">choose an action in the log</div>
  </section>
  <section>
    <h2>Actions applied per second</h2>
    <svg id="chart-applied" viewBox="0 0 600 140" preserveAspectRatio="none"></svg>
  </section>
  <section>
    <h2>Mean ack latency (ms)</h2>
    <svg id="chart-latency" viewBox="0 0 600 140" preserveAspectRatio="none"></svg>
  </section>
  <section class="wide">
    <h2>Authority</h2>
    <div id="facts" class="muted"></div>
  </section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let chosenAction = null;
let followSlider = true;

async function getJSON(path) {
  const response = await fetch(path, { cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function text(tag, content, cls) {
  const element = document.createElement(tag);
  element.textContent = content;
  if (cls) element.className = cls;
  return element;
}

// An expandable tree of a JSON value; leaves carry their path in data-path.
function tree(value, path, name, open) {
  const isObject = value !== null && typeof value === "object";
  if (!isObject) {
    const row = document.createElement("div");
    row.className = "row";
    if (name !== null) { row.append(text("span", name, "key"), ": "); }
    const leaf = text("span", JSON.stringify(value), "leaf");
    leaf.dataset.path = path;
    row.append(leaf);
    return row;
  }
  const details = document.createElement("details");
  details.open = open;
  details.dataset.path = path;
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  const summary = document.createElement("summary");
  if (name !== null) summary.append(text("span", name, "key"), ": ");
  summary.append(Array.isArray(value) ? `[${keys.length}]` : `{${keys.length}}`);
  details.append(summary);
  for (const key of keys) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : (path ? `${path}.${key}` : String(key));
    details.append(tree(value[key], childPath, String(key), keys.length <= 20));
  }
  return details;
}

function showTree(container, value) {
  // Keep which nodes were open across refreshes.
  const open = new Set([...container.querySelectorAll("details[open]")].map((d) => d.dataset.path));
  const fresh = tree(value, "", null, true);
  if (open.size) for (const d of fresh.querySelectorAll("details")) d.open = open.has(d.dataset.path) || d.open;
  container.replaceChildren(fresh);
  container.classList.remove("muted");
}

function chart(svg, points, key) {
  const values = points.map((p) => p[key]).filter((v) => v !== null && v !== undefined);
  svg.replaceChildren();
  const ns = "http://www.w3.org/2000/svg";
  if (points.length < 2 || values.length === 0) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", "10"); t.setAttribute("y", "20"); t.textContent = "collecting samples";
    svg.append(t); return;
  }
  const max = Math.max(...values, 1e-9);
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const x = (t) => 40 + 550 * (t - t0) / Math.max(1, t1 - t0);
  const y = (v) => 130 - 115 * v / max;
  const path = points.filter((p) => p[key] !== null).map((p, i) => `${i ? "L" : "M"}${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}`).join(" ");
  const line = document.createElementNS(ns, "path");
  line.setAttribute("d", path); line.setAttribute("fill", "none"); line.setAttribute("stroke", "#0b5cad"); line.setAttribute("stroke-width", "2");
  const label = document.createElementNS(ns, "text");
  label.setAttribute("x", "4"); label.setAttribute("y", "14"); label.setAttribute("font-size", "11");
  label.textContent = `max ${max.toFixed(max < 10 ? 2 : 0)}, last ${(values[values.length - 1]).toFixed(2)}; ${Math.round((t1 - t0) / 1000)} s`;
  svg.append(line, label);
  // A dot per sample too, so that a lone value (one poll with acks) shows.
  for (const p of points) {
    if (p[key] === null || p[key] === undefined) continue;
    const dot = document.createElementNS(ns, "circle");
    dot.setAttribute("cx", x(p.t).toFixed(1)); dot.setAttribute("cy", y(p[key]).toFixed(1)); dot.setAttribute("r", "2.5"); dot.setAttribute("fill", "#0b5cad");
    svg.append(dot);
  }
}

async function refreshSummary() {
  const s = await getJSON("/api/summary");
  $("app").textContent = s.app;
  $("live-version").textContent = s.version ?? "?";
  $("live-action-seq").textContent = s.action_seq ?? "?";
  $("workers").textContent = s.workers ?? "?";
  $("observers").textContent = s.observers ?? "?";
  $("open-jobs").textContent = s.open_jobs ?? "?";
  const slider = $("tt-slider");
  slider.min = s.data ? 0 : (s.oldest_version ?? 0);
  slider.max = s.version ?? 0;
  if (followSlider) { slider.value = slider.max; }
  $("facts").textContent = `feed ${s.feed ?? "none"} · actions ${s.actions_endpoint ?? "none"} · data ${s.data ?? "none"} · ` +
    `kept ${s.kept.mutations} mutations, ${s.kept.actions} actions, ${s.kept.checkpoints} states (limits ${s.limits.versions} versions, ` +
    `${s.limits.actions} actions) · snapshot refetches ${s.refetches} · dropped feed messages ${s.malformed} · clients ${s.clients ?? "?"} · ` +
    `queued jobs ${s.queued_jobs ?? "?"} · quarantined workers ${s.quarantined_workers ?? "?"}`;
}

async function refreshState() {
  try {
    const live = await getJSON("/api/state");
    $("live-state").dataset.version = live.version;
    showTree($("live-state"), live.state);
  } catch (error) { /* no snapshot yet */ }
}

async function refreshActions() {
  const actions = await getJSON("/api/actions");
  const rows = actions.map((a) => {
    const row = document.createElement("tr");
    row.className = "action" + (a.action_seq === chosenAction ? " chosen" : "");
    row.dataset.seq = a.action_seq;
    const versions = a.first_version === null ? "–" : (a.first_version === a.last_version ? `${a.first_version}` : `${a.first_version}–${a.last_version}`);
    row.append(text("td", `#${a.action_seq}`), text("td", versions), text("td", a.sync_mutations), text("td", a.jobs),
      text("td", `${a.duration_ms.toFixed(0)} ms`), text("td", a.action === null ? "" : JSON.stringify(a.action)));
    row.addEventListener("click", () => showAction(a.action_seq));
    return row;
  });
  $("actions").replaceChildren(...rows);
  $("actions-note").textContent = `(${actions.length} newest)`;
}

function mutationLine(m) {
  const line = text("div", `v${m.version} ${m.origin} #${m.index} ${JSON.stringify(m.mutation)}`, "mutation");
  line.dataset.version = m.version;
  return line;
}

async function showAction(seq) {
  chosenAction = seq;
  for (const row of document.querySelectorAll("tr.action")) row.classList.toggle("chosen", Number(row.dataset.seq) === seq);
  const box = $("action-detail");
  try {
    const a = await getJSON(`/api/actions/${seq}`);
    box.classList.remove("muted");
    const parts = [text("div", `action #${a.action_seq}` + (a.action === null ? "" : ` ${JSON.stringify(a.action)}`), "title")];
    parts.push(text("h3", "sync mutations"));
    const sync = document.createElement("div"); sync.id = "detail-sync";
    sync.append(...(a.mutations.length ? a.mutations.map(mutationLine) : [text("div", "none", "muted")]));
    parts.push(sync);
    parts.push(text("h3", "jobs"));
    const jobs = document.createElement("div"); jobs.id = "detail-jobs";
    if (!a.jobs.length) jobs.append(text("div", "none", "muted"));
    for (const job of a.jobs) {
      const block = document.createElement("div");
      block.className = "job"; block.dataset.job = job.job;
      const tries = job.dispatches === null ? "dispatch not seen" : `dispatch ${job.dispatches}` +
        (job.attempts === null ? "" : `, ${job.attempts} attempt(s) on the worker`);
      block.append(text("div", `job ${job.job}: worker ${job.worker ?? "unknown"}, ${tries}, ` +
        `${job.outcome ?? "running"}` + (job.duration_ms === null ? "" : ` in ${job.duration_ms.toFixed(1)} ms`) +
        `, last mutation seen ${job.seen_after_ms.toFixed(0)} ms after the action`));
      block.append(...job.mutations.map(mutationLine));
      jobs.append(block);
    }
    parts.push(jobs);
    parts.push(text("h3", a.before === null ? "diff (the state before it is no longer kept)" : `diff from version ${a.before.version}`));
    const diff = document.createElement("div"); diff.id = "detail-diff";
    for (const change of a.diff) {
      const row = document.createElement("div");
      row.className = "diff-row"; row.dataset.path = change.path;
      row.append(text("span", change.path, "key"), ": ", text("span", JSON.stringify(change.before), "before"), " → ", text("span", JSON.stringify(change.after), "after"));
      diff.append(row);
    }
    if (!a.diff.length) diff.append(text("div", "no change", "muted"));
    parts.push(diff);
    box.replaceChildren(...parts);
  } catch (error) {
    box.replaceChildren(text("div", String(error.message || error), "error"));
  }
}

async function travel(version) {
  $("tt-version").value = version;
  try {
    const s = await getJSON(`/api/state/${version}`);
    $("tt-info").textContent = `version ${s.version}, last action ${s.action_seq} (from ${s.source})`;
    $("tt-info").className = "muted";
    $("tt-state").dataset.version = s.version;
    showTree($("tt-state"), s.state);
  } catch (error) {
    $("tt-info").textContent = String(error.message || error);
    $("tt-info").className = "error";
    $("tt-state").replaceChildren();
    delete $("tt-state").dataset.version;
  }
}

async function refreshStats() {
  const stats = await getJSON("/api/stats");
  chart($("chart-applied"), stats.points, "applied_per_second");
  chart($("chart-latency"), stats.points, "ack_latency_ms");
}

let refreshing = false, again = false;
async function refresh() {
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    await Promise.all([refreshSummary(), refreshState(), refreshActions(), refreshStats()]);
  } catch (error) { $("connection").textContent = String(error.message || error); }
  // At most four refreshes a second, however fast the cluster goes.
  setTimeout(() => { refreshing = false; if (again) { again = false; refresh(); } }, 250);
}

$("tt-slider").addEventListener("input", (e) => { followSlider = Number(e.target.value) === Number(e.target.max); travel(e.target.value); });
$("tt-go").addEventListener("click", () => { followSlider = false; travel($("tt-version").value); });
$("tt-version").addEventListener("keydown", (e) => { if (e.key === "Enter") { followSlider = false; travel(e.target.value); } });

const events = new EventSource("/api/events");
events.addEventListener("update", () => { $("connection").textContent = "live"; refresh(); });
events.onerror = () => { $("connection").textContent = "reconnecting"; };
refresh();
</script>
</body>
</html>
"""#
}
