/**
 * Node-only helper for the Atropos client: a GET request with a JSON body, which Atropos's
 * `/status-env` requires and fetch refuses to send. Pass as `getWithBody` in the CLI. Bounded like
 * every other read: the whole exchange within `timeoutMs`, a reply of at most `maxBytes`; `signal`
 * (a user's Ctrl-C) cancels it at once.
 */
import { request } from 'node:http';
import { request as requestTls } from 'node:https';
import type { GetWithBody } from './atropos-client.ts';

const DEFAULT_LIMITS = { timeoutMs: 30_000, maxBytes: 1 << 20 };

export const nodeGetWithBody: GetWithBody = (url, body, limits = DEFAULT_LIMITS) => {
  if (limits.signal?.aborted) return Promise.reject(new Error(`GET ${url}: interrupted`));
  const payload = Buffer.from(JSON.stringify(body));
  const u = new URL(url);
  const send = u.protocol === 'https:' ? requestTls : request;
  return new Promise((resolve, reject) => {
    const req = send(
      u,
      { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': payload.byteLength } },
      (res) => {
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
          if (length > limits.maxBytes) req.destroy(new Error(`GET ${url}: the reply passed ${limits.maxBytes} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {
            /* keep the text */
          }
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            json,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          });
        });
        res.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`GET ${url}: no complete answer within ${limits.timeoutMs / 1000} s`)),
      limits.timeoutMs,
    );
    const stop = () => req.destroy(new Error(`GET ${url}: interrupted`));
    limits.signal?.addEventListener('abort', stop, { once: true });
    req.on('close', () => limits.signal?.removeEventListener('abort', stop));
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
};
