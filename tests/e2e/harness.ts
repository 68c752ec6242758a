/**
 * Serves the built app (`dist/`, made by `vite build`) with `vite preview` on 127.0.0.1 and drives it
 * in Debian's Chromium through playwright-core. Never downloads a browser.
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { preview, type PreviewServer } from 'vite';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu',
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
  const server: PreviewServer = await preview({ preview: { port: 0, host: '127.0.0.1', strictPort: false }, logLevel: 'error' });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('preview server has no port');
  const url = `http://127.0.0.1:${address.port}`;
  const profile = mkdtempSync(join(tmpdir(), 'spindle-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, acceptDownloads: true, viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  await page.goto(url + path);
  return {
    url, context, page, errors,
    async close() {
      await context.close();
      await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
