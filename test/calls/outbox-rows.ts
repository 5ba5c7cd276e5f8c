// What the engine-event webhook tests read back: an org's queued deliveries, and a check that
// each one's data is what the published document says its event sends.
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import * as assert from "uvu/assert";
import type { Db } from "../../src/store/database.js";
import { ENGINE_EVENT_DATA, type EngineEvent } from "../../src/webhooks/event-data.js";

export type OutboxRow = [event: string, data: Record<string, unknown>];

/** The org's queued deliveries in the order they were written. */
export async function outboxRows(db: Db, org: string): Promise<OutboxRow[]> {
  const rows = await db
    .selectFrom("webhook_deliveries" as never)
    .select(["event_type", "data"] as never[])
    .where("org_id" as never, "=", org as never)
    .orderBy("created_at" as never)
    .orderBy("message_id" as never)
    .execute();
  return (rows as unknown as { event_type: string; data: string }[]).map(
    (r) => [r.event_type, JSON.parse(r.data)] as OutboxRow,
  );
}

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/** Fails unless every row's data is what the OpenAPI document says its event sends. */
export function assertDocumented(rows: readonly OutboxRow[]): void {
  for (const [type, data] of rows) {
    const schema = ENGINE_EVENT_DATA[type as EngineEvent];
    assert.ok(schema, `${type} has no documented data schema`);
    const validate = ajv.compile(schema);
    assert.ok(validate(data), `${type}: ${ajv.errorsText(validate.errors)}`);
  }
}
