// The SIP realm, alone so that what needs only it (reading secrets) does not load the schemas.

/** Realm of every generated PJSIP auth section; part of each user's md5_cred. */
export const SIP_REALM = "pbxctl";
