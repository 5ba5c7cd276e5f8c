// An engine target for realtime PJSIP (PBX_PJSIP=realtime, issue 24): the same engine, but a
// PJSIP reload never reloads res_pjsip. In realtime mode endpoints, auths and AORs are rows read
// by id behind a memory cache (expired object by object, src/deploy/realtime-pjsip.ts); what the
// generated pjsip.conf files still hold is only the trunks' `identify` sections (and the top-level
// file's includes of them), which res_pjsip_endpoint_identifier_ip reloads on its own
// (`ast_sorcery_reload_object(..., "identify")`). `module reload res_pjsip.so` costs 11.7 s at 500
// orgs and 83 s at 1,000 (ASTERISK.md) and would re-read every object: it is never sent.
import type { EngineProbe, EngineTarget, ReloadOutcome, ReloadRequest } from "./target.js";

/** What file mode sends for a changed pjsip.conf. */
export const FILE_PJSIP_RELOAD = "module reload res_pjsip.so";
/** What realtime mode sends instead: only the identify objects of the files are reloaded. */
export const IDENTIFY_RELOAD = "module reload res_pjsip_endpoint_identifier_ip.so";
/** A trunk's outbound registration row changed: only that module re-reads its registrations. */
export const REGISTRATIONS_RELOAD = "module reload res_pjsip_outbound_registration.so";

/**
 * `target` as the file deployer sees it in realtime mode: every `module reload res_pjsip.so` is
 * sent as the identify reload, and endpoint probes of the files are not asked. The files hold no
 * endpoint in realtime mode, so an endpoint "removed" from an org's pjsip.conf (the first
 * realtime deploy of a file-mode directory) is still served from its row, rightly; endpoints are
 * verified against their rows by src/deploy/realtime-pjsip.ts instead.
 */
export function realtimePjsipTarget(target: EngineTarget): EngineTarget {
  const verify = target.verify?.bind(target);
  return new Proxy(target, {
    get(inner, property, receiver) {
      if (property === "reload") {
        return (request: ReloadRequest): Promise<ReloadOutcome> =>
          inner.reload(
            request.command.command === FILE_PJSIP_RELOAD
              ? { ...request, command: { ...request.command, command: IDENTIFY_RELOAD } }
              : request,
          );
      }
      if (property === "verify" && verify) {
        return (probes: readonly EngineProbe[]) =>
          verify(probes.filter((probe) => probe.kind !== "endpoint"));
      }
      return Reflect.get(inner, property, receiver);
    },
  });
}
