// The documentation endpoints of SPEC.md §1: `/api-spec.json` (the document), `/reference`
// (Scalar) and `/api-docs`, `/api`, `/docs` (Swagger UI). The UIs' scripts and styles come from
// their npm packages and are served by this server: the pages work with no network at all.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Context, Next } from "koa";
import { DOCS_CSP } from "./security-headers.js";

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve("swagger-ui-dist/package.json"));
const scalarStandalone = require.resolve("@scalar/api-reference/browser/standalone.js");

const ASSET_PREFIX = "/docs-assets/";

/** Files the pages load, by their public name. Only these are served. */
const ASSETS: Record<string, { file?: string; text?: string; type: string }> = {
  "scalar-standalone.js": { file: scalarStandalone, type: "application/javascript; charset=utf-8" },
  "scalar-init.js": {
    type: "application/javascript; charset=utf-8",
    text: `Scalar.createApiReference("#app", {
  url: "/api-spec.json",
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showToolbar: "never"
});
`,
  },
  "swagger-ui.css": { file: join(swaggerDir, "swagger-ui.css"), type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": {
    file: join(swaggerDir, "swagger-ui-bundle.js"),
    type: "application/javascript; charset=utf-8",
  },
  "swagger-ui-standalone-preset.js": {
    file: join(swaggerDir, "swagger-ui-standalone-preset.js"),
    type: "application/javascript; charset=utf-8",
  },
  "swagger-init.js": {
    type: "application/javascript; charset=utf-8",
    text: `window.ui = SwaggerUIBundle({
  url: "/api-spec.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout"
});
`,
  },
  "favicon-32x32.png": { file: join(swaggerDir, "favicon-32x32.png"), type: "image/png" },
};

const SCALAR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pbxctl API reference</title>
<link rel="icon" href="${ASSET_PREFIX}favicon-32x32.png">
</head>
<body>
<div id="app"></div>
<script src="${ASSET_PREFIX}scalar-standalone.js"></script>
<script src="${ASSET_PREFIX}scalar-init.js"></script>
</body>
</html>
`;

const SWAGGER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pbxctl API (Swagger UI)</title>
<link rel="stylesheet" href="${ASSET_PREFIX}swagger-ui.css">
<link rel="icon" href="${ASSET_PREFIX}favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ASSET_PREFIX}swagger-ui-bundle.js"></script>
<script src="${ASSET_PREFIX}swagger-ui-standalone-preset.js"></script>
<script src="${ASSET_PREFIX}swagger-init.js"></script>
</body>
</html>
`;

const PAGES: Record<string, string> = {
  "/reference": SCALAR_PAGE,
  "/api-docs": SWAGGER_PAGE,
  "/api": SWAGGER_PAGE,
  "/docs": SWAGGER_PAGE,
};

const cache = new Map<string, Buffer>();

function assetBody(name: string): Buffer | null {
  const asset = ASSETS[name];
  if (!asset) return null;
  let body = cache.get(name);
  if (!body) {
    body = asset.file ? readFileSync(asset.file) : Buffer.from(asset.text ?? "", "utf8");
    cache.set(name, body);
  }
  return body;
}

/** The fixed paths this middleware answers, and the prefix of its assets (metric route names). */
export function docsPaths(): { paths: string[]; assetPrefix: string } {
  return { paths: ["/api-spec.json", ...Object.keys(PAGES)], assetPrefix: ASSET_PREFIX };
}

/** Koa middleware serving the document (built by its first request), the two UIs and their assets (GET/HEAD only). */
export function docsPages(document: () => object) {
  let json: string | undefined;
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
    if (ctx.path === "/api-spec.json") {
      ctx.type = "application/json";
      json ??= JSON.stringify(document());
      ctx.body = json;
      return;
    }
    const page = PAGES[ctx.path];
    if (page !== undefined) {
      ctx.set("Content-Security-Policy", DOCS_CSP);
      ctx.set("Cache-Control", "no-cache");
      ctx.type = "text/html; charset=utf-8";
      ctx.body = page;
      return;
    }
    if (ctx.path.startsWith(ASSET_PREFIX)) {
      const name = ctx.path.slice(ASSET_PREFIX.length);
      const body = assetBody(name);
      if (body) {
        ctx.set("Cache-Control", "public, max-age=3600");
        ctx.type = ASSETS[name]!.type;
        ctx.body = body;
        return;
      }
    }
    return next();
  };
}
