/**
 * A model at a plain URL is read under the network bounds: a config announced at 100 MiB,
 * an endless body and a server that stalls after its headers all fail fast with the URL in the message,
 * instead of being held in memory or holding the caller for minutes. Real HTTP on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { urlSource } from '../../src/hub/hf.ts';

let server: Server;
let base: string;
const limits = { connectTimeoutMs: 2_000, idleTimeoutMs: 300 };

beforeAll(async () => {
  server = createServer((req, res) => {
    const name = (req.url ?? '').split('/').pop();
    if (name === 'config.json') res.writeHead(200).end('{"ok": true}');
    else if (name === 'announced.json') res.writeHead(200, { 'content-length': String(100 * 2 ** 20) }).write('{');
    else if (name === 'endless.json') {
      const chunk = Buffer.alloc(2 ** 20, 32);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.writeHead(200);
      pump();
      req.on('close', () => res.destroy());
    } else if (name === 'stalled.json') res.writeHead(200).write('{');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}/m`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('urlSource', () => {
  const source = () => urlSource(base, fetch, limits);

  it('reads a file and says a missing one is missing', async () => {
    expect(new TextDecoder().decode((await source().read('config.json'))!)).toBe('{"ok": true}');
    expect(await source().read('tokenizer.json')).toBeNull();
  });

  it('refuses a config announced over its size limit before reading it', async () => {
    await expect(source().read('announced.json')).rejects.toThrow(
      /announced.json: the server announced 100\.0 MiB, over the 64\.0 MiB/,
    );
  });

  it('stops an endless body at the size limit', async () => {
    await expect(source().read('endless.json')).rejects.toThrow(/endless.json: the body passed 64\.0 MiB/);
  });

  it('gives up on a server that stalls after its headers within one idle window', async () => {
    await expect(source().read('stalled.json')).rejects.toThrow(/stalled.json: .* the server stalled/);
  });
});
