// The Sluice dashboard: a page over the job's REST endpoint (docs/rest-api.md), in the manner of Flink's web UI.
// Routes (the URL's hash): #/ the jobs; #/jobs/<id>/<tab> a job, tab overview (graph and vertices), checkpoints,
// exceptions or configuration. Everything refreshes every REFRESH_MS while the page is open. No library, no
// download: the REST server serves these files from the binary.

const REFRESH_MS = 3000;
const main = document.getElementById("main");
let timer = null;
let previous = null;  // the last GET /jobs/:id and when: records per second come from two of them
let selectedCheckpoint = null;  // the checkpoint whose subtasks the checkpoints tab shows

// ---- helpers ----------------------------------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") e.addEventListener("click", v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return e;
}

function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

async function api(path, options = {}) {
  const response = await fetch(path, options);
  const text = await response.text();
  const body = text ? JSON.parse(text) : {};
  if (!response.ok) throw new Error((body.errors || [response.statusText]).join("; "));
  return body;
}

function bytes(n) {
  if (n === undefined || n === null || n < 0) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function duration(ms) {
  if (ms === undefined || ms === null || ms < 0) return "-";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m} min ${Math.floor(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function time(ms) { return ms > 0 ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "-"; }

function number(n) { return n === undefined || n === null ? "-" : Math.round(n).toLocaleString("en"); }

function stateBadge(state) { return el("span", { class: `state ${state}` }, state); }

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { class: h.num ? "num" : null }, h.label ?? h)))),
    el("tbody", {}, rows));
}

function cell(value, num = false) { return el("td", { class: num ? "num" : null }, value); }

function message(text, error = false) { return el("div", { class: error ? "message error" : "message" }, text); }

// ---- the jobs -----------------------------------------------------------------------------------------------------

async function renderJobs() {
  const [overview, jobs] = await Promise.all([api("/overview"), api("/jobs/overview")]);
  const rows = jobs.jobs.map((j) => {
    const row = el("tr", { class: "clickable", "data-job": j.jid, onclick: () => { location.hash = `#/jobs/${j.jid}/overview`; } },
      cell(j.name), cell(j.jid), cell(stateBadge(j.state)), cell(time(j["start-time"])), cell(duration(j.duration), true),
      cell(`${j.tasks.running} / ${j.tasks.total}`, true));
    return row;
  });
  main.replaceChildren(
    el("h1", {}, "Jobs"),
    el("p", { class: "muted" },
      `${overview.taskmanagers} TaskManager(s), ${overview["slots-available"]} of ${overview["slots-total"]} slots free`),
    table(["Name", "Job id", "State", "Started", { label: "Duration", num: true }, { label: "Subtasks running", num: true }], rows));
}

// ---- a job --------------------------------------------------------------------------------------------------------

const TABS = ["overview", "checkpoints", "exceptions", "configuration"];

async function renderJob(id, tab) {
  const job = await api(`/jobs/${id}`);
  const header = el("div", {},
    el("h1", {}, job.name, " ", stateBadge(job.state)),
    el("p", { class: "muted" }, `${job.jid} · started ${time(job["start-time"])} · running for ${duration(job.duration)}`),
    actions(job),
    el("div", { id: "action-result" }),
    el("nav", { class: "tabs" },
      TABS.map((t) => el("a", { href: `#/jobs/${id}/${t}`, class: t === tab ? "active" : null, "data-tab": t }, t))));
  const body = el("div", { id: "tab" });
  const kept = document.getElementById("action-result");
  main.replaceChildren(header, body);
  if (kept) document.getElementById("action-result").replaceWith(kept);
  if (tab === "checkpoints") return renderCheckpoints(job, body);
  if (tab === "exceptions") return renderExceptions(job, body);
  if (tab === "configuration") return renderConfiguration(job, body);
  return renderOverview(job, body);
}

