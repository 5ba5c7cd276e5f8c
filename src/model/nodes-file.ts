// `nodes.yaml`: the engine nodes, where each org lives and the SIP edge in front of them, for
// store-less GitOps (issues 25 and 26): `pbxctl compile` writes the edge's `edge/` tree from it,
// `pbxctl plan --against` shows its diff. Parsed like org files, so every problem is reported at
// file:line:col. AMI credentials are not here: compiling the edge does not need them.
import { type Static, Type } from "@sinclair/typebox";
import { Ajv, type ValidateFunction } from "ajv";
import type { Diagnostic } from "./diagnostic.js";
import { EngineNodeFields } from "./engine-node.js";
import { readableErrors } from "./schema-check.js";
import { parseYaml, positionOf, type SourceDiagnostic, type YamlSource, yamlData } from "./yaml.js";

/** Where `pbxctl compile` and `plan` look for it unless `--nodes` says. */
export const NODES_FILE = "nodes.yaml";

const Address = Type.String({
  pattern: "^([0-9.]{7,15}|[0-9A-Fa-f:.]{2,45})(/[0-9]{1,3})?$",
  description: "an IP address or a CIDR range",
});

export const NodesFileSchema = Type.Object(
  {
    edge: Type.Object(
      {
        sip_address: Type.String({
          pattern: "^([0-9.]{7,15}|[0-9A-Fa-f:.]{2,45})$",
          description: "the IP address phones and carriers send to",
        }),
        sip_port: Type.Integer({ minimum: 1, maximum: 65535, default: 5060 }),
        rpc_port: Type.Integer({ minimum: 1, maximum: 65535, default: 5081 }),
        data_dir: Type.String({
          pattern: "^/[A-Za-z0-9._/-]{0,200}$",
          description: "the edge's directory on its host (absolute)",
        }),
        probe_interval: Type.Integer({ minimum: 1, maximum: 3600, default: 10 }),
        register_expiry: Type.Integer({
          minimum: 60,
          maximum: 86400,
          default: 300,
          description:
            "the longest registration a phone gets (seconds): phones follow an org move within it",
        }),
      },
      { additionalProperties: false },
    ),
    nodes: Type.Array(
      Type.Object(
        {
          name: EngineNodeFields.name,
          sip_address: EngineNodeFields.sip_address,
          state: Type.Union([...EngineNodeFields.state.anyOf], { default: "active" }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
    placements: Type.Record(
      Type.String({
        pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
      }),
      Type.Object(
        {
          node: EngineNodeFields.name,
          standby_node: Type.Optional(Type.Union([EngineNodeFields.name, Type.Null()])),
        },
        { additionalProperties: false },
      ),
      { default: {} },
    ),
    carriers: Type.Array(Address, { default: [] }),
  },
  { additionalProperties: false },
);

export type NodesFile = Static<typeof NodesFileSchema>;

/** A loaded nodes file and where its parts are written (for checks against the org files). */
export interface LoadedNodesFile {
  file: string;
  nodes: NodesFile;
  positionOf(path: string): { line: number; col: number };
}

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv({ useDefaults: true, allErrors: true, verbose: true }).compile(
    NodesFileSchema,
  );
  return compiled;
}

function placed(source: YamlSource, d: Diagnostic, options: { key?: boolean } = {}) {
  return { ...d, file: source.file, ...positionOf(source, d.path, options) };
}

/** Parses and checks one nodes file on its own (schema, names, references between nodes). */
export function loadNodesFile(
  file: string,
  text: string,
): { loaded: LoadedNodesFile | null; diagnostics: SourceDiagnostic[] } {
  const { source, problems } = parseYaml(text, file);
  const diagnostics: SourceDiagnostic[] = problems.map((p) => ({ ...p, file, path: "" }));
  if (diagnostics.some((d) => d.severity === "error")) return { loaded: null, diagnostics };
  const read = yamlData(source, NodesFileSchema);
  if ("problem" in read)
    return { loaded: null, diagnostics: [{ ...read.problem, file, path: "" }] };
  const data = read.data as NodesFile | null;
  const validate = validator();
  if (!validate(data)) {
    const errors = readableErrors(validate.errors ?? []);
    return {
      loaded: null,
      diagnostics: errors
        .map((d) => placed(source, d, { key: d.at === "key" }))
        .sort((a, b) => a.line - b.line || a.col - b.col),
    };
  }
  const nodes = data!;
  const problems2: Diagnostic[] = [];
  const names = new Set<string>();
  nodes.nodes.forEach((node, index) => {
    if (names.has(node.name)) {
      problems2.push({
        severity: "error",
        path: `nodes[${index}].name`,
        message: `node ${node.name} is defined twice`,
      });
    }
    names.add(node.name);
  });
  for (const [orgId, placement] of Object.entries(nodes.placements)) {
    if (!names.has(placement.node)) {
      problems2.push({
        severity: "error",
        path: `placements.${orgId}.node`,
        message: `no node is named ${placement.node}`,
      });
    }
    const standby = placement.standby_node;
    if (standby !== undefined && standby !== null) {
      if (!names.has(standby)) {
        problems2.push({
          severity: "error",
          path: `placements.${orgId}.standby_node`,
          message: `no node is named ${standby}`,
        });
      } else if (standby === placement.node) {
        problems2.push({
          severity: "error",
          path: `placements.${orgId}.standby_node`,
          message: "the standby node must be another node than the primary node",
        });
      }
    }
  }
  diagnostics.push(...problems2.map((d) => placed(source, d)));
  if (diagnostics.some((d) => d.severity === "error")) return { loaded: null, diagnostics };
  return {
    loaded: { file, nodes, positionOf: (path) => positionOf(source, path) },
    diagnostics,
  };
}

/**
 * The placements checked against the org files: a placement of an org no file defines is an
 * error (a typo would otherwise leave the org unrouted); an active org with no placement is a
 * warning (the edge answers its phones and numbers 404).
 */
export function checkPlacements(
  loaded: LoadedNodesFile,
  orgs: readonly { id: string; name: string; active: boolean }[],
): SourceDiagnostic[] {
  const known = new Set(orgs.map((org) => org.id));
  const out: SourceDiagnostic[] = [];
  for (const orgId of Object.keys(loaded.nodes.placements)) {
    if (known.has(orgId)) continue;
    const path = `placements.${orgId}`;
    out.push({
      severity: "error",
      path,
      message: `no org file defines org ${orgId}`,
      file: loaded.file,
      ...loaded.positionOf(path),
    });
  }
  for (const org of orgs) {
    if (!org.active || Object.hasOwn(loaded.nodes.placements, org.id)) continue;
    out.push({
      severity: "warning",
      path: "placements",
      message: `org ${org.name} (${org.id}) has no placement: the edge does not route it`,
      file: loaded.file,
      ...loaded.positionOf("placements"),
    });
  }
  return out;
}
