// Fencing of the deployer's reloads (issue 23): with several replicas, only the holder of the
// engine's deployer lease may reload, one reload at a time. A holder can lose the lease without
// knowing yet (its process was paused past the expiry and another replica took over), so every
// reload is checked against the lease right before it is sent and right after it returns: a
// reload the fence refuses before is not sent; one that ran while the lease was lost under it is
// reported failed, so the deploy is not recorded as applied and its requests stay pending for
// the new holder (whose own deploy compares the engine with the store again).
import type { EngineTarget, ReloadRequest } from "../engine/target.js";

/** Throws when this process may no longer reload (it lost the deployer lease). */
export type ReloadFence = () => Promise<void>;

/** `target` with each reload checked by `fence` before and after. */
export function fencedTarget(target: EngineTarget, fence: ReloadFence): EngineTarget {
  const reload = async (request: ReloadRequest) => {
    await fence();
    const outcome = await target.reload(request);
    try {
      await fence();
    } catch (error) {
      throw new Error(
        `${request.command.command} ran after the deployer lease was lost (${(error as Error).message}); left for the new deployer`,
      );
    }
    return outcome;
  };
  // A proxy, not a copy: the target's other methods keep running on the target itself.
  return new Proxy(target, {
    get: (object, property) => {
      if (property === "reload") return reload;
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
