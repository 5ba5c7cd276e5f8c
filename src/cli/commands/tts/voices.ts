import { type LanguageGroup, VOICE_CATALOGUE } from "../../../tts/voices.js";
import { PbxCommand } from "../../lib/base-command.js";

export default class TtsVoices extends PbxCommand {
  static override summary = "List the speech languages and voices (what GET /tts/voices returns).";
  static override description =
    "Each voice shows its gender and the eSpeak NG voice the embedded engine speaks it with.";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> --json",
  ];

  async run(): Promise<readonly LanguageGroup[]> {
    await this.parse(TtsVoices);
    if (!this.jsonEnabled()) {
      for (const group of VOICE_CATALOGUE) {
        this.log(`${group.language}  ${group.name}  (espeak: ${group.espeakVoice})`);
        if (group.espeakFallback) this.log(`  note: ${group.espeakFallback}`);
        for (const voice of group.voices) {
          const isDefault = voice.name === group.defaultVoice ? "  default" : "";
          this.log(
            `  ${voice.name.padEnd(20)} ${voice.gender.padEnd(7)} ${voice.espeak}${isDefault}`,
          );
        }
      }
    }
    return VOICE_CATALOGUE;
  }
}
