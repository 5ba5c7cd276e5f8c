// The documentation pages render in a headless Chromium with every non-loopback request refused:
// both UIs must come entirely from this server (docs-assets.test.ts checks the HTML without a
// browser). The browser comes with `npm ci`: test/browser/locate-chromium.ts says which is used.
import { type Browser, chromium } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { locateChromium } from "../browser/locate-chromium.js";
import { startTestApp, type TestApp } from "./helpers.js";

const KNOWN_SUMMARY = "Exchange the org key and secret for a 24 h JWT";

let app: TestApp;
let browser: Browser | undefined;
// uvu swallows an error thrown by a before hook, so a browser that cannot start fails each test.
let browserError: Error | undefined;

test.before(async () => {
  app = await startTestApp();
  try {
    const located = await locateChromium();
    browser = await chromium.launch({
      executablePath: located.executablePath,
      env: located.env,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
  } catch (error) {
    browserError = error as Error;
  }
});
test.after(async () => {
  await browser?.close();
  await app.close();
});

async function openPage(path: string) {
  if (!browser) throw browserError ?? new Error("the browser did not start");
  const context = await browser.newContext();
  const external: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1" || url.protocol === "data:" || url.protocol === "blob:") {
      return route.continue();
    }
    external.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(app.url + path, { waitUntil: "load" });
  return { page, context, errors, external };
}

test("/reference (Scalar) lists the operations offline", async () => {
  const { page, context, errors, external } = await openPage("/reference");
  try {
    await page.getByText(KNOWN_SUMMARY).first().waitFor({ timeout: 20000 });
    assert.ok(await page.getByText("Organization Management").first().isVisible());
    assert.equal(errors, []);
    assert.equal(external, [], "requests that left this server");
  } finally {
    await context.close();
  }
});

for (const path of ["/api-docs", "/api", "/docs"]) {
  test(`${path} (Swagger UI) lists the operations offline`, async () => {
    const { page, context, errors, external } = await openPage(path);
    try {
      await page.locator(".opblock-summary-path").first().waitFor({ timeout: 20000 });
      const paths = await page.locator(".opblock-summary-path").allTextContents();
      assert.ok(
        paths.some((p) => p.includes("/auth/login")),
        paths.join(", "),
      );
      assert.ok(await page.getByText(KNOWN_SUMMARY).first().isVisible());
      assert.equal(errors, []);
      assert.equal(external, [], "requests that left this server");
    } finally {
      await context.close();
    }
  });
}

test.run();
