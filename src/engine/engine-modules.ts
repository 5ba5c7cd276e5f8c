// The Asterisk modules a pbxctl engine loads. Secure by default: `engine init` writes
// `autoload = no` and loads only these, so a PBX host opens no IAX2, DUNDi, UNISTIM, ARI/HTTP,
// AGI or WebSocket listener it never asked for, and no dialplan function that reaches the shell
// or the environment (func_shell, func_env) exists even if a value ever slipped through.
// Checked against Asterisk 22.10: with exactly this list and the files `engine init` writes,
// the engine boots with no WARNING or ERROR line (test/engine/load.test.ts).

/** One group of modules and why pbxctl needs it. */
export interface ModuleGroup {
  why: string;
  modules: readonly string[];
}

export const ENGINE_MODULE_GROUPS: readonly ModuleGroup[] = [
  {
    why: "timing and the config/sorcery back ends PJSIP reads its objects through",
    modules: [
      "res_timing_timerfd",
      "res_sorcery_config",
      "res_sorcery_memory",
      "res_sorcery_astdb",
    ],
  },
  {
    why: "PJSIP: phones and trunks (digest auth, registrar, outbound registration, identify by IP)",
    modules: [
      "res_pjproject",
      "res_pjsip",
      "res_pjsip_session",
      "chan_pjsip",
      "res_pjsip_authenticator_digest",
      "res_pjsip_outbound_authenticator_digest",
      "res_pjsip_endpoint_identifier_user",
      "res_pjsip_endpoint_identifier_ip",
      "res_pjsip_registrar",
      "res_pjsip_outbound_registration",
      "res_pjsip_sdp_rtp",
      "res_rtp_asterisk",
      "res_pjsip_caller_id",
      "res_pjsip_dtmf_info",
      "res_pjsip_rfc3326",
      "res_pjsip_nat",
      "res_pjsip_diversion",
      "res_pjsip_path",
      "res_pjsip_acl",
      "res_pjsip_logger",
      "res_pjsip_header_funcs",
      "res_pjsip_dlg_options",
    ],
  },
  {
    why: "`org move` tells a moved org's phones to re-register (AMI PJSIPNotify, check-sync)",
    modules: ["res_pjsip_notify"],
  },
  {
    why: "transfers from phones (REFER) and voicemail waiting lamps (MWI)",
    modules: [
      "res_pjsip_pubsub",
      "res_pjsip_refer",
      "res_pjsip_mwi",
      "res_pjsip_mwi_body_generator",
    ],
  },
  {
    why: "bridging calls, holding queue callers, transfer features",
    modules: [
      "bridge_simple",
      "bridge_native_rtp",
      "bridge_holding",
      "bridge_softmix",
      "bridge_builtin_features",
      "bridge_builtin_interval_features",
      "chan_bridge_media",
    ],
  },
  {
    why: "the applications the generated dialplan calls",
    modules: [
      "pbx_config",
      "app_dial",
      "app_queue",
      "app_voicemail",
      "app_playback",
      "app_stack",
      "app_mixmonitor",
      "app_senddtmf",
      "app_userevent",
      "app_verbose",
      "app_echo",
      "app_transfer",
      "app_blind_transfer",
      "res_musiconhold",
      "res_clioriginate",
    ],
  },
  {
    why: "the dialplan functions it uses (no SHELL, no ENV, no FILE writes)",
    modules: [
      "func_callerid",
      "func_cdr",
      "func_channel",
      "func_db",
      "func_global",
      "func_groupcount",
      "func_logic",
      "func_strings",
      "func_math",
      "func_hangupcause",
      "func_timeout",
      "func_dialplan",
      "func_pjsip_endpoint",
      "func_pjsip_contact",
      "func_pjsip_aor",
    ],
  },
  {
    why: "sound files (greetings are 8 kHz WAV) and the common phone codecs",
    modules: [
      "format_wav",
      "format_gsm",
      "format_pcm",
      "format_sln",
      "format_wav_gsm",
      "codec_ulaw",
      "codec_alaw",
      "codec_a_mu",
      "codec_gsm",
      "codec_resample",
      "codec_g722",
    ],
  },
  {
    why: "call records as AMI events (call history, tenant isolation rule 3)",
    modules: ["cdr_manager"],
  },
];

/** modules.conf: load only what pbxctl uses, plus `extra` (realtime mode's driver and wizards). */
export function modulesConf(extra?: ModuleGroup): string {
  const lines = [
    "; Written by `pbxctl engine init`: load only what pbxctl uses (secure by default). Other",
    "; channel drivers and listeners (IAX2, DUNDi, UNISTIM, ARI/HTTP, AGI, WebSocket) stay off;",
    "; add a `load =>` line here to opt in to one.",
    "[modules]",
    "autoload = no",
  ];
  for (const group of extra ? [...ENGINE_MODULE_GROUPS, extra] : ENGINE_MODULE_GROUPS) {
    lines.push("", `; ${group.why}`);
    for (const module of group.modules) lines.push(`load => ${module}.so`);
  }
  lines.push("");
  return lines.join("\n");
}
