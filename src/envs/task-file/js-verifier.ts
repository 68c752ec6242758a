/**
 * The `js` verifier: a task file's own scoring function, `(answer, row, trajectory) => score`, run in
 * QuickJS through the sandbox (runJsIsolated, src/sandbox/js-thread.ts), never on the host. The
 * arguments cross as JSON text the guest parses, so nothing the model wrote is ever run as code. The
 * function may be async.
 *
 * It runs under a deadline (`timeout_ms`, default 1000) and a heap limit (`memory_mb`, default 16) in a
 * fresh context per call. What it may return: a number in [0, 1], or a boolean (true 1, false 0). Anything
 * else (7, NaN, a string, null, undefined), a throw, a timeout or an out-of-memory is a null score with
 * the reason: the verifier could not decide, which is not the same as a wrong answer.
 *
 * The trajectory it sees is the part a verdict can use: `final_response`, `finish_reason`, `messages` and
 * `steps` (`turn`, `thought`, `tool_call`, `observation`); no tokens or logprobs.
 */
import type { Trajectory } from '../../contracts.ts';
import { runJsIsolated } from '../../sandbox/index.ts';
import type { VerifierConfig } from '../../config/verifier.ts';
import type { Verdict, VerifierRow } from './verdict.ts';

export const JS_DEFAULTS = { timeout_ms: 1000, memory_mb: 16 } as const;

type JsVerifier = Extract<VerifierConfig, { type: 'js' }>;

/** Runs the verifier on one answer. Never throws: every failure is a null score with the reason. */
export async function runJsVerifier(
  verifier: JsVerifier,
  answer: string,
  row: VerifierRow,
  trajectory: Trajectory | null,
): Promise<Verdict> {
  const timeoutMs = verifier.timeout_ms ?? JS_DEFAULTS.timeout_ms;
  const memoryMb = verifier.memory_mb ?? JS_DEFAULTS.memory_mb;
  let code: string;
  try {
    code = guestCode(verifier.source, [answer, row, trajectory && verifierView(trajectory)]);
  } catch (e) {
    return { score: null, reason: `js verifier: the arguments could not be passed as JSON (${message(e)})` };
  }
  const result = await runJsIsolated(code, { timeoutMs, memoryBytes: memoryMb * 1024 * 1024 });
  if (!result.ok) {
    const what = result.timedOut
      ? `timed out after ${timeoutMs} ms`
      : result.memoryExceeded
        ? `ran out of its ${memoryMb} MiB of memory`
        : `failed: ${result.error}`;
    return { score: null, reason: `js verifier ${what}` };
  }
  return readResult(result.value);
}

/** The guest script: the arguments parsed from JSON text, the function called, its (awaited) result encoded as [type, value]. */
function guestCode(source: string, args: unknown[]): string {
  const json = JSON.stringify(args);
  return `"use strict";
const __verifierArgs = JSON.parse(${JSON.stringify(json)});
const __verifier = (
${source}
);
if (typeof __verifier !== 'function') throw new TypeError('the verifier source is a ' + typeof __verifier + ', not a function (answer, row, trajectory) => score');
Promise.resolve(__verifier(__verifierArgs[0], __verifierArgs[1], __verifierArgs[2])).then((v) => {
  const t = v === null ? 'null' : typeof v;
  return JSON.stringify([t, t === 'number' || t === 'boolean' ? String(v) : t === 'string' ? v.slice(0, 60) : null]);
});`;
}

function readResult(value: string | null): Verdict {
  let type: string, text: string | null;
  try {
    [type, text] = JSON.parse(JSON.parse(value ?? '')) as [string, string | null];
  } catch {
    return { score: null, reason: `js verifier: its result could not be read (${value})` };
  }
  if (type === 'boolean') return { score: text === 'true' ? 1 : 0, reason: `js verifier returned ${text}` };
  if (type === 'number') {
    const score = Number(text);
    if (Number.isFinite(score) && score >= 0 && score <= 1) return { score, reason: `js verifier returned ${text}` };
    return { score: null, reason: `js verifier returned ${text}; it must return a number in [0, 1] or a boolean` };
  }
  const shown = type === 'string' ? JSON.stringify(text) : `${type === 'object' ? 'an object' : type}`;
  return { score: null, reason: `js verifier returned ${shown}; it must return a number in [0, 1] or a boolean` };
}

/** What of a trajectory the verifier sees (plain JSON). */
function verifierView(t: Trajectory): Record<string, unknown> {
  return {
    final_response: t.final_response,
    finish_reason: t.finish_reason,
    messages: t.messages,
    steps: t.steps.map((s) => ({
      turn: s.turn,
      thought: s.thought,
      tool_call: s.tool_call,
      observation: s.observation,
    })),
  };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
