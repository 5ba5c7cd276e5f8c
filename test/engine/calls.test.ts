// The traced calls (test/engine/call-traces.ts) on an engine whose PJSIP objects are files.
import { callTraceSuite } from "./call-traces.js";

callTraceSuite("file");
