// Drives the web dashboard of a running job in Debian's Chromium with Playwright's library (dashboard_browser_it):
// the jobs page lists the job; its page draws one graph node per vertex of GET /jobs/:jobid; the checkpoint table
// agrees with GET /jobs/:jobid/checkpoints/details/:id for every row; a savepoint triggered from the page is on
// disk; the other tabs load; no page shows a console error. Screenshots of each page go to SCREENSHOT_DIR.
// Usage: node dashboard_test.mjs NODE_MODULES URL JOB_ID SAVEPOINT_DIR SCREENSHOT_DIR
import { createRequire } from "node:module";
import { existsSync, mkdirSync } from "node:fs";

const [nodeModules, url, jobId, savepointDir, shots] = process.argv.slice(2);
const { chromium } = createRequire(`${nodeModules}/`)("playwright-core");
mkdirSync(shots, { recursive: true });

const fail = (why) => { throw new Error(why); };
const rest = async (path) => {
  const r = await fetch(`${url}${path}`);
  if (!r.ok) fail(`GET ${path}: HTTP ${r.status}`);
  return r.json();
};

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  // Without the background-networking flags Chromium keeps dialling Google's hosts, which this network refuses.
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()} (${m.location().url})`); });
  page.on("pageerror", (e) => errors.push(`page: ${e.message}`));

  // The jobs.
  await page.goto(`${url}/`);
  await page.waitForSelector(`tr[data-job="${jobId}"]`, { timeout: 20000 });
  await page.screenshot({ path: `${shots}/jobs.png`, fullPage: true });

  // The job: its graph has a node per vertex, its vertex table a row per vertex.
  await page.click(`tr[data-job="${jobId}"]`);
  await page.waitForSelector("#graph g.vertex", { timeout: 20000 });
  const job = await rest(`/jobs/${jobId}`);
  const nodes = await page.locator("#graph g.vertex").count();
  if (nodes !== job.vertices.length) fail(`the graph shows ${nodes} vertices, the job has ${job.vertices.length}`);
  const rows = await page.locator("tr[data-vertex]").count();
  if (rows !== job.vertices.length) fail(`the vertex table has ${rows} rows, the job has ${job.vertices.length} vertices`);
  await page.waitForTimeout(3500);  // a second refresh: records per second need two snapshots
  await page.screenshot({ path: `${shots}/job.png`, fullPage: true });

  // Checkpoints: every row agrees with the REST API's details of that checkpoint.
  await page.click('a[data-tab="checkpoints"]');
  await page.waitForSelector("tr[data-checkpoint]", { timeout: 20000 });
  const shown = await page.$$eval("tr[data-checkpoint]", (trs) => trs.map((tr) => ({
    id: Number(tr.dataset.checkpoint), status: tr.children[1].textContent, path: tr.children[9].textContent })));
  let compared = 0;
  for (const row of shown) {
    const r = await fetch(`${url}/jobs/${jobId}/checkpoints/details/${row.id}`);
    if (r.status === 404) continue;  // it left the history since the page was drawn
    const d = await r.json();
    if (row.status === "IN_PROGRESS") continue;
    if (d.status !== row.status) fail(`checkpoint ${row.id}: the page says ${row.status}, the REST API ${d.status}`);
    if (d.status === "COMPLETED" && d.external_path !== row.path) {
      fail(`checkpoint ${row.id}: the page says ${row.path}, the REST API ${d.external_path}`);
    }
    compared++;
  }
  if (compared === 0) fail("no checkpoint row could be compared with the REST API");
  await page.click(`tr[data-checkpoint="${shown.find((r) => r.status === "COMPLETED").id}"]`);
  await page.waitForSelector("#checkpoint-detail table", { timeout: 10000 });
  await page.screenshot({ path: `${shots}/checkpoints.png`, fullPage: true });

  // A savepoint from the page: the prompt gets the folder, the answer names the savepoint, which is on disk.
  page.on("dialog", (d) => d.accept(d.type() === "prompt" ? savepointDir : undefined));
  await page.click('button[data-action="savepoint"]');
  const done = page.locator("#action-result .message", { hasText: "Savepoint completed: " });
  await done.waitFor({ timeout: 60000 });
  const location = (await done.textContent()).replace(/^Savepoint completed: /, "").trim();
  if (!location.startsWith(savepointDir) || !existsSync(`${location}/_metadata`)) {
    fail(`the savepoint the page reported is not on disk: ${location}`);
  }

  for (const tab of ["exceptions", "configuration"]) {
    await page.click(`a[data-tab="${tab}"]`);
    await page.waitForSelector(tab === "exceptions" ? "#tab .message, #tab table" : "#tab table", { timeout: 10000 });
    await page.screenshot({ path: `${shots}/${tab}.png`, fullPage: true });
  }
  if (errors.length) fail(`errors on the pages: ${errors.join("; ")}`);
  console.log(`dashboard: ${nodes} vertices drawn, ${compared} checkpoint rows agree with the REST API, savepoint ${location}`);
} finally {
  await browser.close();
}
