// One page rule for every list, in the API and the CLI alike: a page of at most 500 rows (100
// when the caller names no size), starting after `offset` rows. The API's query schema
// (api/pagination.ts) and the lists cut in the database (domain/calls/calls.ts) read these numbers.

/** Page sizes and the largest offset a list accepts. */
export const PAGE_LIMITS = { defaultSize: 100, maxSize: 500, maxOffset: 2_147_483_647 } as const;

/** The rows a caller asks for. */
export interface PageWindow {
  limit: number;
  offset: number;
}

/** What a page says about the whole list. */
export interface Pagination extends PageWindow {
  total: number;
}

/** The window `query` asks for, defaults filled and the size capped. */
export function pageWindow(query: { limit?: number; offset?: number }): PageWindow {
  return {
    limit: Math.min(query.limit ?? PAGE_LIMITS.defaultSize, PAGE_LIMITS.maxSize),
    offset: query.offset ?? 0,
  };
}
