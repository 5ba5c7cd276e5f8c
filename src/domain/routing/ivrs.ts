// IVR menus of an org (SPEC.md §2, §4.4): CRUD, the atomic menu replacement and publish. An IVR's
// extension shares the org's extension space with users and queue numbers (claimed in the same
// transaction as the write). Another org's IVR is 404 `IVR not found`, never 403 (SPEC.md §1
// rule 2), so its existence is not revealed. Every change: validate the org as it would be after
// it, write in one transaction, then schedule the org's deploy.
import { randomUUID } from "node:crypto";
import { defaultOf, orDefault, withDefaults } from "../../model/defaults.js";
import { Ivr, type IvrOption, type OrgState } from "../../model/org-state.js";
import type { Db } from "../../store/database.js";
import { createIvrRepository } from "../../store/ivr-repository.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { changeOrgConfig, notifyConfigChanged } from "../config/config-change.js";
import { assertBreaksNothingElse, assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { checkedGreetingVoice, removeIvrGreeting } from "../media/speech.js";
import {
  claimExtension,
  collisionMessage,
  holderInState,
  releaseExtension,
} from "./extension-space.js";
import { IVR_NOT_FOUND, ownIvrRecord } from "./ivr-access.js";
import { type IvrMenuOptionView, type IvrView, ivrView, menuOptionView } from "./ivr-view.js";

export { IVR_NOT_FOUND } from "./ivr-access.js";
export type { IvrMenuOptionView, IvrView } from "./ivr-view.js";

export const NAME_AND_EXTENSION_REQUIRED = "name and extension required";
/** SPEC.md §2 defaults (the model's), used when a field is omitted or null. */
export const IVR_DEFAULTS = {
  timeout: defaultOf(Ivr, "timeout"),
  max_retries: defaultOf(Ivr, "max_retries"),
} as const;

const EXTENSION = /^[0-9]{2,15}$/;

/** The fields a caller may set on create (all optional here: the rules answer what is missing). */
export interface IvrInput {
  name?: string | null;
  extension?: string | null;
  description?: string | null;
  timeout?: number | null;
  max_retries?: number | null;
  status?: Ivr["status"] | null;
  greeting_language?: string | null;
  greeting_voice?: string | null;
  direct_extension_dial?: boolean | null;
}

/** A partial update: an omitted field keeps its value; null resets timeout/max_retries to default. */
export type IvrPatch = IvrInput;

/** One menu option as a request sends it (a digit may come as a JSON number). */
export interface MenuOptionInput {
  digit: string | number;
  action_type: string;
  action_destination?: string | null;
  description?: string | null;
}

/** The org's state, the IVR's index in it and the IVR (tenant-checked). */
async function loadOwnIvr(
  db: Db,
  orgId: string,
  id: string,
): Promise<{ state: OrgState; index: number; ivr: Ivr }> {
  await ownIvrRecord(db, orgId, id);
  const state = await loadOrgState(db, orgId);
  const index = state.ivrs.findIndex((i) => i.id === id);
  const ivr = state.ivrs[index];
  if (!ivr) throw new NotFound(IVR_NOT_FOUND);
  return { state, index, ivr };
}

function nonNegative(field: "timeout" | "max_retries", value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new BadRequest(`${field} must be >= 0`);
  return value;
}

function checkedExtension(extension: string): string {
  if (!EXTENSION.test(extension)) throw new BadRequest("extension must be 2-15 digits");
  return extension;
}

/** IVRs of the org ordered by extension, each with its `menuOptions` in order. */
export async function listIvrs(deps: DomainDeps, orgId: string): Promise<IvrView[]> {
  return (await createIvrRepository(deps.db).listRecords(orgId)).map(ivrView);
}

/** One IVR of the org with its options; 404 `IVR not found` when absent or another org's. */
export async function getIvr(deps: DomainDeps, orgId: string, id: string): Promise<IvrView> {
  return ivrView(await ownIvrRecord(deps.db, orgId, id));
}

/**
 * Creates an IVR: `name and extension required`, SPEC.md §2 defaults for what is omitted or null
 * (0 stays 0, negatives are refused), 409 with the SPEC.md §7 message when the extension is taken.
 * Of concurrent creates with one extension, the claim table lets exactly one through.
 */
export async function createIvr(
  deps: DomainDeps,
  orgId: string,
  input: IvrInput,
): Promise<IvrView> {
  const name = input.name ?? "";
  const extension = input.extension ?? "";
  if (name.trim() === "" || extension.trim() === "") {
    throw new BadRequest(NAME_AND_EXTENSION_REQUIRED);
  }
  const voice = checkedGreetingVoice(input.greeting_language, input.greeting_voice);
  const id = randomUUID();
  const ivr = withDefaults(Ivr, {
    id,
    name,
    extension: checkedExtension(extension),
    description: input.description ?? undefined,
    timeout: nonNegative("timeout", orDefault(Ivr, "timeout", input.timeout)),
    max_retries: nonNegative("max_retries", orDefault(Ivr, "max_retries", input.max_retries)),
    status: input.status ?? undefined,
    greeting_language: voice.language,
    greeting_voice: voice.voice,
    greeting_prompt: null,
    direct_extension_dial: input.direct_extension_dial ?? undefined,
  });
  const now = deps.clock().toISOString();
  const created = await changeOrgConfig(deps, orgId, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const holder = holderInState(state, ivr.extension);
    if (holder) throw new Conflict(collisionMessage(ivr.extension, holder));
    state.ivrs.push(ivr);
    assertValidAt(state, `ivrs[${state.ivrs.length - 1}]`);
    await claimExtension(trx, orgId, ivr.extension, { type: "ivr", id });
    await createIvrRepository(trx, deps.clock).insert(orgId, ivr, now);
    return ownIvrRecord(trx, orgId, id);
  });
  return ivrView(created);
}

