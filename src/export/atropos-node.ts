/**
 * Node-only helper for the Atropos client: a GET request with a JSON body, which Atropos's
 * `/status-env` requires and fetch refuses to send. Pass as `getWithBody` in the CLI.
 */
import { request } from 'node:http';
import { request as requestTls } from 'node:https';

export function nodeGetWithBody(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const payload = Buffer.from(JSON.stringify(body));
  const u = new URL(url);
  const send = u.protocol === 'https:' ? requestTls : request;
  return new Promise((resolve, reject) => {
    const req = send(u, { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': payload.byteLength } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = text;
        try { json = JSON.parse(text); } catch { /* keep the text */ }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
