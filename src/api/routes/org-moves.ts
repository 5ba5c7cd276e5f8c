// `org move` (issue 25, docs/nodes.md "Moving an org"), admin only: ask for an org to move to
// another engine node (202: the move is carried out in the background by the `org-moves` lease
// holder) and follow it. An org's credentials never see it: placement is platform detail.
import { Type } from "@sinclair/typebox";
import { getOrgMove, MAX_CALL_DRAIN_TIMEOUT_S, moveOrg } from "../../domain/nodes/org-moves.js";
import { MOVE_PHASES } from "../../store/org-move-repository.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const TAG = "Configuration Management";

const DateTime = Type.String({ format: "date-time" });

const OrgMove = Type.Object(
  {
    id: UuidString,
    org_id: UuidString,
    from_node: Type.String({ description: "the node the org leaves (name)" }),
    to_node: Type.String({ description: "the node the org goes to (name)" }),
    phase: Type.Union(
      MOVE_PHASES.map((phase) => Type.Literal(phase)),
      {
        description:
          "deploying (on the target, verified), switching (placement and edge), re-registering (phones told to re-register), draining (waiting for the org's calls on the source to end), removing (from the source), done",
      },
    ),
    call_drain_timeout_seconds: Type.Integer(),
    requested_at: DateTime,
    updated_at: DateTime,
    finished_at: Nullable(DateTime),
    phones_notified: Nullable(
      Type.Integer({ description: "phones sent a NOTIFY check-sync; null without an edge" }),
    ),
    drain: Nullable(
      Type.Object({
        started_at: DateTime,
        deadline: DateTime,
        calls: Nullable(
          Type.Integer({ description: "the org's calls still up on the source at the last look" }),
        ),
        timed_out: Type.Boolean({
          description: "the deadline passed with calls up: the move went on without waiting",
        }),
      }),
    ),
    last_error: Nullable(
      Type.String({ description: "why the current step failed last; it is retried" }),
    ),
  },
  { title: "OrgMove" },
);

export const orgMoveRoutes = [
  defineRoute({
    method: "post",
    path: "/admin/organizations/{id}/move",
    tag: TAG,
    summary: "Move an org to another engine node, without cutting its calls",
    description:
      "Deploys the org on the target and verifies it, switches its placement (and the SIP edge), tells its registered phones to re-register (with an edge), waits until the source carries no call of the org (at most call_drain_timeout_seconds; then the move goes on and says so), and removes the org from the source. Answers at once with the move; GET follows it.",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        to: Type.String({
          minLength: 1,
          maxLength: 63,
          pattern: "^[A-Za-z0-9-]*$",
          description: "the target node's name or id",
        }),
        call_drain_timeout_seconds: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: MAX_CALL_DRAIN_TIMEOUT_S,
            description: "how long to wait for the org's calls on the source to end (default 3600)",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      202: { description: "The move, recorded and under way", schema: OrgMove },
      409: {
        description:
          "The org is already on that node or being moved, or the node is draining, down or full",
      },
    },
    handler: async ({ deps, params, body }) => reply(202, await moveOrg(deps, params.id, body)),
  }),
  defineRoute({
    method: "get",
    path: "/admin/organizations/{id}/move",
    tag: TAG,
    summary: "The org's latest move and the phase it is in",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "The move", schema: OrgMove } },
    handler: ({ deps, params }) => getOrgMove(deps, params.id),
  }),
];
