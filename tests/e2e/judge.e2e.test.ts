/**
 * The ONNX judge gives the same scores in Chromium as in Node. The page (tests/e2e/judge-page) is
 * served by a Vite dev server started here, so the app's build needs no extra entry; the model comes
 * from models/judge/ and the ORT wasm binary from node_modules through Vite — nothing from the internet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type ViteDevServer } from 'vite';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM } from './harness.ts';
import { loadOnnxJudgeFromDir } from '../../src/judge/onnx-node.ts';
import { judgeCases } from '../judge/cases.ts';

describe('ONNX judge in Chromium', () => {
  let server: ViteDevServer;
  let context: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    server = await createServer({ server: { port: 0, host: '127.0.0.1', strictPort: false }, logLevel: 'error' });
    await server.listen();
    profile = mkdtempSync(join(tmpdir(), 'spindle-judge-e2e-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('matches the Node scores for the same trajectories', async () => {
    const judge = await loadOnnxJudgeFromDir();
    const nodeScores: (number | null)[] = [];
    for (const c of judgeCases()) nodeScores.push((await judge.score(c.trajectory, c.task)).score);
    await judge.release();

    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const url = server.resolvedUrls?.local[0];
    if (!url) throw new Error('vite dev server has no local URL');
    await page.goto(new URL('tests/e2e/judge-page/index.html', url).href);
    await page.waitForFunction(() => window.__judge !== undefined, null, { timeout: 120_000 });
    const result = await page.evaluate(() => window.__judge);
    expect(result, JSON.stringify(result)).toHaveProperty('scores');
    const browserScores = (result as { scores: number[] }).scores;
    expect(browserScores).toHaveLength(nodeScores.length);
    browserScores.forEach((s, i) => expect(s).toBeCloseTo(nodeScores[i] as number, 6));
    expect(nodeScores[0] as number).toBeGreaterThan(0.5);
    expect(errors).toEqual([]);
  });
});
