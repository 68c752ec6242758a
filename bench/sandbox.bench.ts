/**
 * Sandbox benchmark (`npx tsx bench/sandbox.bench.ts`): `runJs` calls per second on one thread, a
 * fresh QuickJS runtime and context per call with the default limits (deadline, heap cap, output and
 * value caps, console), against the floor in the same run: bare quickjs-emscripten creating a runtime
 * and context, evaluating the same code and freeing both. Target: ≥ 5,000 runJs calls/s.
 *
 * Three workloads: a number (`1+1`, what calc-like calls return), a console.log line, and an object
 * result (formatted by the guest's object formatter). Rounds alternate the two sides so a change in
 * the machine's load hits both; the load average is recorded before and after.
 * Writes bench/results/sandbox.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { loadQuickJS, runJs } from '../src/sandbox/quickjs.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WORKLOADS: Record<string, string> = {
  number: '1 + 1',
  console: 'console.log("sum", 2 + 3); 5',
  object: '({ a: [1, 2, 3], b: "x" })',
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = (): number[] => os.loadavg().map((l) => Number(l.toFixed(2)));

async function callsPerSecond(call: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await call();
  return CALLS / ((performance.now() - start) / 1000);
}

const quickjs = await loadQuickJS();
function bare(code: string): void {
  const runtime = quickjs.newRuntime();
  const ctx = runtime.newContext();
  const result = ctx.evalCode(code);
  if (result.error) result.error.dispose();
  else result.value.dispose();
  ctx.dispose();
  runtime.dispose();
}

const loadBefore = load();
console.log(`load average before: ${loadBefore.join(' ')} (${os.cpus().length} cores)`);
const results: Record<string, { runjs_calls_per_s: number; bare_calls_per_s: number; ratio: number }> = {};
for (const [name, code] of Object.entries(WORKLOADS)) {
  const check = await runJs(code);
  if (!check.ok) throw new Error(`workload ${name} failed: ${check.error}`);
  const ours: number[] = [];
  const floor: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    ours.push(await callsPerSecond(() => runJs(code)));
    floor.push(await callsPerSecond(() => bare(code)));
  }
  const mine = median(ours);
  const ref = median(floor);
  results[name] = {
    runjs_calls_per_s: Math.round(mine),
    bare_calls_per_s: Math.round(ref),
    ratio: Number((ref / mine).toFixed(2)),
  };
  console.log(
    `${name.padEnd(8)} runJs ${Math.round(mine)} calls/s · bare QuickJS ${Math.round(ref)} calls/s · overhead ${(ref / mine).toFixed(2)}×`,
  );
}
const loadAfter = load();
console.log(
  `load average after: ${loadAfter.join(' ')}${loadAfter[0] > 1 ? ' (loaded: figures taken beside other work)' : ''}`,
);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/sandbox.json',
  JSON.stringify(
    {
      benchmark: 'sandbox',
      date: new Date().toISOString(),
      calls_per_round: CALLS,
      rounds: ROUNDS,
      target_calls_per_s: 5000,
      machine: {
        load_average_before: loadBefore,
        load_average_after: loadAfter,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        cores: os.cpus().length,
        node: process.version,
      },
      results,
    },
    null,
    2,
  ),
);
