// Secrets referenced from an org file by environment variable name, so that no plaintext secret
// has to live in git. The environment is passed in: the model never reads process.env itself.
import { createHash } from "node:crypto";
import type { Diagnostic } from "./diagnostic.js";
import type { OrgState } from "./org-state.js";
import { SIP_REALM } from "./sip-realm.js";

/** The variables secrets are read from (process.env in the CLI, a plain object in tests). */
export type SecretEnvironment = Readonly<Record<string, string | undefined>>;

/** Hex MD5 of `username:realm:password`, the digest PJSIP's `password_digest=md5:` expects. */
export function sipDigest(username: string, password: string, realm: string = SIP_REALM): string {
  return createHash("md5").update(`${username}:${realm}:${password}`).digest("hex");
}

/**
 * One place an org file names a secret, found without the environment: either a fixed problem
 * (a secret given twice, a plaintext password) or a variable whose value goes into the state.
 * Loading splits on this line so that everything before it can be cached (no secret is ever
 * written anywhere) and only the reading of variables runs on every load.
 */
export type SecretReference =
  | { path: string; problem: Diagnostic }
  | { path: string; variable: string; target: SecretTarget };

/** Where a variable's value goes: a user's digest (of `username`), or a trunk's password. */
export type SecretTarget = { user: number; username: string } | { trunk: number };

/** The secret references of `state` (users first, then trunks, each in file order). */
export function secretReferencesOf(state: OrgState): SecretReference[] {
  const references: SecretReference[] = [];
  state.users.forEach((user, i) => {
    const sip = user.sip;
    if (!sip?.password_env) return;
    if (sip.md5_cred !== undefined) {
      const path = `users[${i}].sip`;
      const message = "set md5_cred or password_env, not both";
      references.push({ path, problem: { severity: "error", path, message } });
      return;
    }
    references.push({
      path: `users[${i}].sip.password_env`,
      variable: sip.password_env,
      target: { user: i, username: `${state.org.context_prefix}${user.extension}` },
    });
  });
  state.trunks.forEach((trunk, i) => {
    if (trunk.password_env === undefined) {
      if (trunk.password !== undefined) {
        const path = `trunks[${i}].password`;
        const message = "plaintext password in the file; prefer password_env";
        references.push({ path, problem: { severity: "warning", path, message } });
      }
      return;
    }
    if (trunk.password !== undefined) {
      const path = `trunks[${i}]`;
      const message = "set password or password_env, not both";
      references.push({ path, problem: { severity: "error", path, message } });
      return;
    }
    references.push({
      path: `trunks[${i}].password_env`,
      variable: trunk.password_env,
      target: { trunk: i },
    });
  });
  return references;
}

/** A secret read from the environment, ready to be set into the state it was found in. */
export interface ResolvedSecret {
  target: SecretTarget;
  value: string;
}

/**
 * Reads the variables of `references` from `env`: a diagnostic per fixed problem and per
 * variable that is not set (in the references' order), and the values found.
 */
export function readSecretReferences(
  references: readonly SecretReference[],
  env: SecretEnvironment,
): { diagnostics: Diagnostic[]; secrets: ResolvedSecret[] } {
  const diagnostics: Diagnostic[] = [];
  const secrets: ResolvedSecret[] = [];
  for (const reference of references) {
    if ("problem" in reference) {
      diagnostics.push(reference.problem);
      continue;
    }
    const value = env[reference.variable];
    if (value === undefined || value === "") {
      diagnostics.push({
        severity: "error",
        path: reference.path,
        message: `environment variable ${reference.variable} is not set`,
      });
      continue;
    }
    secrets.push({ target: reference.target, value });
  }
  return { diagnostics, secrets };
}

/** Sets, in place, secrets read by `readSecretReferences` into the state they were found in. */
export function applySecrets(state: OrgState, secrets: readonly ResolvedSecret[]): void {
  for (const { target, value } of secrets) {
    if ("user" in target) {
      const sip = state.users[target.user]?.sip;
      if (sip) sip.md5_cred = sipDigest(target.username, value);
    } else {
      const trunk = state.trunks[target.trunk];
      if (trunk) trunk.password = value;
    }
  }
}

/**
 * Resolves, in place, user `sip.password_env` into `sip.md5_cred` (username is
 * `<context_prefix><extension>`) and trunk `password_env` into `password`. Returns a diagnostic
 * for every variable that is not set and every secret given twice.
 */
export function resolveSecrets(state: OrgState, env: SecretEnvironment): Diagnostic[] {
  const { diagnostics, secrets } = readSecretReferences(secretReferencesOf(state), env);
  applySecrets(state, secrets);
  return diagnostics;
}
