// Paginated lists. Every list operation takes `limit` (at most MAX_PAGE_SIZE) and `offset`, keeps
// the stable order its domain function returns (by extension, number, name or creation), and
// answers one page with the total, like SPEC.md §4.5's call lists:
// `{data: [...], total, pagination: {total, limit, offset}}`. Where SPEC.md fixes a list's body
// as a bare array (`GET /ivrs`, `GET /tts/voices`), the page stays an array and the total
// travels in the `X-Total-Count` header. Both forms also carry `X-Total-Count`.
import { type TSchema, Type } from "@sinclair/typebox";
import { PAGE_LIMITS, pageWindow } from "../domain/page-window.js";

/** Largest page a client may ask for. */
export const MAX_PAGE_SIZE = PAGE_LIMITS.maxSize;
/** Page size when the client names none. */
export const DEFAULT_PAGE_SIZE = PAGE_LIMITS.defaultSize;

/** How a list answers: the envelope, or SPEC.md's bare array with `X-Total-Count`. */
export type ListStyle = "envelope" | "array";

export const TOTAL_HEADER = "X-Total-Count";

/** The query parameters every list operation accepts. */
export const PageQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      description: `page size, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`,
    }),
  ),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: PAGE_LIMITS.maxOffset,
      default: 0,
      description: "rows to skip (default 0)",
    }),
  ),
});

/** `pagination` of every list's answer. */
export const Pagination = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: "rows in the whole list" }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE }),
    offset: Type.Integer({ minimum: 0 }),
  },
  { title: "Pagination" },
);

/** The 200 body of a list operation whose items are `item`. */
export function pageSchema(item: TSchema, style: ListStyle): TSchema {
  if (style === "array") return Type.Array(item);
  const title = (item as { title?: string }).title;
  return Type.Object(
    {
      data: Type.Array(item, { description: "this page, in the list's stable order" }),
      total: Type.Integer({ minimum: 0, description: "rows in the whole list" }),
      pagination: Pagination,
    },
    title ? { title: `${title}Page` } : {},
  );
}

/** A page a handler already cut (in the database), with the whole list's total. */
export class PageOf {
  constructor(
    readonly rows: readonly unknown[],
    readonly total: number,
  ) {}
}

export interface Page {
  body: unknown;
  total: number;
}

/** One page of `rows` (every row, or a `PageOf` already cut) as `style` answers it. */
export function paginate(
  rows: readonly unknown[] | PageOf,
  query: { limit?: number; offset?: number },
  style: ListStyle,
): Page {
  const { limit, offset } = pageWindow(query);
  const data = rows instanceof PageOf ? rows.rows : rows.slice(offset, offset + limit);
  const total = rows instanceof PageOf ? rows.total : rows.length;
  return {
    total,
    body: style === "array" ? data : { data, total, pagination: { total, limit, offset } },
  };
}
