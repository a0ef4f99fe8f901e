// Preloaded into the modelmux process by `BENCH_HEAP_PROF=1 npm run bench -- proxy`
// (`node --import …/heap-sampler.mjs`): V8's sampling heap profiler, keeping the samples of objects
// that the GC has already collected, so the profile shows where a request allocates, not only what
// is still alive at the end (`--heap-prof` keeps only the latter). Written as
// `<BENCH_HEAP_PROF_DIR>/modelmux-<pid>.heapprofile` when the process exits.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const session = new Session();
session.connect();
session.post("HeapProfiler.startSampling", {
  samplingInterval: 16384,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
process.on("exit", () => {
  // An in-process session answers synchronously, so this completes before the process ends.
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error) return void process.stderr.write(`heap-sampler: ${error.message}\n`);
    writeFileSync(`${process.env.BENCH_HEAP_PROF_DIR ?? "."}/modelmux-${process.pid}.heapprofile`, JSON.stringify(result.profile));
  });
});
