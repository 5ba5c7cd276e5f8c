// Call-flow questions about the caller's own org: a simulated call (`POST /simulate`) and the
// call graph as a picture (`GET /call-flow.svg`). Answers come from the same rule functions the
// compiler writes the dialplan with.
import { Type } from "@sinclair/typebox";
import {
  digitsFromText,
  ownOrgCallFlowSvg,
  simulateOwnOrgCall,
  simulationInstant,
} from "../../domain/routing/call-flow.js";
import { ISO_INSTANT } from "../../model/time-conditions.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";

const NUMBER = "^\\+?[0-9]{3,20}$";
/** What a caller presses at one prompt. */
const PROMPT_DIGITS = "[0-9*#]{0,15}";

const SimulateBody = Type.Object(
  {
    did: Type.String({
      pattern: NUMBER,
      description: "The number called, in any form (local 0..., 91..., +91...)",
    }),
    digits: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.String({ pattern: `^${PROMPT_DIGITS}$` }), {
            maxItems: 50,
            description:
              'What the caller presses at each menu prompt, in order; "" lets it time out',
          }),
          Type.String({
            pattern: `^${PROMPT_DIGITS}(,${PROMPT_DIGITS}){0,49}$`,
            description:
              'The same as the CLI\'s --digits: "1,3", an empty entry lets a prompt time out',
          }),
        ],
        { description: 'The digits pressed at each prompt: ["1", "3"] or "1,3"' },
      ),
    ),
    caller: Type.Optional(Type.String({ pattern: NUMBER, description: "The caller's number" })),
    no_answer: Type.Optional(
      Type.Boolean({ description: "Nobody answers: queues and users time out" }),
    ),
    at: Type.Optional(
      Type.String({
        pattern: ISO_INSTANT,
        description:
          "When the call is made, ISO 8601 with its offset (2026-03-27T18:30:00Z); time conditions take the branch their zone's clock shows then. Default: now",
      }),
    ),
  },
  { additionalProperties: false, title: "SimulateRequest" },
);

const SimulationStep = Type.Object(
  {
    context: Type.String({ description: "generated dialplan context" }),
    exten: Type.String({ description: "extension in that context" }),
    kind: Type.String(),
    node: Type.Optional(Type.String({ description: "destination entered, e.g. `queue Sales`" })),
    subroutine: Type.Optional(Type.Boolean()),
    text: Type.String(),
  },
  { title: "SimulationStep" },
);

const Simulation = Type.Object(
  {
    org: Type.String(),
    did: Type.String(),
    steps: Type.Array(SimulationStep),
    outcome: Type.String(),
    path: Type.Array(Type.String(), { description: "destinations entered, in order" }),
    dial_out: Type.Optional(
      Type.Object(
        {
          number: Type.String({ description: "number sent to the trunk" }),
          trunk: Type.String(),
          caller_id: Type.String({ description: "caller ID on the wire" }),
        },
        { description: "when the call leaves through a trunk" },
      ),
    ),
  },
  { title: "Simulation" },
);

export const callFlowRoutes = [
  defineRoute({
    method: "post",
    path: "/simulate",
    tag: "Configuration Management",
    summary: "Simulate a call to one of the org's DIDs, step by step",
    description:
      "Walks the org's stored configuration as the generated dialplan would run it (DID aliases, IVR menus with retries and timeouts, queues and their timeout destinations, time conditions at the time `at`, users, outbound routes and caller ID) and names the context and extension of each step. Nothing is dialled.",
    auth: "org",
    body: SimulateBody,
    responses: { 200: { description: "The simulated call", schema: Simulation } },
    handler: ({ deps, body, principal }) =>
      simulateOwnOrgCall(deps.db, orgCaller(principal).orgId, {
        did: body.did,
        digits: typeof body.digits === "string" ? digitsFromText(body.digits) : (body.digits ?? []),
        ...(body.caller === undefined ? {} : { caller: body.caller }),
        noAnswer: body.no_answer ?? false,
        at: simulationInstant(body.at, deps.clock),
      }),
  }),

  defineRoute({
    method: "get",
    path: "/call-flow.svg",
    tag: "Configuration Management",
    summary: "The org's call flow as an SVG picture: DID -> IVR -> queue -> member",
    description:
      "Drawn from the stored configuration as the dialplan runs it: edges carry the digit pressed, member ring times and queue timeouts; inactive IVRs and users are dashed. Rendered on the server by Graphviz (WebAssembly), nothing fetched.",
    auth: "org",
    responses: {
      200: { description: "SVG image", contentType: "image/svg+xml", schema: Type.String() },
    },
    handler: async ({ deps, principal }) =>
      reply(200, await ownOrgCallFlowSvg(deps.db, orgCaller(principal).orgId), {
        "content-type": "image/svg+xml; charset=utf-8",
      }),
  }),
];
