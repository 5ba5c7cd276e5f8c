import { writeFile } from "node:fs/promises";
import { Args, Flags } from "@oclif/core";
import { buildCallGraph, toDot, toMermaid } from "../../compiler/call-graph.js";
import { renderDotSvg } from "../../domain/routing/call-flow.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { loadOrgStates, orgSourceFlags } from "../lib/org-source.js";

export interface GraphResult {
  org: string;
  format: "mermaid" | "dot" | "svg";
  /** Where the picture was written; null when printed on stdout. */
  file: string | null;
  text: string;
}

export default class Graph extends PbxCommand {
  static override summary = "Draw an org's call flow: DID -> IVR -> queue -> member.";
  static override description =
    "Mermaid (for Markdown, GitHub), Graphviz DOT, or SVG rendered offline by Graphviz compiled " +
    "to WebAssembly (shipped inside the npm package; nothing is downloaded). Edges carry the " +
    "digit pressed, ring times and queue timeouts; inactive IVRs and users are dashed.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml",
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml --format svg --out acme.svg",
    "<%= config.bin %> <%= command.id %> --org acme --format dot | dot -Tpng > acme.png",
  ];
  static override args = {
    path: Args.string({ description: "One org file; or use --org." }),
  };
  static override flags = {
    format: Flags.option({
      options: ["mermaid", "dot", "svg"] as const,
      default: "mermaid" as const,
      summary: "Picture format.",
    })(),
    out: Flags.string({ summary: "File to write (default: stdout)." }),
    ...orgSourceFlags,
  };

  async run(): Promise<GraphResult> {
    const { args, flags } = await this.parse(Graph);
    const orgs = await loadOrgStates(args.path === undefined ? [] : [args.path], flags, (r) =>
      this.printDiagnostics(r.diagnostics),
    );
    if (orgs.length !== 1) throw new CommandFailure("graph draws one org: give one org file");
    const graph = buildCallGraph(orgs[0]!);
    const text =
      flags.format === "mermaid"
        ? toMermaid(graph)
        : flags.format === "dot"
          ? toDot(graph)
          : await renderDotSvg(toDot(graph));
    if (flags.out !== undefined) await writeFile(flags.out, text);
    else if (!this.jsonEnabled()) process.stdout.write(text);
    return { org: graph.title, format: flags.format, file: flags.out ?? null, text };
  }
}
