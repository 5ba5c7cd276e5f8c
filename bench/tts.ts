// npm run bench:tts [-- --runs 30]
// TARGETS.md: embedded engine real-time factor >= 10 (seconds of audio per CPU second) and
// preview p50 < 300 ms, both for a 100-character text. The engine is warmed once (WASM compiled
// and instantiated once, reused); cold start is measured separately, first.
//   RTF (engine)   : eSpeak NG alone, native 22050 Hz output
//   RTF (pipeline) : eSpeak NG + resampling to 8 kHz + WAV, what a greeting costs
//   preview        : previewWav() latency, in-thread and through the worker (the server's path)
import { EspeakEngine } from "../src/tts/espeak-engine.js";
import { resample } from "../src/tts/resample.js";
import { previewWav } from "../src/tts/synthesize.js";
import { encodeWav } from "../src/tts/wav.js";
import { WorkerSpeechEngine } from "../src/tts/worker-engine.js";

const argRuns = process.argv.indexOf("--runs");
const RUNS = argRuns > 0 ? Number(process.argv[argRuns + 1]) : 30;
const TEXT =
  "Thank you for calling Acme support. Press one for sales, two for billing, or stay on the line.";
const TEXT_100 = TEXT.padEnd(100, ".");
const LANGUAGE = "en-IN";
const VOICE = "en-IN-Wavenet-D";

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const percentile = (xs: number[], p: number) =>
  sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};
const fmt = (x: number, digits = 1) => x.toFixed(digits);

async function main(): Promise<void> {
  console.log(`bench:tts  text ${TEXT_100.length} chars, ${LANGUAGE}/${VOICE}, ${RUNS} runs each`);

  // Cold start: first WASM compile + instantiate + snapshot, then the first synthesis.
  const engine = new EspeakEngine();
  let started = performance.now();
  await engine.warm();
  const warmMs = performance.now() - started;
  started = performance.now();
  await engine.synthesize(TEXT_100, LANGUAGE, VOICE);
  const firstMs = performance.now() - started;
  console.log(`cold start: engine ready ${fmt(warmMs)} ms, first synthesis ${fmt(firstMs)} ms`);

  const engineRtf: number[] = [];
  const pipelineRtf: number[] = [];
  let audioSeconds = 0;
  for (let i = 0; i < RUNS; i++) {
    let cpu = process.cpuUsage();
    const audio = await engine.synthesize(TEXT_100, LANGUAGE, VOICE);
    const engineCpu = cpuSeconds(cpu);
    audioSeconds = audio.pcm.length / audio.sampleRate;
    engineRtf.push(audioSeconds / engineCpu);
    cpu = process.cpuUsage();
    const audio2 = await engine.synthesize(TEXT_100, LANGUAGE, VOICE);
    const telephony = resample(audio2);
    encodeWav(telephony.pcm, telephony.sampleRate);
    pipelineRtf.push(audioSeconds / cpuSeconds(cpu));
  }
  console.log(`audio per run: ${fmt(audioSeconds, 2)} s`);
  console.log(
    `RTF engine   : median ${fmt(percentile(engineRtf, 50))}x  (min ${fmt(sorted(engineRtf)[0]!)}x)`,
  );
  console.log(
    `RTF pipeline : median ${fmt(percentile(pipelineRtf, 50))}x  (min ${fmt(sorted(pipelineRtf)[0]!)}x)  target >= 10`,
  );

  const inThread: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await previewWav(engine, { text: TEXT_100, language: LANGUAGE, voice: VOICE });
    inThread.push(performance.now() - t);
  }
  console.log(
    `preview (in-thread): p50 ${fmt(percentile(inThread, 50))} ms  p95 ${fmt(percentile(inThread, 95))} ms`,
  );

  const worker = new WorkerSpeechEngine();
  started = performance.now();
  await worker.warm();
  console.log(`cold start: worker + engine ready ${fmt(performance.now() - started)} ms`);
  const viaWorker: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await previewWav(worker, { text: TEXT_100, language: LANGUAGE, voice: VOICE });
      viaWorker.push(performance.now() - t);
    }
  } finally {
    await worker.close();
  }
  console.log(
    `preview (worker)   : p50 ${fmt(percentile(viaWorker, 50))} ms  p95 ${fmt(percentile(viaWorker, 95))} ms  target p50 < 300`,
  );
}

await main();
