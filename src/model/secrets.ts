// Secrets referenced from an org file by environment variable name, so that no plaintext secret
// has to live in git. The environment is passed in: the model never reads process.env itself.
import { createHash } from "node:crypto";
import type { Diagnostic } from "./diagnostic.js";
import { type OrgState, SIP_REALM } from "./org-state.js";

/** The variables secrets are read from (process.env in the CLI, a plain object in tests). */
export type SecretEnvironment = Readonly<Record<string, string | undefined>>;

/** Hex MD5 of `username:realm:password`, the digest PJSIP's `password_digest=md5:` expects. */
export function sipDigest(username: string, password: string, realm: string = SIP_REALM): string {
  return createHash("md5").update(`${username}:${realm}:${password}`).digest("hex");
}

/**
 * Resolves, in place, user `sip.password_env` into `sip.md5_cred` (username is
 * `<context_prefix><extension>`) and trunk `password_env` into `password`. Returns a diagnostic
 * for every variable that is not set and every secret given twice.
 */
export function resolveSecrets(state: OrgState, env: SecretEnvironment): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const read = (name: string, path: string): string | undefined => {
    const value = env[name];
    if (value === undefined || value === "") {
      problems.push({
        severity: "error",
        path,
        message: `environment variable ${name} is not set`,
      });
      return undefined;
    }
    return value;
  };
  state.users.forEach((user, i) => {
    const sip = user.sip;
    if (!sip?.password_env) return;
    if (sip.md5_cred !== undefined) {
      problems.push({
        severity: "error",
        path: `users[${i}].sip`,
        message: "set md5_cred or password_env, not both",
      });
      return;
    }
    const password = read(sip.password_env, `users[${i}].sip.password_env`);
    if (password !== undefined) {
      sip.md5_cred = sipDigest(`${state.org.context_prefix}${user.extension}`, password);
    }
  });
  state.trunks.forEach((trunk, i) => {
    if (trunk.password_env === undefined) {
      if (trunk.password !== undefined) {
        problems.push({
          severity: "warning",
          path: `trunks[${i}].password`,
          message: "plaintext password in the file; prefer password_env",
        });
      }
      return;
    }
    if (trunk.password !== undefined) {
      problems.push({
        severity: "error",
        path: `trunks[${i}]`,
        message: "set password or password_env, not both",
      });
      return;
    }
    const password = read(trunk.password_env, `trunks[${i}].password_env`);
    if (password !== undefined) trunk.password = password;
  });
  return problems;
}
