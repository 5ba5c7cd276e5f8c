import { Flags } from "@oclif/core";
import { EngineInitError, type EngineInitResult, initEngine } from "../../../engine/engine-init.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";

export default class EngineInit extends PbxCommand {
  static override summary =
    "Write the top-level Asterisk files that include pbxctl's generated tree.";
  static override description =
    "Writes into Asterisk's config directory (--etc): extensions.conf, pjsip.conf (with a UDP " +
    "transport) and queues.conf, each including the generated file of the same name; " +
    "manager.conf (an AMI user bound to 127.0.0.1), cdr_manager.conf (enabled) and modules.conf " +
    "(autoload). With --pjsip realtime also sorcery.conf, extconfig.conf and res_pgsql.conf, so " +
    "endpoints, auths, AORs and trunk registrations are read from PostgreSQL " +
    "(--database-url). The generated tree (--generated, default <etc>/pbxctl) is where `pbxctl deploy` " +
    "writes; `orgs` and `gateway` in --etc become symlinks to it because Asterisk resolves " +
    "relative includes against its config directory. Prints the environment that points pbxctl " +
    "at this engine; the AMI secret is shown once. Refuses to overwrite files without --force.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --etc /etc/asterisk",
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
      default: "0.0.0.0",
      summary: "Address of the PJSIP UDP transport.",
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
        force: flags.force,
        pjsip: flags.pjsip as "file" | "realtime",
        ...(flags["database-url"] ? { databaseUrl: flags["database-url"] } : {}),
      });
    } catch (error) {
      if (error instanceof EngineInitError) throw new CommandFailure(error.message);
      throw error;
    }
    if (!this.jsonEnabled()) {
      this.log(`wrote ${result.files.join(", ")} in ${result.etcDir}`);
      for (const link of result.symlinks) this.log(`linked ${result.etcDir}/${link}`);
      this.log(`generated tree: ${result.generatedDir}`);
      this.log("point pbxctl at this engine with:");
      for (const [name, value] of Object.entries(result.env)) this.log(`  export ${name}=${value}`);
    }
    return result;
  }
}
