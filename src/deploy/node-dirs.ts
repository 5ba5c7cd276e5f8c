// Where an engine node's media lives on the replicas' side (issue 25, docs/nodes.md "Media and
// recordings with several nodes"): beside the node's engine directory `<nodes dir>/<name>`,
// `<name>.sounds` is the node's own sounds directory (the deployer copies the media of the
// node's orgs into it before the reloads that name them) and `<name>.recordings` is the node's
// monitor directory (MixMonitor's files, read when a recording of a call the node carried is
// downloaded). A node name never holds a dot, so neither can be another node's directory.
import { join } from "node:path";

/** The node's sounds directory: what its Asterisk has as `<astdatadir>/sounds`. */
export function nodeSoundsDir(nodesDir: string, nodeName: string): string {
  return join(nodesDir, `${nodeName}.sounds`);
}

/** The node's recordings: what its Asterisk has as `<astspooldir>/monitor`. */
export function nodeRecordingsDir(nodesDir: string, nodeName: string): string {
  return join(nodesDir, `${nodeName}.recordings`);
}
