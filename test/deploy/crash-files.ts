// Large literal files for the crash test: every byte of a version is the same letter, so a
// partial file is easy to tell apart from a whole old or new one.
export const BIG_FILE_BYTES = 6 * 1024 * 1024;
const NAMES = ["extensions.conf", "pjsip.conf", "queues.conf", "extra/a.conf", "extra/b.conf"];

export function bigOrgFiles(letter: string) {
  return NAMES.map((name) => ({
    path: `orgs/org_big_/${name}`,
    content: `; ${letter}\n${letter.repeat(BIG_FILE_BYTES)}`,
  }));
}
