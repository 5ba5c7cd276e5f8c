// Fencing of what the deployer sends the engine (issue 23; realtime PJSIP's cache expiries, issue
// 24): with several replicas, only the holder of the engine's deployer lease may reload or expire
// cached objects. A holder can lose the lease without knowing yet (its process was paused past
// the expiry and another replica took over), so every reload and every expiry is checked against
// the lease right before it is sent and right after it returns: one the fence refuses before is
// not sent; one that ran while the lease was lost under it is reported failed, so the deploy is
// not recorded as applied (and an expiry's pending record is not acknowledged) and the work stays
// in the store for the new holder, whose own start compares the engine with the store again.
import type { EngineTarget, ReloadRequest } from "../engine/target.js";

/** Throws when this process may no longer reload (it lost the deployer lease). */
export type ReloadFence = () => Promise<void>;

/**
 * Runs `act` only if `fence` lets it, and checks `fence` again once it returned: an act the lease
 * was lost under is reported failed (`<what> ran after the deployer lease was lost ...`), so what
 * it was part of is not recorded as done. Reloads, cache expiries and a node's media copies
 * (node-media.ts) all go through it.
 */
export async function runFenced<T>(
  fence: ReloadFence,
  what: string,
  act: () => Promise<T>,
): Promise<T> {
  await fence();
  const outcome = await act();
  try {
    await fence();
  } catch (error) {
    throw new Error(
      `${what} ran after the deployer lease was lost (${(error as Error).message}); left for the new deployer`,
    );
  }
  return outcome;
}

/** `target` with each reload and each cache expiry checked by `fence` before and after. */
export function fencedTarget(target: EngineTarget, fence: ReloadFence): EngineTarget {
  const fenced = <T>(what: string, send: () => Promise<T>): Promise<T> =>
    runFenced(fence, what, send);
  const reload = (request: ReloadRequest) =>
    fenced(request.command.command, () => target.reload(request));
  const expireCachedObject = target.expireCachedObject
    ? (cache: string, id: string) =>
        fenced(`the expiry of ${cache} ${id}`, () => target.expireCachedObject!(cache, id))
    : undefined;
  // A proxy, not a copy: the target's other methods keep running on the target itself.
  return new Proxy(target, {
    get: (object, property) => {
      if (property === "reload") return reload;
      if (property === "expireCachedObject") return expireCachedObject;
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
