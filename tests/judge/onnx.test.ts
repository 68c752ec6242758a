import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { judgeAssetsFromFiles, judgeAssetsFromUrl, OnnxJudge } from '../../src/judge/onnx-judge.ts';
import { loadOnnxJudgeFromDir, readJudgeAssets, SHIPPED_JUDGE_DIR } from '../../src/judge/onnx-node.ts';
import { makeStep, makeTask, makeTrajectory } from './fixtures.ts';

let judge: OnnxJudge;
beforeAll(async () => {
  judge = await loadOnnxJudgeFromDir();
});
afterAll(async () => {
  await judge.release();
});

const task = makeTask();
const good = makeTrajectory();
const noAnswer = makeTrajectory({ final_response: null, finish_reason: 'max_steps' });
const toolError = makeTrajectory({
  steps: [
    makeStep({
      observation: 'Error: TypeError: cannot read properties of undefined',
      tool_call: {
        tool_name: 'calculator',
        parameters: { expression: '6*7' },
        result: 'Error',
        error: 'TypeError: cannot read properties of undefined',
        latency_ms: 1,
      },
    }),
  ],
  final_response: 'Done.',
});

describe('shipped ONNX judge model in Node (onnxruntime-web, wasm)', () => {
  it('is small', () => {
    expect(statSync(join(SHIPPED_JUDGE_DIR, 'model.onnx')).size).toBeLessThan(300_000);
  });

  it('prefers a good trajectory to broken ones', async () => {
    const [g, n, e] = await Promise.all([good, noAnswer, toolError].map((t) => judge.score(t, task)));
    expect(g.score as number).toBeGreaterThan(0.5);
    expect(n.score as number).toBeLessThan(0.5);
    expect(e.score as number).toBeLessThan(0.5);
    expect(g.rationale).toContain('p(good)');
  });

  it('is deterministic across calls, instances, and batch padding', async () => {
    const a = (await judge.score(good, task)).score;
    const b = (await judge.score(good, task)).score;
    const other = await OnnxJudge.create(readJudgeAssets());
    const c = (await other.score(good, task)).score;
    const texts = [
      judge.renderInput(good, task),
      judge.renderInput(toolError, task) + ' and some extra padding words '.repeat(20),
    ];
    const [batched] = await judge.scoreTexts(texts);
    await other.release();
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(batched).toBeCloseTo(a as number, 6);
  });

  it('loads from a URL and from files', async () => {
    const server: Server = createServer((req, res) => {
      try {
        const body = readFileSync(join(SHIPPED_JUDGE_DIR, (req.url ?? '').replace('/judge/', '')));
        res.writeHead(200).end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const fromUrl = await OnnxJudge.create(await judgeAssetsFromUrl(`http://127.0.0.1:${port}/judge`));
      const fromFiles = await OnnxJudge.create(
        await judgeAssetsFromFiles({
          model: new Blob([readFileSync(join(SHIPPED_JUDGE_DIR, 'model.onnx'))]),
          tokenizer: new Blob([readFileSync(join(SHIPPED_JUDGE_DIR, 'tokenizer.json'))]),
          config: readFileSync(join(SHIPPED_JUDGE_DIR, 'judge_config.json'), 'utf8'),
        }),
      );
      const expected = (await judge.score(good, task)).score;
      expect((await fromUrl.score(good, task)).score).toBe(expected);
      expect((await fromFiles.score(good, task)).score).toBe(expected);
      await Promise.all([fromUrl.release(), fromFiles.release()]);
      await expect(judgeAssetsFromUrl(`http://127.0.0.1:${port}/missing`)).rejects.toThrow(
        /HTTP 404.*model\.onnx and tokenizer\.json/,
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('explains a model without the expected inputs', async () => {
    const assets = readJudgeAssets();
    await expect(OnnxJudge.create({ ...assets, model: new Uint8Array([1, 2, 3]) })).rejects.toThrow();
  });
});
