// The memory panel in headless Chromium (Debian's chromium, driven by playwright-core)
// against `engram ui` on a project built from the development data: real flows through
// every page, each checked in the database with the CLI, and screenshots of every page at
// 1280 and 390 px wide in test-results/screenshots/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium } from "playwright-core";

import { buildProject, engram, evalDir, freePort, startPanel } from "./fixture.mjs";

const shots = path.resolve(import.meta.dirname, "../test-results/screenshots");
const widths = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };
let project, panel, browser;

before(async () => {
  project = await buildProject();
  panel = await startPanel(project.db, await freePort());
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  await mkdir(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  panel?.stop();
});

async function page(size = widths.desktop) {
  const context = await browser.newContext({ viewport: size });
  const p = await context.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  p.errors = errors;
  return p;
}

async function memoryInDb(id) {
  return JSON.parse(await engram(project.db, "show", "--json", id));
}

/** Every form control and button has a name a screen reader can say. */
async function unlabelledControls(p) {
  return p.evaluate(() =>
    [...document.querySelectorAll("button, input, select, textarea, a[href]")]
      .filter((el) => {
        const labelled = el.labels && el.labels.length > 0;
        const aria = el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
        const text = (el.textContent || "").trim();
        return !(labelled || aria || text);
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}

test("every page renders at 1280 and 390 px, labelled and screenshotted", async () => {
  const pages = [
    ["health", "/", "[data-testid=health-score]"],
    ["memories", "/memories", "[data-testid=list-summary]"],
    ["sessions", "/sessions", "[data-testid=tokens-saved]"],
    ["map", "/map", "[data-testid=map-summary]"],
    ["teach", "/teach", "#teach-heading"],
  ];
  for (const [name, route, ready] of pages) {
    for (const [label, size] of Object.entries(widths)) {
      const p = await page(size);
      await p.goto(panel.url + route);
      await p.waitForSelector(ready, { timeout: 60_000 });
      await p.waitForTimeout(400);
      assert.deepEqual(await unlabelledControls(p), [], `${name} at ${size.width} px`);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${name} at ${size.width} px scrolls sideways by ${overflow} px`);
      await p.screenshot({ path: path.join(shots, `${name}-${size.width}.png`), fullPage: true });
      assert.deepEqual(p.errors, [], `${name} at ${label}`);
      await p.context().close();
    }
  }
  // The detail page too, on a memory the session learned.
  const id = JSON.parse(await engram(project.db, "list", "--source", "observer_inferred", "--json")).memories[0].id;
  for (const size of Object.values(widths)) {
    const p = await page(size);
    await p.goto(`${panel.url}/memories/${id}`);
    await p.waitForSelector("[data-testid=history] li");
    assert.deepEqual(await unlabelledControls(p), []);
    await p.screenshot({ path: path.join(shots, `memory-${size.width}.png`), fullPage: true });
    await p.context().close();
  }
});

test("the health page shows the database's score and counts", async () => {
  const p = await page();
  await p.goto(panel.url);
  await p.waitForSelector("[data-testid=health-score]");
  const health = await engram(project.db, "health");
  const [, score, live] = health.match(/health (\d+) \/ 100 \((\d+) live memories\)/);
  assert.equal((await p.textContent("[data-testid=health-score] b")).trim(), score);
  assert.equal((await p.textContent("[data-testid=live-count]")).trim(), live);
  // Charts are drawn (SVG from the charting library), one per figure.
  assert.ok((await p.locator("figure .recharts-surface").count()) >= 8);
  await p.context().close();
});

test("browse with a filter: only what the filter matches, as many as the database counts", async () => {
  const p = await page();
  await p.goto(`${panel.url}/memories`);
  await p.waitForSelector("[data-testid=list-summary]");
  await p.getByLabel("Source").selectOption("observer_inferred");
  await p.getByLabel("needs review").check();
  await p.getByRole("button", { name: "Apply filters" }).click();
  const expected = (await engram(project.db, "list", "--count", "--source", "observer_inferred", "--needs-review")).trim();
  await p.waitForFunction(
    (n) => document.querySelector("[data-testid=list-summary]")?.textContent?.startsWith(`${n} memories match`),
    expected,
  );
  const cards = p.locator("section[aria-labelledby=browse-heading] [data-testid=memory]");
  assert.ok((await cards.count()) > 0);
  for (const chips of await cards.locator(".chips").first().allTextContents()) {
    assert.match(chips, /observer inferred/);
    assert.match(chips, /needs review/);
  }
  await p.context().close();
});

test("confirm a memory: user-verified in the database", async () => {
  const listed = JSON.parse(await engram(project.db, "list", "--source", "observer_inferred", "--needs-review", "--json"));
  const id = listed.memories[0].id;
  assert.equal((await memoryInDb(id)).memory.flags.userVerified, false);
  const p = await page();
  await p.goto(`${panel.url}/memories/${id}`);
  // Its provenance: the session and the steps of it that show it.
  const evidence = await p.textContent("[data-testid=evidence]");
  assert.match(evidence, new RegExp(`at steps? [\\d, ]+ of session ${listed.memories[0].sessionId}$`));
  await p.getByRole("button", { name: "Confirm" }).click();
  await p.getByRole("status").filter({ hasText: "Confirmed" }).waitFor();
  const after = await memoryInDb(id);
  assert.equal(after.memory.flags.userVerified, true);
  assert.equal(after.memory.flags.needsReview, false);
  assert.ok(await p.locator("[data-testid=history] li[data-action=confirmed]").count());
  await p.context().close();
});

test("edit a memory: the text changes and its history shows the edit", async () => {
  const listed = JSON.parse(await engram(project.db, "list", "--source", "observer_inferred", "--json"));
  const id = listed.memories[1].id;
  const p = await page();
  await p.goto(`${panel.url}/memories/${id}`);
  await p.getByRole("button", { name: "Edit" }).click();
  const text = "Run pytest with -p no:cacheprovider when the cache folder is read-only.";
  await p.getByLabel("Text").fill(text);
  await p.getByRole("button", { name: "Save correction" }).click();
  await p.getByRole("status").filter({ hasText: "correction" }).waitFor();
  assert.equal((await p.textContent("[data-testid=content]")).trim(), text);
  const edited = p.locator("[data-testid=history] li[data-action=edited]");
  await edited.first().waitFor();
  assert.match(await edited.first().textContent(), /Run pytest with -p no:cacheprovider/);
  const after = await memoryInDb(id);
  assert.equal(after.memory.content, text);
  assert.ok(after.history.some((h) => h.action === "edited"));
  await p.context().close();
});

test("flag a memory wrong: retired in the database", async () => {
  const listed = JSON.parse(await engram(project.db, "list", "--source", "observer_inferred", "--json"));
  const id = listed.memories[2].id;
  const p = await page();
  await p.goto(`${panel.url}/memories/${id}`);
  await p.getByLabel("Why is it wrong?").fill("not true for this project");
  await p.getByRole("button", { name: "Flag wrong" }).click();
  await p.getByRole("status").filter({ hasText: "Flagged" }).waitFor();
  assert.match(await p.textContent("[data-testid=state]"), /retired/);
  const after = await memoryInDb(id);
  assert.equal(after.memory.deprecated, true);
  assert.ok(after.history.some((h) => h.action === "flagged" && /not true for this project/.test(h.reason)));
  await p.context().close();
});

test("import a real instruction file by upload and see its memories with their lines", async () => {
  const file = path.join(evalDir, "instructions/PrefectHQ__fastmcp__CLAUDE.md");
  const before = Number((await engram(project.db, "list", "--count")).trim());
  const p = await page();
  await p.goto(`${panel.url}/teach`);
  await p.setInputFiles("[data-testid=import-file]", file);
  await p.getByLabel("Its path in the project").fill("CLAUDE.md");
  await p.getByRole("button", { name: "Import" }).click();
  const summary = await p.locator("[data-testid=import-summary]").textContent({ timeout: 60_000 });
  const rules = Number(summary.match(/: (\d+) rules/)[1]);
  assert.ok(rules > 5, summary);
  const rows = await p.locator("table tbody tr").count();
  assert.equal(rows, rules);
  const added = await p.locator("table tbody tr td:nth-child(2)", { hasText: /^added$/ }).count();
  assert.ok(added > 0);
  assert.equal(Number((await engram(project.db, "list", "--count")).trim()), before + added);
  await p.locator("table tbody tr a").first().click();
  await p.waitForSelector("[data-testid=origin]");
  assert.match(await p.textContent("[data-testid=origin]"), /^CLAUDE\.md:\d+/);
  await p.context().close();
});

test("teach: the preview is the packed text an agent would get, and nothing is stored until saved", async () => {
  const before = (await engram(project.db, "list", "--count")).trim();
  const p = await page();
  await p.goto(`${panel.url}/teach`);
  await p.getByLabel("What should agents know?").fill("Never run the whole pytest suite in CI shards; use -k filters");
  await p.getByLabel("Type").selectOption("gotcha");
  await p.getByLabel("Files (comma-separated)").fill("testing/conftest.py");
  await p.getByRole("button", { name: "Preview" }).click();
  const preview = await p.locator("[data-testid=preview]").textContent();
  assert.match(preview, /testing\/conftest\.py/);
  assert.match(preview, /\[gotcha\] .*Never run the whole pytest suite.*\[Memory #new: /);
  assert.equal((await engram(project.db, "list", "--count")).trim(), before);
  await p.getByRole("button", { name: "Save" }).click();
  await p.locator("[data-testid=saved]").waitFor();
  assert.equal(Number((await engram(project.db, "list", "--count")).trim()), Number(before) + 1);
  await p.context().close();
});

test("module map: files, co-access and dependencies drawn; a node's memories and impact", async () => {
  const p = await page();
  await p.goto(`${panel.url}/map`);
  const summary = await p.locator("[data-testid=map-summary]").textContent();
  const [, files, pairs, deps] = summary.match(/(\d+) files · (\d+) co-access pairs · (\d+) dependencies/).map(Number);
  assert.ok(files > 10 && pairs > 0 && deps > 0, summary);
  // The graph library drew it (a canvas inside the container).
  await p.locator("[data-testid=graph] canvas").first().waitFor();
  // The keyboard's way in: the list of files beside the graph.
  const first = p.locator("[data-testid=map-files] button").first();
  const name = (await first.textContent()).split(" · ")[0];
  await first.focus();
  await p.keyboard.press("Enter");
  await p.locator("#node-heading", { hasText: name }).waitFor();
  const count = Number((await engram(project.db, "list", "--count", "--file", name)).trim());
  assert.ok(count > 0);
  await p.waitForFunction(
    (n) => document.querySelectorAll("[data-testid=node-memories] [data-testid=memory]").length === n,
    Math.min(count, 50),
  );
  await p.getByRole("button", { name: "Impact of a change" }).click();
  await p.locator("[data-testid=impact]").waitFor();
  assert.match(await p.textContent("[data-testid=impact]"), /Impacted files \(\d+\)/);
  await p.screenshot({ path: path.join(shots, "map-node-1280.png"), fullPage: true });
  // The modules view: the same map with folders merged, drawn without errors.
  await p.getByRole("combobox").selectOption("modules");
  await p.locator("[data-testid=graph] canvas").first().waitFor();
  await p.waitForTimeout(500);
  await p.screenshot({ path: path.join(shots, "map-modules-1280.png"), fullPage: true });
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test("search with the breakdown shown", async () => {
  const p = await page();
  await p.goto(`${panel.url}/memories`);
  await p.getByLabel("Query").fill("unittest setUp and tearDown");
  await p.getByRole("button", { name: "Search", exact: true }).click();
  const summary = await p.locator("[data-testid=search-summary]").textContent();
  const hits = Number(summary.match(/^(\d+) hits/)[1]);
  assert.ok(hits > 0, summary);
  await p.getByRole("button", { name: "Why this rank?" }).first().click();
  const breakdown = p.locator("[data-testid=breakdown]").first();
  await breakdown.waitFor();
  const text = await breakdown.textContent();
  assert.match(text, /relevance \d\.\d\d/);
  assert.match(text, /keyword/);
  assert.match(text, /fused .* decay/);
  await p.screenshot({ path: path.join(shots, "search-1280.png"), fullPage: true });
  await p.context().close();
});

test("session review: the replayed sessions, and judging what one learned", async () => {
  const p = await page();
  await p.goto(`${panel.url}/sessions`);
  await p.waitForSelector("[data-testid=tokens-saved]");
  assert.equal(await p.locator("[data-testid=sessions] > li").count(), project.trajectories);
  const waiting = p.locator("section[aria-label='Waiting for your review'] [data-testid=memory]");
  const before = await waiting.count();
  assert.ok(before > 0, "a session with memories to review opens first");
  const id = await waiting.first().getAttribute("data-id");
  await waiting.first().getByRole("button", { name: "Confirm" }).click();
  await p.getByRole("status").filter({ hasText: "Confirmed" }).waitFor();
  await p.waitForFunction(
    ([n]) => document.querySelectorAll("section[aria-label='Waiting for your review'] [data-testid=memory]").length === n,
    [before - 1],
  );
  assert.equal((await memoryInDb(id)).memory.flags.userVerified, true);
  await p.context().close();
});

test("with a token, the panel answers only a browser that presented it", async () => {
  const token = "a-token-for-this-test-only-0123456789";
  const guarded = await startPanel(project.db, await freePort(), "--token", token);
  try {
    assert.equal((await fetch(`${guarded.url}/api/sessions`)).status, 401);
    assert.equal((await fetch(`${guarded.url}/?token=wrong`, { redirect: "manual" })).status, 401);
    const first = await fetch(`${guarded.url}/memories?token=${token}`, { redirect: "manual" });
    assert.equal(first.status, 307);
    assert.equal(new URL(first.headers.get("location"), guarded.url).search, "", "the token leaves the address");
    const cookie = first.headers.get("set-cookie");
    assert.match(cookie, /engram_panel=.*HttpOnly/i);
    const sessions = await fetch(`${guarded.url}/api/sessions`, { headers: { cookie: cookie.split(";")[0] } });
    assert.equal(sessions.status, 200);
    assert.equal((await sessions.json()).length, project.trajectories);
  } finally {
    guarded.stop();
  }
});
