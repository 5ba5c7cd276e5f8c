// The API shape of an IVR: the SPEC.md §2 fields, with its menu options nested as `menuOptions`.
import type { Ivr, IvrOption } from "../../model/org-state.js";
import { type IvrRecord, ivrFromRows } from "../../store/ivr-repository.js";

export interface IvrMenuOptionView {
  digit: string;
  action_type: string;
  action_destination: string | null;
  description: string;
}

export interface IvrView {
  id: string;
  name: string;
  extension: string;
  description: string;
  timeout: number;
  max_retries: number;
  status: Ivr["status"];
  greeting_language: string;
  greeting_voice: string;
  greeting_prompt: string | null;
  direct_extension_dial: boolean;
  created_at: string;
  updated_at: string;
  menuOptions: IvrMenuOptionView[];
}

/** One option as the API shows it. */
export function menuOptionView(option: IvrOption): IvrMenuOptionView {
  return {
    digit: option.digit,
    action_type: option.action_type,
    action_destination: option.action_destination,
    description: option.description,
  };
}

/** The API view of a stored IVR, options in their stored order. */
export function ivrView(record: IvrRecord): IvrView {
  const ivr = ivrFromRows(record.row, record.options);
  return {
    id: record.row.id,
    name: ivr.name,
    extension: ivr.extension,
    description: ivr.description,
    timeout: ivr.timeout,
    max_retries: ivr.max_retries,
    status: ivr.status,
    greeting_language: ivr.greeting_language,
    greeting_voice: ivr.greeting_voice,
    greeting_prompt: ivr.greeting_prompt,
    direct_extension_dial: ivr.direct_extension_dial,
    created_at: record.row.created_at,
    updated_at: record.row.updated_at,
    menuOptions: ivr.options.map(menuOptionView),
  };
}
