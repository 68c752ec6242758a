/**
 * A stand-in for huggingface.co on 127.0.0.1, answering the way the hub does: `/<id>/resolve/<rev>/<file>`
 * with X-Repo-Commit, a branch resolved to its commit, regular files served directly (ETag = git blob
 * id), LFS files (*.safetensors) as a 302 to a content-addressed `/cdn/<sha256>` with X-Linked-Etag and
 * X-Linked-Size on the redirect; Range and If-Range honoured, 416 past the end. `hubHeaders: false`
 * turns it into a plain mirror (no commit, no linked headers). Faults, each for one file and the next
 * `times` requests of it, break one rule at a time.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type Fault =
  | { kind: 'cut'; after: number } // send the headers and `after` bytes, then drop the connection
  | { kind: 'stall'; after: number } // send the headers and `after` bytes, then nothing
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'whole-206' } // answer a ranged request with the whole file as a 206 from byte 0
  | { kind: 'ignore-range' } // answer 200 with the whole file
  | { kind: 'hang' } // send the headers, then nothing
  | { kind: 'silent' } // never answer at all
  | { kind: 'drip'; everyMs: number } // one byte per interval
  | { kind: 'announce'; length: number } // headers with this Content-Length, then nothing
  | { kind: 'endless'; prefix?: Uint8Array; etag?: boolean } // a chunked body that never ends, after `prefix`; `etag: false` sends no ETag
  | { kind: 'html' } // a web page in place of the file
  | { kind: 'flip-byte' } // one byte changed, headers unchanged
  | { kind: 'truncate' }; // the first half, announced as the whole file

interface Repo {
  refs: Map<string, string>;
  commits: Map<string, Map<string, Uint8Array>>;
}

export interface Logged {
  url: string;
  range: string | undefined;
  ifRange: string | undefined;
}

const LFS = /\.safetensors$/;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const gitBlob = (b: Uint8Array) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

export class FakeHub {
  readonly requests: Logged[] = [];
  hubHeaders = true;
  private readonly repos = new Map<string, Repo>();
  private readonly blobs = new Map<string, Uint8Array>();
  private readonly faults: { file: string; fault: Fault; times: number }[] = [];
  private server!: Server;
  endpoint = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Commits `files` to `branch` of `id`; returns the commit hash. */
  publish(id: string, files: Map<string, Uint8Array> | Record<string, Uint8Array>, branch = 'main'): string {
    const map = files instanceof Map ? new Map(files) : new Map(Object.entries(files));
    const repo = this.repos.get(id) ?? { refs: new Map(), commits: new Map() };
    this.repos.set(id, repo);
    const hash = createHash('sha1').update(`${id} ${repo.commits.size}`);
    for (const [name, bytes] of map) hash.update(name).update(bytes);
    const commit = hash.digest('hex');
    repo.commits.set(commit, map);
    repo.refs.set(branch, commit);
    for (const bytes of map.values()) this.blobs.set(sha256(bytes), bytes);
    return commit;
  }

  fault(file: string, fault: Fault, times = 1): void {
    this.faults.push({ file, fault, times });
  }

  private takeFault(file: string): Fault | null {
    const i = this.faults.findIndex((f) => f.file === file);
    if (i < 0) return null;
    const f = this.faults[i];
    if (--f.times <= 0) this.faults.splice(i, 1);
    return f.fault;
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const url = decodeURIComponent(req.url ?? '/');
    this.requests.push({ url, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined });
    const cdn = /^\/cdn\/([0-9a-f]{64})\?file=(.+)$/.exec(url);
    if (cdn) {
      const bytes = this.blobs.get(cdn[1]);
      if (!bytes) return void res.writeHead(404).end();
      return this.serve(req, res, cdn[2], bytes, `"${cdn[1]}"`, {});
    }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url);
    const repo = m ? this.repos.get(m[1]) : undefined;
    if (!m || !repo) return void res.writeHead(404, { 'x-error-code': 'RepoNotFound' }).end();
    const commit = repo.refs.get(m[2]) ?? (repo.commits.has(m[2]) ? m[2] : null);
    if (!commit) return void res.writeHead(404, { 'x-error-code': 'RevisionNotFound' }).end();
    const hub: Record<string, string> = this.hubHeaders ? { 'x-repo-commit': commit } : {};
    const bytes = repo.commits.get(commit)!.get(m[3]);
    if (!bytes) return void res.writeHead(404, { ...hub, 'x-error-code': 'EntryNotFound' }).end();
    if (LFS.test(m[3])) {
      const sha = sha256(bytes);
      const linked = this.hubHeaders ? { 'x-linked-etag': `"${sha}"`, 'x-linked-size': String(bytes.length) } : {};
      res.writeHead(302, {
        ...hub,
        ...linked,
        etag: `"${sha}"`,
        location: `/cdn/${sha}?file=${encodeURIComponent(m[3])}`,
        'content-length': '0',
      });
      return void res.end();
    }
    this.serve(req, res, m[3], bytes, `"${gitBlob(bytes)}"`, hub);
  }

  /** The bytes with Range and If-Range, as a file server does, unless a fault for the file says otherwise. */
  private serve(
    req: IncomingMessage,
    res: ServerResponse,
    file: string,
    bytes: Uint8Array,
    etag: string,
    extra: Record<string, string>,
  ) {
    const fault = this.takeFault(file);
    const headers = { ...extra, etag, 'accept-ranges': 'bytes' };
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    const ranged = range && (!ifRange || ifRange === etag) && fault?.kind !== 'ignore-range';
    const from = ranged ? Number(range[1]) : 0;
    switch (fault?.kind) {
      case 'status':
        return void res
          .writeHead(fault.status, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {})
          .end('busy');
      case 'silent':
        return; // the request is never answered
      case 'hang':
        res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
        return void res.flushHeaders();
      case 'announce':
        res.writeHead(200, { ...headers, 'content-length': String(fault.length) });
        return void res.flushHeaders();
      case 'drip': {
        res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
        let i = 0;
        const timer = setInterval(
          () => (i < bytes.length && !res.destroyed ? res.write(bytes.subarray(i, ++i)) : clearInterval(timer)),
          fault.everyMs,
        );
        res.on('close', () => clearInterval(timer));
        return;
      }
      case 'endless': {
        const { etag: _etag, ...rest } = headers;
        res.writeHead(200, { ...(fault.etag === false ? rest : headers), 'content-type': 'application/json' });
        if (fault.prefix) res.write(fault.prefix);
        const chunk = Buffer.alloc(1 << 20, 0x20);
        const more = () => {
          while (!res.destroyed && res.write(chunk));
        };
        res.on('drain', more);
        return more();
      }
      case 'html': {
        const page = '<!DOCTYPE html><html><body>Sign in to continue</body></html>';
        return void res
          .writeHead(200, { 'content-type': 'text/html', 'content-length': String(page.length) })
          .end(page);
      }
      case 'flip-byte': {
        const copy = Uint8Array.from(bytes);
        copy[copy.length - 1] ^= 0xff;
        return void res.writeHead(200, { ...headers, 'content-length': String(copy.length) }).end(copy);
      }
      case 'truncate': {
        const half = bytes.subarray(0, bytes.length >> 1);
        return void res.writeHead(200, { ...headers, 'content-length': String(half.length) }).end(half);
      }
      case 'whole-206':
        if (range) {
          return void res
            .writeHead(206, {
              ...headers,
              'content-length': String(bytes.length),
              'content-range': `bytes 0-${bytes.length - 1}/${bytes.length}`,
            })
            .end(bytes);
        }
        break;
    }
    if (ranged && from >= bytes.length)
      return void res.writeHead(416, { 'content-range': `bytes */${bytes.length}` }).end();
    const part = bytes.subarray(from);
    const rangeHeaders = ranged ? { 'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}` } : {};
    res.writeHead(ranged ? 206 : 200, { ...headers, ...rangeHeaders, 'content-length': String(part.length) });
    if (fault?.kind === 'cut') return void res.write(part.subarray(0, fault.after), () => res.destroy());
    if (fault?.kind === 'stall') return void res.write(part.subarray(0, fault.after));
    res.end(part);
  }
}
