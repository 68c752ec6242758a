/** Shared helpers for the model tests: backend switching, fixture loading, closeness checks. */
import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { initBackend } from '../../src/kernels/backend.ts';
import { tokenStats, type LogprobOptions } from '../../src/model/logprobs.ts';
import type { HostTensor, HostTensors, TransformerModel } from '../../src/model/transformer.ts';

export async function useBackend(name: 'cpu' | 'wasm'): Promise<void> {
  if (tf.getBackend() === name) return;
  await initBackend({ forced: name });
}

export interface FixtureTensor {
  shape: number[];
  data: number[];
}

export function hostTensors(record: Record<string, FixtureTensor>): HostTensors {
  return new Map(Object.entries(record).map(([k, v]) => [k, { shape: v.shape, data: Float32Array.from(v.data) }]));
}

export function loadFixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

/** max |a - b| ≤ atol + rtol · max |b|, with a message naming what differs and where. */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  what: string,
  atol = 1e-4,
  rtol = 1e-3,
): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let worst = 0;
  let at = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; i++) scale = Math.max(scale, Math.abs(expected[i]));
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (d > worst) [worst, at] = [d, i];
  }
  const limit = atol + rtol * scale;
  expect(
    worst,
    `${what}: max |diff| ${worst} at ${at} (got ${actual[at]}, expected ${expected[at]}), limit ${limit}`,
  ).toBeLessThanOrEqual(limit);
}

export function toHost(t: tf.Tensor): HostTensor {
  return { shape: t.shape.slice(), data: new Float32Array(t.dataSync()) };
}

/**
 * Host-side log-probs of variable-length sequences, the tests' reference: row b gets `seqs[b].length - 1`
 * values, the log-prob of each token after the first (tokenStats, as training computes them); positions
 * where `masks[b][t+1]` is 0 read 0. Batched (right-padded with `padId`) and tensor-clean.
 */
export async function sequenceLogprobs(
  model: TransformerModel,
  seqs: number[][],
  options: LogprobOptions & { masks?: number[][]; padId?: number } = {},
): Promise<number[][]> {
  if (seqs.length === 0) return [];
  const T = Math.max(...seqs.map((s) => s.length));
  if (T < 2) return seqs.map(() => []);
  const padded = seqs.map((s) => [...s, ...Array<number>(T - s.length).fill(options.padId ?? 0)]);
  const result = tf.tidy(() => tokenStats(model, padded, options).logprobs);
  const flat = await result.data();
  result.dispose();
  return seqs.map((s, b) =>
    Array.from({ length: s.length - 1 }, (_, t) =>
      options.masks && !options.masks[b][t + 1] ? 0 : flat[b * (T - 1) + t],
    ),
  );
}
