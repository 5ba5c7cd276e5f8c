// Long work done for one request (greeting synthesis) stops when its client goes away: nobody
// would read the answer, and the CPU is shared by every tenant.
import type { Context } from "koa";

/** A signal aborted when the connection closes before the response was sent. */
export function abortWhenClientLeaves(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort(new ClientGone());
  });
  return controller.signal;
}

/** The reason of a signal from `abortWhenClientLeaves`. */
export class ClientGone extends Error {
  override name = "ClientGone";
  constructor() {
    super("the client closed the connection before the answer");
  }
}
