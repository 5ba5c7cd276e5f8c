// The traced calls (test/engine/call-traces.ts) on an engine whose endpoints, auths and AORs are
// rows of PostgreSQL read through realtime (`engine init --pjsip realtime`, issue 24).
import { callTraceSuite } from "./call-traces.js";

callTraceSuite("realtime");
