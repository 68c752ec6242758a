/**
 * A new tool bootstrapped in the built app: the Environments screen checks a module whose tool no policy
 * has seen (tests/fixtures/envs/bell.js), the check samples the app's policy (the shipped base, loaded as
 * the Playground loads it) and says it solved none, offers the bootstrap, and the flow (expert
 * demonstrations, SFT, a GRPO update) runs in the engine worker and shows held-out success above the
 * baseline on the same items; then again with demonstrations from a chat-completions server on 127.0.0.1
 * (written here, answering the page's engine worker across origins as any OpenAI-compatible endpoint that
 * allows it does). Asserts only what holds for any base: 0 before, more after SFT.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

const BELL = readFileSync(new URL('../fixtures/envs/bell.js', import.meta.url), 'utf8');

describe('bootstrap on the environments screen', () => {
  let app: App;
  // wasm: the flow is under test, not the backend (SwiftShader's WebGPU makes the check's policy probe many times slower).
  beforeAll(async () => {
    app = await openApp('/?backend=wasm#environments');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('says the policy solves none, then demonstrations, SFT and GRPO raise held-out success', async () => {
    const { page } = app;
    const editor = page.locator('[data-testid="env-editor"]');
    await editor.waitFor({ timeout: 60_000 });
    await editor.fill(BELL);
    await page.locator('[data-testid="env-check-button"]').click();
    // The fixture answers a constant, a shortcut the audit reports: the check ends with problems.
    await page.locator('[data-testid="env-check"][data-phase="problems"]').waitFor({ timeout: 300_000 });
    const policy = page.locator('[data-testid="env-policy"]');
    expect(await policy.getAttribute('data-successes')).toBe('0');
    expect(await policy.textContent()).toMatch(
      /solved 0\/4 sampled items at level 1 \(greedy\): GRPO alone would learn nothing here; bootstrap it below/,
    );
    expect(await page.locator('[data-testid="boot-start"]').isDisabled()).toBe(true); // not saved yet

    await page.locator('[data-testid="env-save"]').click();
    await page.locator('[data-testid="env-entry"][data-name="bell"]').waitFor();
    await page.locator('[data-testid="boot-demos"]').fill('12');
    await page.locator('[data-testid="boot-epochs"]').fill('6');
    await page.locator('[data-testid="boot-lr"]').fill('0.01');
    await page.locator('[data-testid="boot-steps"]').fill('1');
    await page.locator('[data-testid="boot-items"]').fill('8');
    await page.locator('[data-testid="boot-start"]').click();
    await page.locator('[data-testid="env-bootstrap"][data-phase="done"]').waitFor({ timeout: 300_000 });

    const figure = async (stage: string) => {
      const row = page.locator(`[data-testid="boot-figure"][data-stage="${stage}"]`);
      return {
        successes: Number(await row.getAttribute('data-successes')),
        n: Number(await row.getAttribute('data-n')),
      };
    };
    const before = await figure('baseline');
    const afterSft = await figure('after-sft');
    const afterGrpo = await figure('after-grpo');
    expect(before).toEqual({ successes: 0, n: 8 });
    // Counts with their 95% interval, as everywhere else in the app.
    expect(await page.locator('[data-testid="boot-figure"][data-stage="baseline"] td').first().textContent()).toBe(
      'before: 0/8 = 0% [0, 32]',
    );
    expect(afterSft.n).toBe(8);
    expect(afterSft.successes).toBeGreaterThan(before.successes);
    expect(afterGrpo.n).toBe(8);
    expect(await page.locator('[data-testid="boot-summary"]').textContent()).toMatch(
      /12 of 12 demonstrations succeeded; GRPO run run-\S+ \(bootstrap-bell\) \(1 updates\)/,
    );
    expect(await page.locator('[data-testid="boot-progress"]').textContent()).toMatch(
      /SFT on 12 successful demonstrations/,
    );
    await page.screenshot({ path: 'docs/screenshots/environments-bootstrap.png', fullPage: true });
    expect(app.errors).toEqual([]);
  }, 420_000);

  it('takes the demonstrations from a model at an OpenAI-compatible endpoint', async () => {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      const cors = {
        'access-control-allow-origin': '*',
        'access-control-allow-headers': 'content-type, authorization',
        'access-control-allow-methods': 'POST',
      };
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors);
        res.end();
        return;
      }
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const { model, messages } = JSON.parse(body) as { model: string; messages: { content: string }[] };
        asked.push(model);
        // A model that knows the tool: ring first, then say done.
        const content = messages.at(-1)!.content.includes('<tool_response>')
          ? 'done'
          : '<tool_call>{"name": "ring", "arguments": {}}</tool_call>';
        res.writeHead(200, { ...cors, 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { page } = app;
      await page.locator('[data-testid="boot-source"]').selectOption('remote');
      await page
        .locator('[data-testid="env-bootstrap"] input[placeholder^="http"]')
        .fill(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
      await page.locator('[data-testid="env-bootstrap"] input[placeholder^="Qwen"]').fill('teacher');
      await page.locator('[data-testid="boot-steps"]').fill('0');
      await page.locator('[data-testid="boot-start"]').click();
      await page.locator('[data-testid="env-bootstrap"][data-phase="done"]').waitFor({ timeout: 300_000 });
      const row = (stage: string) =>
        page.locator(`[data-testid="boot-figure"][data-stage="${stage}"]`).getAttribute('data-successes');
      expect(await row('baseline')).toBe('0');
      expect(Number(await row('after-sft'))).toBeGreaterThan(0);
      expect(await page.locator('[data-testid="boot-figure"][data-stage="after-grpo"]').count()).toBe(0);
      expect(asked.length).toBe(24);
      expect(new Set(asked)).toEqual(new Set(['teacher']));
      expect(await page.locator('[data-testid="boot-progress"]').textContent()).toMatch(
        /demonstrations from teacher at http:\/\/127\.0\.0\.1:\d+\/v1/,
      );
      expect(app.errors).toEqual([]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 420_000);
});
