import { Flags } from "@oclif/core";
import {
  DEFAULT_SIP_BIND,
  EngineInitError,
  type EngineInitResult,
  initEngine,
} from "../../../engine/engine-init.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";

export default class EngineInit extends PbxCommand {
  static override summary =
    "Write the top-level Asterisk files that include pbxctl's generated tree.";
  static override description =
    "Writes into Asterisk's config directory (--etc): extensions.conf, pjsip.conf (UDP and TCP " +
    "transports on --sip-bind, loopback unless told otherwise, and with --carrier an endpoint " +
    "whose calls start in the generated gateway-inbound context) and queues.conf, each " +
    "including the generated file of the same name; " +
    "manager.conf (an AMI user bound to 127.0.0.1), cdr_manager.conf (enabled) and modules.conf " +
    "(autoload). With --pjsip realtime also sorcery.conf, extconfig.conf and res_pgsql.conf, so " +
    "endpoints, auths, AORs and trunk registrations are read from PostgreSQL " +
    "(--database-url). The generated tree (--generated, default <etc>/pbxctl) is where `pbxctl deploy` " +
    "writes; `orgs` and `gateway` in --etc become symlinks to it because Asterisk resolves " +
    "relative includes against its config directory. Prints the environment that points pbxctl " +
    "at this engine (PBX_SOUNDS_DIR and PBX_RECORDINGS_DIR from the astdatadir and astspooldir " +
    "of <etc>/asterisk.conf, else Asterisk's defaults); the AMI secret is shown once. Says on " +
    "stderr when SIP listens on loopback only. Refuses to overwrite files without --force.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --etc /etc/asterisk",
    '<%= config.bin %> <%= command.id %> --etc /etc/asterisk --sip-bind "$SIP_ADDRESS" --carrier "$CARRIER_ADDRESS"',
    '<%= config.bin %> <%= command.id %> --etc /etc/asterisk --generated /var/lib/pbxctl/asterisk --ami-secret "$AMI_SECRET"',
  ];
  static override flags = {
    etc: Flags.directory({ required: true, summary: "Asterisk's config directory (astetcdir)." }),
    generated: Flags.directory({ summary: "pbxctl's generated tree [default: <etc>/pbxctl]." }),
    "ami-user": Flags.string({ default: "pbxctl", summary: "AMI user name." }),
    "ami-secret": Flags.string({ summary: "AMI secret [default: 48 random hex characters]." }),
    "ami-port": Flags.integer({
      default: 5038,
      min: 1,
      max: 65535,
      summary: "AMI port (bound to 127.0.0.1).",
    }),
    "sip-bind": Flags.string({
      default: DEFAULT_SIP_BIND,
      summary:
        "Address of the PJSIP UDP and TCP transports (loopback by default: give the address phones and the carrier reach).",
    }),
    carrier: Flags.string({
      multiple: true,
      summary:
        "IP address or CIDR range of the carrier sending DID calls (repeatable): they start in gateway-inbound.",
    }),
    "sip-port": Flags.integer({
      default: 5060,
      min: 1,
      max: 65535,
      summary: "Port of the PJSIP UDP transport.",
    }),
    force: Flags.boolean({ default: false, summary: "Overwrite existing files." }),
    pjsip: Flags.string({
      options: ["file", "realtime"],
      default: "file",
      summary: "Where Asterisk reads PJSIP objects: pjsip.conf, or PostgreSQL (realtime).",
    }),
    "database-url": Flags.string({
      summary: "postgres://user:password@host:port/db for --pjsip realtime (res_pgsql.conf).",
    }),
    node: Flags.string({
      summary:
        "With --pjsip realtime: the engine node this Asterisk is; it reads that node's orgs only.",
    }),
    "system-name": Flags.string({
      summary: "Asterisk's systemname (asterisk.conf [options]); each engine node needs its own.",
    }),
  };

  async run(): Promise<EngineInitResult> {
    const { flags } = await this.parse(EngineInit);
    let result: EngineInitResult;
    try {
      result = await initEngine({
        etcDir: flags.etc,
        ...(flags.generated ? { generatedDir: flags.generated } : {}),
        amiUsername: flags["ami-user"],
        ...(flags["ami-secret"] ? { amiSecret: flags["ami-secret"] } : {}),
        amiPort: flags["ami-port"],
        sipBind: flags["sip-bind"],
        sipPort: flags["sip-port"],
        ...(flags.carrier ? { carriers: flags.carrier } : {}),
        force: flags.force,
        pjsip: flags.pjsip as "file" | "realtime",
        ...(flags["database-url"] ? { databaseUrl: flags["database-url"] } : {}),
        ...(flags.node !== undefined ? { node: flags.node } : {}),
        ...(flags["system-name"] !== undefined ? { systemName: flags["system-name"] } : {}),
      });
    } catch (error) {
      if (error instanceof EngineInitError) throw new CommandFailure(error.message);
      throw error;
    }
    if (!this.jsonEnabled()) {
      this.log(`wrote ${result.files.join(", ")} in ${result.etcDir}`);
      for (const link of result.symlinks) this.log(`linked ${result.etcDir}/${link}`);
      if (result.systemName !== undefined) {
        this.log(`set systemname = ${result.systemName} in ${result.etcDir}/asterisk.conf`);
      }
      this.log(`generated tree: ${result.generatedDir}`);
      this.log("point pbxctl at this engine with:");
      for (const [name, value] of Object.entries(result.env)) this.log(`  export ${name}=${value}`);
      this.log(`(sounds and recordings directories from ${result.directoriesFrom})`);
    }
    if (result.sipLoopbackOnly) {
      // On stderr even with --json: a phone on another machine would fail with no other clue.
      this.logToStderr(
        `note: SIP listens on ${result.sipListen} (loopback) only: phones and carriers on other ` +
          "machines cannot reach it. Pass --sip-bind <address> (0.0.0.0: every interface) to serve them.",
      );
    }
    return result;
  }
}
