// The AI-agent extensions of an org, for the bot-dropped rule of SPEC.md §4.7: asked of the API
// (`POST /users/internal/bot-extensions` with the internal key), kept 5 minutes per org (§8). A
// failed lookup gives the empty set, so no `bot_dropped` ticket is made while it fails; a
// failure is not kept, the next call asks again.
import type { Clock } from "../clock.js";

/** The bot-extension cache lifetime (SPEC.md §8). */
export const BOT_CACHE_MS = 5 * 60 * 1000;

export type BotExtensionLookup = (orgId: string) => Promise<readonly string[]>;

export interface BotExtensions {
  of(orgId: string): Promise<ReadonlySet<string>>;
}

/** Looks extensions up over HTTP at `apiUrl()` (the server's base URL, without /api/v1). */
export function httpBotExtensionLookup(options: {
  apiUrl: () => string;
  internalKey: string | null;
  timeoutMs?: number;
}): BotExtensionLookup {
  return async (orgId) => {
    if (!options.internalKey) throw new Error("no internal key configured (PBX_INTERNAL_KEY)");
    const res = await fetch(`${options.apiUrl()}/api/v1/users/internal/bot-extensions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-key": options.internalKey },
      body: JSON.stringify({ org_id: orgId }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    });
    if (res.status !== 200) throw new Error(`bot-extensions answered ${res.status}`);
    const body = (await res.json()) as { extensions?: unknown };
    if (!Array.isArray(body.extensions)) throw new Error("bot-extensions answered no list");
    return body.extensions.filter((e): e is string => typeof e === "string");
  };
}

/** A per-org cache over `lookup`, `ttlMs` long by `clock`. */
export function cachedBotExtensions(options: {
  lookup: BotExtensionLookup;
  clock: Clock;
  ttlMs?: number;
  onError?: (orgId: string, error: unknown) => void;
}): BotExtensions {
  const ttl = options.ttlMs ?? BOT_CACHE_MS;
  const cache = new Map<string, { at: number; set: ReadonlySet<string> }>();
  return {
    async of(orgId) {
      const now = options.clock().getTime();
      const hit = cache.get(orgId);
      if (hit && now - hit.at < ttl) return hit.set;
      try {
        const set = new Set(await options.lookup(orgId));
        cache.set(orgId, { at: now, set });
        return set;
      } catch (error) {
        options.onError?.(orgId, error);
        return new Set();
      }
    },
  };
}
