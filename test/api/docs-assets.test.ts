// Without a browser: every documentation page and every file it references are answered by this
// server itself, so the pages can work with no network. docs-pages.test.ts then renders them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestApp, type TestApp } from "./helpers.js";

const PAGES = ["/reference", "/api-docs", "/api", "/docs"];

let app: TestApp;

test.before(async () => {
  app = await startTestApp();
});
test.after(async () => {
  await app.close();
});

/** The `src` of every script and the `href` of every link in a page, as written. */
function referencedUrls(html: string): string[] {
  const urls: string[] = [];
  for (const match of html.matchAll(/<(?:script|link)\b[^>]*?\s(?:src|href)="([^"]*)"/g)) {
    urls.push(match[1]!);
  }
  return urls;
}

for (const path of PAGES) {
  test(`${path} is HTML whose every script and link is served here`, async () => {
    const page = await app.request("GET", path);
    assert.is(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    assert.not.match(page.text, /https?:\/\/|\/\/[a-z]/i, "no absolute or protocol-relative URL");
    const urls = referencedUrls(page.text);
    assert.ok(urls.filter((url) => url.endsWith(".js")).length >= 2, urls.join(", "));
    for (const url of urls) {
      assert.ok(url.startsWith("/"), `${url} is a path on this server`);
      const asset = await app.request("GET", url);
      assert.is(asset.status, 200, url);
      assert.ok(asset.text.length > 0, `${url} is not empty`);
      if (url.endsWith(".js")) assert.match(asset.headers.get("content-type") ?? "", /javascript/);
      if (url.endsWith(".css")) assert.match(asset.headers.get("content-type") ?? "", /text\/css/);
    }
  });
}

test("the OpenAPI document the pages load is served, and nothing outside the asset list", async () => {
  const document = await app.request("GET", "/api-spec.json");
  assert.is(document.status, 200);
  assert.is(document.body.openapi, "3.0.3");
  assert.is((await app.request("GET", "/docs-assets/../package.json")).status, 404);
  assert.is((await app.request("GET", "/docs-assets/package.json")).status, 404);
});

test.run();
