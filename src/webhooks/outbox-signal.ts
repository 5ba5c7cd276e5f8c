// Tells in-process dispatchers that outbox rows were written (`emitted`), so a delivery starts
// without waiting for the next poll. A dispatcher that reacts before the writer's transaction
// commits simply finds nothing and polls again later.
import { EventEmitter } from "node:events";

export const outboxSignal = new EventEmitter();
outboxSignal.setMaxListeners(0);
