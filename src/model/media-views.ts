// What the API answers for an org's media file (`/media/*`): the response schema, and (as
// `Static<>`) the view type the media use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime } from "./view-shapes.js";

/** A stored sound file of the org. */
export const MediaFileViewSchema = Type.Object(
  {
    name: Type.String(),
    sound: Type.String({
      description: "what the dialplan plays, relative to the sounds directory",
    }),
    size: Type.Integer({ description: "bytes" }),
    sample_rate: Type.Integer(),
    duration_seconds: Type.Number(),
    updated_at: DateTime,
  },
  { title: "MediaFile" },
);
export type MediaFileView = Static<typeof MediaFileViewSchema>;
