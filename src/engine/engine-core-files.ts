// Config files of Asterisk's core and of the modules `engine init` loads that pbxctl does not
// generate. Asterisk 22 logs a WARNING or ERROR at boot for each one that is missing, which would
// drown a real problem in a log that must stay clean; each holds only what pbxctl relies on.

const HEADER = "; Written by `pbxctl engine init`.";

/** path (relative to --etc) -> content. */
export const CORE_CONFIG_FILES: ReadonlyMap<string, string> = new Map([
  [
    "cdr.conf",
    // Call records on (cdr_manager turns them into AMI events); no CSV files on disk. Asterisk
    // drops the records of unanswered calls unless asked: a missed call is a call record too.
    [HEADER, "[general]", "enable = yes", "unanswered = yes", "congestion = yes", ""].join("\n"),
  ],
  ["cel.conf", [HEADER, "[general]", "enable = no", ""].join("\n")],
  ["features.conf", [HEADER, "[general]", ""].join("\n")],
  ["ccss.conf", [HEADER, "[general]", ""].join("\n")],
  ["udptl.conf", [HEADER, "[general]", ""].join("\n")],
  ["acl.conf", [HEADER, ""].join("\n")],
  ["pjproject.conf", [HEADER, "[startup]", ""].join("\n")],
  // res_pjsip_notify declines to load without it; `org move` sends its NOTIFY with AMI
  // PJSIPNotify's Variable (Event=check-sync), so no named notification is needed here.
  ["pjsip_notify.conf", [HEADER, ""].join("\n")],
  [
    "indications.conf",
    // Call-progress tones heard on Playtones/Busy/Congestion; India first (the owned number range
    // is Indian), the US as the stock default. Values from Asterisk's sample file.
    [
      HEADER,
      "[general]",
      "country = in",
      "",
      "[in]",
      "description = India",
      "ringcadence = 400,200,400,2000",
      "dial = 400*25",
      "busy = 400/750,0/750",
      "ring = 400*25/400,0/200,400*25/400,0/2000",
      "congestion = 400/250,0/250",
      "callwaiting = 400/200,0/100,400/200,0/7500",
      "dialrecall = !350+440/100,!0/100,!350+440/100,!0/100,!350+440/100,!0/100,350+440",
      "record = 1400/500,0/15000",
      "info = !950/330,!1400/330,!1800/330,0/1000",
      "",
      "[us]",
      "description = United States / North America",
      "ringcadence = 2000,4000",
      "dial = 350+440",
      "busy = 480+620/500,0/500",
      "ring = 440+480/2000,0/4000",
      "congestion = 480+620/250,0/250",
      "callwaiting = 440/300,0/10000",
      "dialrecall = !350+440/100,!0/100,!350+440/100,!0/100,!350+440/100,!0/100,350+440",
      "record = 1400/500,0/15000",
      "info = !950/330,!1400/330,!1800/330,0",
      "",
    ].join("\n"),
  ],
]);
