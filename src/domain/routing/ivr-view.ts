// The API shape of an IVR: the SPEC.md §2 fields, with its menu options nested as `menuOptions`.
import type { ActionType, IvrOption } from "../../model/org-state.js";
import type { IvrMenuOptionView, IvrView } from "../../model/routing-views.js";
import { type IvrRecord, ivrFromRows } from "../../store/ivr-repository.js";

export type { IvrMenuOptionView, IvrView } from "../../model/routing-views.js";

/** One option as the API shows it (a stored option's action passed validation: one of ACTION_TYPES). */
export function menuOptionView(option: IvrOption): IvrMenuOptionView {
  const { digit, action_type, action_destination, description } = option;
  return { digit, action_type: action_type as ActionType, action_destination, description };
}

/** The API view of a stored IVR, options in their stored order. */
export function ivrView(record: IvrRecord): IvrView {
  const { id: _id, options, ...fields } = ivrFromRows(record.row, record.options);
  return {
    id: record.row.id,
    ...fields,
    created_at: record.row.created_at,
    updated_at: record.row.updated_at,
    menuOptions: options.map(menuOptionView),
  };
}
