/**
 * Measures the Train screen's default preset in Chromium on the shipped model: serves the built app
 * (`npm run build` first; `--dist DIR` serves another copy of it) with `vite preview`, opens the Train
 * screen in Debian's Chromium (a fresh profile), presses Start without changing the config and waits for
 * the run to finish. Prints the held-out success at each evaluation as the app shows it, the wall time,
 * the backend the run reports and `uptime` before and after, as text and (with `--out FILE`) as JSON.
 *
 *   npx tsx scripts/measure-preset-in-chromium.ts [--dist dist] [--out result.json] [--timeout-min 60]
 *
 * A measurement, not a test: it takes minutes (10–20 on a loaded 2-core machine).
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { preview } from 'vite';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    out: { type: 'string' },
    'timeout-min': { type: 'string', default: '60' },
  },
});
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const uptime = () => execSync('uptime').toString().trim();
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

async function main() {
  const outDir = resolve(args.dist!);
  if (!existsSync(join(outDir, 'index.html')))
    throw new Error(`${outDir}/index.html is missing: run \`npm run build\``);
  const server = await preview({
    build: { outDir },
    preview: { port: 0, host: '127.0.0.1', strictPort: false },
    logLevel: 'error',
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('the preview server has no port');
  const url = `http://127.0.0.1:${address.port}/#train`;
  const profile = mkdtempSync(join(tmpdir(), 'spindle-measure-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  const errors: string[] = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    await page.goto(url, { timeout: 120_000 });
    const start = page.locator('[data-testid="start-run"]');
    await start.waitFor({ timeout: 120_000 });
    await page.waitForFunction(
      () => !(document.querySelector('[data-testid="start-run"]') as HTMLButtonElement | null)?.disabled,
      undefined,
      { timeout: 120_000 },
    );
    const loadBefore = uptime();
    log(`uptime before: ${loadBefore}`);
    const t0 = Date.now();
    await start.click();
    const evaluations: { text: string; at_s: number }[] = [];
    let status = '';
    let backend = '';
    const deadline = t0 + Number(args['timeout-min']) * 60_000;
    for (;;) {
      status = ((await page.locator('[data-testid="run-status"]').textContent()) ?? '').trim();
      backend = ((await page.locator('[data-testid="run-backend"]').textContent()) ?? '').trim();
      const cells = page.locator('[data-testid="held-out-latest"]');
      if ((await cells.count()) > 0) {
        const text = ((await cells.first().textContent()) ?? '').trim();
        if (text && evaluations[evaluations.length - 1]?.text !== text) {
          evaluations.push({ text, at_s: Math.round((Date.now() - t0) / 1000) });
          log(`held-out: ${text}`);
        }
      }
      if (status === 'finished' || status === 'error' || status === 'stopped') break;
      if (Date.now() > deadline) {
        status = `timed out (${status})`;
        break;
      }
      await page.waitForTimeout(2000);
    }
    const wallSeconds = Math.round((Date.now() - t0) / 1000);
    const loadAfter = uptime();
    const model = ((await page.locator('[data-testid="run-model"]').textContent()) ?? '').trim();
    const runsWhere = ((await page.locator('[data-testid="runs-where"]').textContent()) ?? '').trim();
    // The run as stored: the config the Train screen started it with.
    const run = await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((res, rej) => {
        const r = indexedDB.open('spindle');
        r.onsuccess = () => res(r.result);
        r.onerror = () => rej(r.error);
      });
      const runs = await new Promise<{ id: string; name: string; status: string; config: unknown }[]>((res, rej) => {
        const r = db.transaction('runs').objectStore('runs').getAll();
        r.onsuccess = () => res(r.result);
        r.onerror = () => rej(r.error);
      });
      db.close();
      const [last] = runs;
      if (!last) return null;
      const c = last.config as {
        model: { base_model: string };
        training: { max_steps: number; batch_size: number; group_size: number; eval_interval: number };
        tasks: { environments: string[]; difficulty_range?: number[]; eval_items: number };
        seed: number;
      };
      return {
        id: last.id,
        name: last.name,
        status: last.status,
        base_model: c.model.base_model,
        seed: c.seed,
        training: {
          max_steps: c.training.max_steps,
          batch_size: c.training.batch_size,
          group_size: c.training.group_size,
          eval_interval: c.training.eval_interval,
        },
        tasks: {
          environments: c.tasks.environments,
          difficulty_range: c.tasks.difficulty_range,
          eval_items: c.tasks.eval_items,
        },
      };
    });
    const result = {
      url,
      chromium_flags: FLAGS,
      status,
      backend,
      runs_where: runsWhere,
      run,
      model,
      evaluations,
      wall_seconds: wallSeconds,
      uptime_before: loadBefore,
      uptime_after: loadAfter,
      errors,
    };
    log(`status ${status}, backend ${backend}, wall ${wallSeconds} s`);
    log(`uptime after: ${loadAfter}`);
    console.log(JSON.stringify(result, null, 2));
    if (args.out) writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
    if (status !== 'finished') process.exitCode = 1;
  } finally {
    await context.close();
    await new Promise<void>((res) => server.httpServer.close(() => res()));
    rmSync(profile, { recursive: true, force: true });
  }
}

await main();
