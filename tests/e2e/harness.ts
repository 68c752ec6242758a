/**
 * Serves the built app (`dist/`, made by `vite build`) with `vite preview` on 127.0.0.1 and drives it
 * in Debian's Chromium through playwright-core. Never downloads a browser. `openDevApp` serves the
 * sources with the dev server instead (what `npm start` runs), from a cold dependency cache.
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createServer, preview, type PreviewServer } from 'vite';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--enable-unsafe-webgpu',
];

export interface App {
  url: string;
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors seen so far, for assertions and for failure messages. */
  errors: string[];
  close(): Promise<void>;
}

export async function openApp(path = '/'): Promise<App> {
  if (!existsSync('dist/index.html')) throw new Error('dist/ is missing: run `npm run build` (npm run test:e2e does).');
  const server: PreviewServer = await preview({
    preview: { port: 0, host: '127.0.0.1', strictPort: false },
    logLevel: 'error',
  });
  return openBrowser(server.httpServer, path, async () => {});
}

export interface DevApp extends App {
  /** Everything the dev server logged (its "optimized dependencies changed. reloading" among them). */
  serverLog: string[];
}

/** The dev server (`npm start`) with an empty dependency cache, as on a first start after `npm ci`. */
export async function openDevApp(path = '/'): Promise<DevApp> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'spindle-vite-cache-'));
  const serverLog: string[] = [];
  const logger = createLogger('info');
  for (const level of ['info', 'warn', 'error'] as const)
    logger[level] = (message) => {
      serverLog.push(`${level}: ${message}`);
    };
  const server = await createServer({
    cacheDir,
    customLogger: logger,
    server: { port: 0, host: '127.0.0.1', strictPort: false, hmr: true },
  });
  await server.listen();
  const app = await openBrowser(server.httpServer!, path, async () => {
    await server.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return { ...app, serverLog };
}

async function openBrowser(
  httpServer: { address(): unknown; close(cb: () => void): unknown },
  path: string,
  closeServer: () => Promise<void>,
): Promise<App> {
  const address = httpServer.address() as { port: number } | string | null;
  if (!address || typeof address === 'string') throw new Error('the server has no port');
  const url = `http://127.0.0.1:${address.port}`;
  const profile = mkdtempSync(join(tmpdir(), 'spindle-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  // A cold dev server optimizes the dependencies before it answers the first page.
  await page.goto(url + path, { timeout: 120_000 });
  return {
    url,
    context,
    page,
    errors,
    async close() {
      await context.close();
      await closeServer();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