/**
 * Applies a partial update; a changed extension is re-checked against users, queues and IVRs
 * (409) and re-claimed. Refused with 400 when it would break another resource.
 */
export async function updateIvr(
  deps: DomainDeps,
  orgId: string,
  id: string,
  patch: IvrPatch,
): Promise<IvrView> {
  const now = deps.clock().toISOString();
  const updated = await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, index, ivr: current } = await loadOwnIvr(trx, orgId, id);
    const next: Ivr = { ...current, options: current.options.map((o) => ({ ...o })) };
    if (patch.name !== undefined) {
      if (patch.name === null || patch.name.trim() === "") {
        throw new BadRequest("name must not be empty");
      }
      next.name = patch.name;
    }
    if (patch.extension !== undefined) {
      if (patch.extension === null) throw new BadRequest("extension must be 2-15 digits");
      next.extension = checkedExtension(patch.extension);
    }
    if (patch.description !== undefined) {
      next.description = orDefault(Ivr, "description", patch.description);
    }
    if (patch.timeout !== undefined) {
      next.timeout = nonNegative("timeout", orDefault(Ivr, "timeout", patch.timeout));
    }
    if (patch.max_retries !== undefined) {
      next.max_retries = nonNegative(
        "max_retries",
        orDefault(Ivr, "max_retries", patch.max_retries),
      );
    }
    if (patch.status !== undefined && patch.status !== null) next.status = patch.status;
    if (patch.direct_extension_dial !== undefined && patch.direct_extension_dial !== null) {
      next.direct_extension_dial = patch.direct_extension_dial;
    }
    if (patch.greeting_language != null || patch.greeting_voice != null) {
      // A new language alone takes that language's default voice unless the current one fits;
      // a new voice alone brings its own language.
      const voice = checkedGreetingVoice(
        patch.greeting_language ?? (patch.greeting_voice ? null : current.greeting_language),
        patch.greeting_voice ?? current.greeting_voice,
        patch.greeting_voice == null,
      );
      next.greeting_language = voice.language;
      next.greeting_voice = voice.voice;
    }
    const extensionChanged = next.extension !== current.extension;
    if (extensionChanged) {
      const holder = holderInState(before, next.extension, { type: "ivr", id });
      if (holder) throw new Conflict(collisionMessage(next.extension, holder));
    }
    const after = structuredClone(before);
    after.ivrs[index] = next;
    assertValidAt(after, `ivrs[${index}]`);
    assertBreaksNothingElse(before, after, `ivrs[${index}]`, `Cannot change IVR '${current.name}'`);
    if (extensionChanged) {
      await releaseExtension(trx, orgId, current.extension, { type: "ivr", id });
      await claimExtension(trx, orgId, next.extension, { type: "ivr", id });
    }
    await createIvrRepository(trx, deps.clock).update(orgId, id, next, now);
    return ownIvrRecord(trx, orgId, id);
  });
  return ivrView(updated);
}

/**
 * Deletes an IVR, its options (same transaction) and its greeting file (after the commit), and
 * releases its extension. Refused with 400 while a DID or another IVR's option leads to it.
 */
export async function deleteIvr(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const { state: before, ivr } = await loadOwnIvr(trx, orgId, id);
    const after = structuredClone(before);
    after.ivrs = after.ivrs.filter((i) => i.id !== id);
    assertBreaksNothingElse(before, after, null, `Cannot delete IVR '${ivr.name}'`);
    await createIvrRepository(trx, deps.clock).delete(orgId, id);
    await releaseExtension(trx, orgId, ivr.extension, { type: "ivr", id });
  });
  await removeIvrGreeting(deps, id);
  await notifyConfigChanged(deps, orgId);
}

function menuOption(input: MenuOptionInput): IvrOption {
  const destination = input.action_destination ?? null;
  return {
    digit: String(input.digit),
    action_type: input.action_type,
    // hangup goes nowhere; an empty destination is a missing one (the rules name it).
    action_destination:
      input.action_type === "hangup" || destination === null || destination.trim() === ""
        ? null
        : destination,
    description: input.description ?? "",
  };
}

/**
 * Replaces every option of the IVR in one transaction and answers the new options in the order
 * given. Rules (SPEC.md §7): `Invalid digit: <d>`, `Invalid action_type: <v>`,
 * `action_destination required for action_type=<type>`, at most 12 options, one per digit, and a
 * destination that exists (a user's extension, a queue, another IVR, an ai_agent user, digits of a
 * mailbox, a phone number).
 */
export async function replaceIvrMenu(
  deps: DomainDeps,
  orgId: string,
  id: string,
  inputs: readonly MenuOptionInput[],
): Promise<IvrMenuOptionView[]> {
  const options = inputs.map(menuOption);
  const now = deps.clock().toISOString();
  await changeOrgConfig(deps, orgId, async (trx) => {
    const { state, index } = await loadOwnIvr(trx, orgId, id);
    const target = state.ivrs[index] as Ivr;
    target.options = options;
    assertValidAt(state, `ivrs[${index}]`);
    await createIvrRepository(trx, deps.clock).replaceOptions(id, options, now);
  });
  return options.map(menuOptionView);
}

/**
 * Publishes the IVR: schedules a deploy of the org's whole configuration (SPEC.md §4.4 rule 6)
 * and answers at once; the deploy runs in the background (SPEC.md §8).
 */
export async function publishIvr(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<{ success: true }> {
  await ownIvrRecord(deps.db, orgId, id);
  await notifyConfigChanged(deps, orgId);
  return { success: true };
}
