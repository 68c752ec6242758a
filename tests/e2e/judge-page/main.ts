/**
 * Test page for tests/e2e/judge.e2e.test.ts: loads the shipped judge model over HTTP with the ORT wasm
 * binary served by Vite (no CDN), scores the shared fixtures, and publishes the scores on window.__judge.
 */
import { judgeAssetsFromUrl, OnnxJudge } from '../../../src/judge/onnx-judge.ts';
import { ortWasmPaths } from '../../../src/judge/ort-wasm-url.ts';
import { judgeCases } from '../../judge/cases.ts';

declare global {
  interface Window {
    __judge?: { scores: (number | null)[] } | { error: string };
  }
}

try {
  const judge = await OnnxJudge.create(await judgeAssetsFromUrl(new URL('/models/judge/', location.href).href), {
    ort: { wasmPaths: ortWasmPaths },
  });
  const scores: (number | null)[] = [];
  for (const c of judgeCases()) scores.push((await judge.score(c.trajectory, c.task)).score);
  window.__judge = { scores };
} catch (err) {
  window.__judge = { error: err instanceof Error ? `${err.message}\n${err.stack}` : String(err) };
}
