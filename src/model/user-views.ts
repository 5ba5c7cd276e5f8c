// What the API answers for a SIP user (`/users`): the response schema, its fields the model's
// `User` fields, and (as `Static<>`) the view type the user use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { User } from "./org-state.js";
import { modelField, UuidString } from "./view-shapes.js";

const F = User.properties;

/** A user's own fields: what a caller may set, each stored in a column (not its id or SIP credential). */
export const USER_FIELDS = [
  "extension",
  "name",
  "routing_type",
  "status",
  "ring_target",
  "phone_number",
  "ring_time",
  "outbound_did",
  "call_recording",
] as const;

/** A user as the API shows it: never its SIP credential. */
export const UserViewSchema = Type.Object(
  {
    id: UuidString,
    extension: modelField(F.extension),
    name: F.name,
    routing_type: modelField(F.routing_type),
    status: modelField(F.status),
    ring_target: modelField(F.ring_target),
    phone_number: modelField(F.phone_number),
    ring_time: modelField(F.ring_time),
    outbound_did: modelField(F.outbound_did),
    call_recording: modelField(F.call_recording),
    sip_username: Type.String({ description: "SIP auth username: `<context_prefix><extension>`" }),
  },
  { title: "User" },
);
export type UserView = Static<typeof UserViewSchema>;
