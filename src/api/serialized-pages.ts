// List answers of a listing that has not changed, serialized once. A domain listing that keeps
// its rows while the store is unchanged (`listUsers`: the same array per store generation,
// src/store/read-cache.ts) returns that array frozen; each page of it is then turned into its
// JSON bytes once and those bytes answer every later request for the same page, instead of
// JSON.stringify of 50 objects and the UTF-8 encoding of the result on every request (about a
// seventh of a `GET /users`'s CPU: docs/performance.md, API). The bytes are exactly what Koa's
// JSON.stringify of the page would write. A new generation loads a new array, so a changed
// listing is serialized anew; the pages of an array go when the array does (a WeakMap).
//
// Only frozen arrays are kept: freezing is the listing's promise that the array never changes
// (a fresh array per request is frozen by nobody and is serialized per request, as before).
import { type ListStyle, paginate } from "./pagination.js";

/** One page's answer: the JSON body's bytes and the whole list's total, for `X-Total-Count`. */
export interface SerializedPage {
  bytes: Buffer;
  total: string;
}

/** The Content-Type Koa gives a JSON body, set with the bytes. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** Pages kept per listing: a client pages with a few windows, never many. */
const MAX_PAGES_PER_LISTING = 16;

const pagesOfListing = new WeakMap<readonly unknown[], Map<string, SerializedPage>>();

/** Whether `rows` promise never to change (frozen), so their pages may be kept serialized. */
export function isUnchangingListing(rows: unknown): rows is readonly unknown[] {
  return Array.isArray(rows) && Object.isFrozen(rows);
}

/** The page of `rows` that `query` asks for, as `style` answers it, serialized once per page. */
export function serializedPage(
  rows: readonly unknown[],
  query: { limit?: number; offset?: number },
  style: ListStyle,
): SerializedPage {
  const key = `${style} ${query.limit} ${query.offset}`;
  let pages = pagesOfListing.get(rows);
  if (!pages) {
    pages = new Map();
    pagesOfListing.set(rows, pages);
  }
  let page = pages.get(key);
  if (!page) {
    const { body, total } = paginate(rows, query, style);
    page = { bytes: Buffer.from(JSON.stringify(body)), total: String(total) };
    if (pages.size >= MAX_PAGES_PER_LISTING) pages.delete(pages.keys().next().value as string);
    pages.set(key, page);
  }
  return page;
}
