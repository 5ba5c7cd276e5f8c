// pbxctl as an operator runs it against a real Asterisk: the engine booted on the top-level files
// of `engine init` (nothing generated yet), then the server over a fresh store with
// PBX_ENGINE=ami, deploying into that engine's generated tree and writing greetings into its
// sounds directory. The scheduler runs on a fake clock, so a test says when the debounce is over
// instead of sleeping; everything else (store, compiler, deployer, AMI) is the real thing.
import * as assert from "uvu/assert";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { type Rig, startRig } from "../integration/helpers.js";
import { boot } from "./helpers.js";

/** The environment `pbxctl serve` needs to drive `engine` (what `engine init` prints). */
export function serveEnv(engine: AsteriskInstance): Record<string, string> {
  return {
    PBX_ENGINE: "ami",
    PBX_AMI_HOST: "127.0.0.1",
    PBX_AMI_PORT: String(engine.amiPort),
    PBX_AMI_USERNAME: engine.amiUsername,
    PBX_AMI_SECRET: engine.amiSecret,
    PBX_ASTERISK_DIR: engine.generatedDir,
    PBX_SOUNDS_DIR: engine.soundsDir,
    PBX_RECORDINGS_DIR: engine.recordingsDir,
  };
}

type ApiBody = Awaited<ReturnType<Rig["request"]>>["body"];

export interface Service {
  engine: AsteriskInstance;
  rig: Rig;
  /** Creates an active org through the API; answers its id, context prefix and org-key headers. */
  createOrg(
    name?: string,
  ): Promise<{ id: string; prefix: string; headers: Record<string, string> }>;
  /** Sends `/api/v1<path>` as the org, asserts the status and answers the JSON body. */
  call(
    method: string,
    path: string,
    org: { headers: Record<string, string> },
    body?: unknown,
    status?: number,
  ): Promise<ApiBody>;
  /** Ends the scheduler's debounce and waits for the deploys it started (real AMI reloads). */
  deploy(): Promise<void>;
  /** Stops the server (pending deploys flushed), then the engine by PID. */
  stop(): Promise<void>;
}

/** Boots a fresh engine and a server driving it (`env` added to the server's environment). */
export async function startService(env: Record<string, string> = {}): Promise<Service> {
  const engine = await boot([]);
  let rig: Rig;
  try {
    rig = await startRig({ env: { ...serveEnv(engine), ...env } });
  } catch (error) {
    await engine.stop();
    throw error;
  }
  return {
    engine,
    rig,
    async createOrg(name = "Acme") {
      const org = await rig.createOrg(name);
      return { id: org.id, prefix: org.prefix, headers: { "x-api-key": org.api_key } };
    },
    async call(method, path, org, body, status = method === "POST" ? 201 : 200) {
      const res = await rig.request(method, `/api/v1${path}`, { headers: org.headers, body });
      assert.is(res.status, status, `${method} ${path}: ${res.text}`);
      return res.body;
    },
    // Past the 5 s cap of a burst, so any pending deploy runs now.
    deploy: () => rig.advance(6000),
    async stop() {
      try {
        await rig.close();
      } finally {
        await engine.stop();
      }
    },
  };
}

/** Runs `body` with a fresh engine and server; both are stopped whatever happens. */
export async function withService<T>(body: (service: Service) => Promise<T>): Promise<T> {
  const service = await startService();
  try {
    return await body(service);
  } finally {
    await service.stop();
  }
}
