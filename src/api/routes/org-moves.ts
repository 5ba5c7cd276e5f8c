// `org move` (issue 25, docs/nodes.md "Moving an org"), admin only: ask for an org to move to
// another engine node (202: the move is carried out in the background by the `org-moves` lease
// holder) and follow it. An org's credentials never see it: placement is platform detail.
import { Type } from "@sinclair/typebox";
import { getOrgMove, MAX_CALL_DRAIN_TIMEOUT_S, moveOrg } from "../../domain/nodes/org-moves.js";
import { OrgMoveViewSchema } from "../../model/node-views.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams } from "../schemas.js";

const TAG = "Configuration Management";

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
      202: { description: "The move, recorded and under way", schema: OrgMoveViewSchema },
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
    responses: { 200: { description: "The move", schema: OrgMoveViewSchema } },
    handler: ({ deps, params }) => getOrgMove(deps, params.id),
  }),
];