// Savepoint, stop and cancel, each after a confirmation; the answer shows under the buttons.
function actions(job) {
  const running = job.state === "RUNNING";
  const result = (text, error) => document.getElementById("action-result").replaceChildren(message(text, error));
  const poll = async (trigger, what) => {
    for (;;) {
      const st = await api(`/jobs/${job.jid}/savepoints/${trigger}`);
      if (st.status.id === "COMPLETED") {
        const failure = st.operation["failure-cause"];
        return failure ? result(`${what} failed: ${failure["stack-trace"]}`, true)
                       : result(`${what} completed: ${st.operation.location}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  const savepoint = async (stop) => {
    const what = stop ? "Stop with savepoint" : "Savepoint";
    const dir = prompt(`${what}: target directory (empty: execution.checkpointing.savepoint-dir)`, "");
    if (dir === null) return;
    const drain = stop && confirm("Drain the sources first (end the input, so windows and timers fire)?");
    if (stop && !confirm(`Stop job ${job.name} with a savepoint?`)) return;
    const body = stop ? { targetDirectory: dir || null, drain } : { "target-directory": dir || null };
    try {
      const r = await api(`/jobs/${job.jid}/${stop ? "stop" : "savepoints"}`,
                          { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      result(`${what} triggered (${r["request-id"]})`);
      await poll(r["request-id"], what);
    } catch (e) {
      result(`${what}: ${e.message}`, true);
    }
  };
  const cancel = async () => {
    if (!confirm(`Cancel job ${job.name}?`)) return;
    try {
      await api(`/jobs/${job.jid}?mode=cancel`, { method: "PATCH" });
      result("Cancellation requested");
    } catch (e) {
      result(`Cancel: ${e.message}`, true);
    }
  };
  const button = (label, fn, cls) => {
    const b = el("button", { class: cls, "data-action": label.toLowerCase().split(" ")[0], onclick: fn }, label);
    if (!running) b.disabled = true;
    return b;
  };
  return el("div", { class: "actions" },
    button("Savepoint", () => savepoint(false)), button("Stop with savepoint", () => savepoint(true)),
    button("Cancel", cancel, "danger"));
}

// The job graph: vertices in columns by their distance from the sources, edges with their partitioner.
function graph(job, pressure) {
  const nodes = job.plan.nodes;
  const level = new Map();
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = (n) => {
    if (level.has(n.id)) return level.get(n.id);
    level.set(n.id, 0);
    const d = (n.inputs || []).reduce((m, i) => Math.max(m, depth(byId.get(i.id)) + 1), 0);
    level.set(n.id, d);
    return d;
  };
  nodes.forEach(depth);
  const columns = [];
  for (const n of nodes) (columns[level.get(n.id)] ||= []).push(n);
  const W = 230, H = 64, GX = 90, GY = 26;
  const pos = new Map();
  columns.forEach((col, x) => col.forEach((n, y) => pos.set(n.id, { x: 20 + x * (W + GX), y: 20 + y * (H + GY) })));
  const width = 40 + columns.length * (W + GX) - GX;
  const height = 40 + Math.max(...columns.map((c) => c.length)) * (H + GY) - GY;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}` });
  for (const n of nodes) {
    for (const i of n.inputs || []) {
      const a = pos.get(i.id), b = pos.get(n.id);
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      root.append(svg("path", { d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`,
                                fill: "none", stroke: "#8a96a8", "stroke-width": 1.5 }));
      root.append(svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle", fill: "#5a6576" },
                      i.ship_strategy));
    }
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    const bp = pressure.get(n.id) || { busy: 0, ratio: 0 };
    // Flink's colours: blue when idle, red when busy; a back-pressured vertex is drawn with a black border.
    const hue = 220 - 220 * Math.min(1, bp.busy);
    const g = svg("g", { class: "vertex", "data-vertex": n.id });
    g.append(svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 6, fill: `hsl(${hue}, 70%, 88%)`,
                           stroke: bp.ratio > 0.1 ? "#000" : "#6b7686", "stroke-width": bp.ratio > 0.5 ? 3 : 1.2 }));
    const name = n.description.length > 34 ? `${n.description.slice(0, 33)}…` : n.description;
    g.append(svg("text", { x: p.x + 10, y: p.y + 20, "font-weight": 600 }, name));
    g.append(svg("text", { x: p.x + 10, y: p.y + 38 }, `parallelism ${n.parallelism}`));
    g.append(svg("text", { x: p.x + 10, y: p.y + 55, fill: "#5a6576" },
                 `busy ${Math.round(bp.busy * 100)}% · back-pressured ${Math.round(bp.ratio * 100)}%`));
    g.append(svg("title", {}, n.description));
    root.append(g);
  }
  return el("div", { id: "graph" }, root);
}

async function renderOverview(job, body) {
  const now = Date.now();
  const [pressures, watermarks] = await Promise.all([
    Promise.all(job.vertices.map((v) => api(`/jobs/${job.jid}/vertices/${v.id}/backpressure`))),
    Promise.all(job.vertices.map((v) => api(`/jobs/${job.jid}/vertices/${v.id}/watermarks`)))]);
  const pressure = new Map();
  job.vertices.forEach((v, i) => {
    const subs = pressures[i].subtasks;
    const avg = (f) => (subs.length ? subs.reduce((s, x) => s + x[f], 0) / subs.length : 0);
    pressure.set(v.id, { busy: avg("busyRatio"), ratio: Math.max(0, ...subs.map((s) => s.ratio)),
                         level: pressures[i]["backpressure-level"] });
  });
  const last = previous && previous.jid === job.jid ? previous : null;
  const rate = (v, key) => {
    const before = last && last.vertices.find((p) => p.id === v.id);
    if (!before) return null;
    return ((v.metrics[key] - before.metrics[key]) * 1000) / Math.max(1, now - last.at);
  };
  const lowWatermark = (i) => {
    const inputs = watermarks[i].filter((w) => w.id.endsWith("currentInputWatermark")).map((w) => BigInt(w.value));
    if (!inputs.length) return "no input";
    const low = inputs.reduce((a, b) => (a < b ? a : b));
    return low <= -9223372036854775807n ? "no watermark" : time(Number(low));
  };
  const rows = job.vertices.map((v, i) => el("tr", { "data-vertex": v.id },
    cell(v.name), cell(v.parallelism, true),
    cell(number(v.metrics["read-records"]), true), cell(number(rate(v, "read-records")), true),
    cell(number(v.metrics["write-records"]), true), cell(number(rate(v, "write-records")), true),
    cell(bytes(v.metrics["read-bytes"]), true), cell(bytes(v.metrics["write-bytes"]), true),
    cell(`${Math.round(pressure.get(v.id).busy * 100)}%`, true),
    el("td", { class: `level-${pressure.get(v.id).level}` }, pressure.get(v.id).level),
    cell(lowWatermark(i))));
  previous = { jid: job.jid, at: now, vertices: job.vertices };
  body.replaceChildren(
    graph(job, pressure),
    table(["Vertex", { label: "Parallelism", num: true }, { label: "Records in", num: true }, { label: "In/s", num: true },
           { label: "Records out", num: true }, { label: "Out/s", num: true }, { label: "Bytes in", num: true },
           { label: "Bytes out", num: true }, { label: "Busy", num: true }, "Back-pressure", "Low watermark"], rows),
    el("p", { class: "muted" }, "Records per second: the change between two refreshes; busy and back-pressure: the ",
       "last minute's averages of the task metrics (docs/observability.md)."));
}

async function renderCheckpoints(job, body) {
  let stats;
  try {
    stats = await api(`/jobs/${job.jid}/checkpoints`);
  } catch (e) {
    return body.replaceChildren(message(e.message));
  }
  const config = await api(`/jobs/${job.jid}/checkpoints/config`).catch(() => null);
  const c = stats.counts;
  const restored = stats.latest.restored;
  const rows = stats.history.map((h) => el("tr", { class: "clickable", "data-checkpoint": h.id,
                                                   onclick: () => { selectedCheckpoint = h.id; showCheckpoint(job, h.id); } },
    cell(h.id, true), cell(h.status), cell(h.checkpoint_type), cell(time(h.trigger_timestamp)),
    cell(duration(h.end_to_end_duration), true), cell(bytes(h.checkpointed_size), true), cell(bytes(h.state_size), true),
    cell(bytes(h.persisted_data), true), cell(`${h.num_acknowledged_subtasks} / ${h.num_subtasks}`, true),
    cell(h.external_path || h.failure_message || "")));
  const s = stats.summary;
  body.replaceChildren(
    el("p", {}, `Completed ${c.completed} · failed ${c.failed} · in progress ${c.in_progress} · restored ${c.restored}`,
       restored ? ` · restored from checkpoint ${restored.id} (${restored.external_path})` : ""),
    config ? el("p", { class: "muted" }, `${config.mode}, every ${duration(config.interval)}, timeout ${duration(config.timeout)}, `,
                `${config.state_backend} on ${config.checkpoint_storage}${config.unaligned_checkpoints ? ", unaligned" : ""}`) : "",
    el("h2", {}, "History"),
    table([{ label: "Id", num: true }, "Status", "Type", "Triggered", { label: "Duration", num: true },
           { label: "Checkpointed", num: true }, { label: "Full size", num: true }, { label: "Persisted", num: true },
           { label: "Acknowledged", num: true }, "Path or failure"], rows),
    el("div", { id: "checkpoint-detail" }),
    el("h2", {}, "Summary (the latest 1000 completed checkpoints)"),
    table(["", { label: "min", num: true }, { label: "avg", num: true }, { label: "p99", num: true }, { label: "max", num: true }],
      [["End to end", s.end_to_end_duration, duration], ["Checkpointed size", s.checkpointed_size, bytes],
       ["Full size", s.state_size, bytes], ["Alignment", s.alignment_duration, duration],
       ["Start delay", s.start_delay, duration]].map(([name, v, f]) =>
        el("tr", {}, cell(name), cell(f(v.min), true), cell(f(Math.round(v.avg)), true), cell(f(v.p99), true),
           cell(f(v.max), true)))));
  if (selectedCheckpoint !== null) await showCheckpoint(job, selectedCheckpoint);
}

async function showCheckpoint(job, id) {
  const target = document.getElementById("checkpoint-detail");
  const parts = await Promise.all(job.vertices.map((v) =>
    api(`/jobs/${job.jid}/checkpoints/details/${id}/subtasks/${v.id}`).then((d) => [v, d]).catch(() => [v, null])));
  const rows = [];
  for (const [v, d] of parts) {
    if (!d) continue;
    for (const s of d.subtasks) {
      rows.push(el("tr", {}, cell(v.name), cell(s.index, true), cell(s.status),
        cell(duration(s.end_to_end_duration), true), cell(bytes(s.checkpointed_size), true), cell(bytes(s.state_size), true),
        cell(s.checkpoint ? `${s.checkpoint.sync} / ${s.checkpoint.async} ms` : "-", true),
        cell(s.alignment ? duration(s.alignment.duration) : "-", true), cell(duration(s.start_delay), true),
        cell(s.unaligned_checkpoint ? "yes" : "")));
    }
  }
  target.replaceChildren(el("h2", {}, `Checkpoint ${id}, per subtask`),
    table(["Vertex", { label: "Subtask", num: true }, "Status", { label: "Duration", num: true },
           { label: "Checkpointed", num: true }, { label: "Full size", num: true }, { label: "Sync / async", num: true },
           { label: "Alignment", num: true }, { label: "Start delay", num: true }, "Unaligned"], rows));
}

async function renderExceptions(job, body) {
  const x = await api(`/jobs/${job.jid}/exceptions`);
  const entries = x.exceptionHistory.entries;
  if (!entries.length) return body.replaceChildren(message("No failure: the job has not restarted."));
  body.replaceChildren(
    x.exceptionHistory.truncated ? message("Older failures are not kept (the latest 16 are).") : "",
    table(["Time", "Exception", "Task", "Location", "Message"], entries.map((e) => el("tr", {},
      cell(time(e.timestamp)), cell(e.exceptionName), cell(e.taskName || "-"),
      cell(e.location ? `${e.location} (${e.taskManagerId})` : "-"), el("td", {}, el("pre", {}, e.stacktrace))))));
}

async function renderConfiguration(job, body) {
  const config = await api(`/jobs/${job.jid}/jobmanager/config`);
  body.replaceChildren(
    el("p", { class: "muted" }, "The keys the job set (config file, -D, the program); secrets are redacted."),
    table(["Key", "Value"], config.map((e) => el("tr", {}, cell(e.key), cell(e.value)))));
}

// ---- routing and refresh -------------------------------------------------------------------------------------------

async function render() {
  clearTimeout(timer);
  const [, page, id, tab] = location.hash.split("/");
  try {
    if (page === "jobs" && id) await renderJob(id, TABS.includes(tab) ? tab : "overview");
    else await renderJobs();
    document.getElementById("refreshed").textContent = `refreshed ${new Date().toLocaleTimeString("en-GB")}`;
  } catch (e) {
    main.replaceChildren(message(`The REST endpoint did not answer: ${e.message}`, true));
  }
  timer = setTimeout(render, REFRESH_MS);
}

window.addEventListener("hashchange", () => { previous = null; selectedCheckpoint = null; render(); });
api("/config").then((c) => { document.getElementById("version").textContent = `version ${c["sluice-version"]}`; })
  .catch(() => {});
render();
