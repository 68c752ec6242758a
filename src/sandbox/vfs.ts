/**
 * A small in-memory file system: the shared state of the `sh` and `git` tools for one episode.
 *
 * Paths are POSIX-style and absolute after `resolvePath`; there are no permissions, owners or real
 * symlinks (symlink stores the target as text so isomorphic-git's calls succeed). `promises` exposes
 * the node-fs-like promise API isomorphic-git needs (readFile, writeFile, mkdir, rmdir, unlink, stat,
 * lstat, readdir, readlink, symlink), with Node's error codes (ENOENT, EEXIST, ENOTDIR, ENOTEMPTY, EISDIR).
 * Nothing here touches a real disk, storage or the network. Size limits keep a runaway episode bounded.
 */

export type FsErrorCode =
  'ENOENT' | 'EEXIST' | 'ENOTDIR' | 'ENOTEMPTY' | 'EISDIR' | 'EINVAL' | 'ENOSPC' | 'ENAMETOOLONG';

export class FsError extends Error {
  constructor(
    readonly code: FsErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(`${code}: ${message}, '${path}'`);
    this.name = 'FsError';
  }
}

interface FileNode {
  kind: 'file';
  data: Uint8Array;
  mtimeMs: number;
  ino: number;
}
interface DirNode {
  kind: 'dir';
  children: Set<string>;
  mtimeMs: number;
  ino: number;
}
interface LinkNode {
  kind: 'symlink';
  target: string;
  mtimeMs: number;
  ino: number;
}
type Node = FileNode | DirNode | LinkNode;

export interface VfsStats {
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export interface VfsLimits {
  /** Total bytes of file content. */
  maxTotalBytes: number;
  /** Number of files and directories. */
  maxNodes: number;
  /** Characters in an absolute path (Linux's PATH_MAX); this also bounds the depth of the tree. */
  maxPathChars: number;
  /** Characters in one path segment (Linux's NAME_MAX). */
  maxNameChars: number;
}

const DEFAULT_LIMITS: VfsLimits = {
  maxTotalBytes: 32 * 1024 * 1024,
  maxNodes: 20_000,
  maxPathChars: 4096,
  maxNameChars: 255,
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Resolve `path` against `cwd` into a normalized absolute path (`.`/`..` removed, no trailing slash). */
export function resolvePath(path: string, cwd = '/'): string {
  const full = path.startsWith('/') ? path : `${cwd}/${path}`;
  const out: string[] = [];
  for (const part of full.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return '/' + out.join('/');
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export class VirtualFs {
  private nodes = new Map<string, Node>();
  private nextIno = 1;
  private totalBytes = 0;
  private clock = Date.now();

  constructor(readonly limits: VfsLimits = DEFAULT_LIMITS) {
    this.nodes.set('/', { kind: 'dir', children: new Set(), mtimeMs: this.now(), ino: this.nextIno++ });
  }

  /** Strictly increasing timestamps: git's index compares mtimes to notice changed files. */
  private now(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  private node(path: string): Node | undefined {
    return this.nodes.get(resolvePath(path));
  }

  private dirNode(path: string): DirNode {
    const p = resolvePath(path);
    const n = this.nodes.get(p);
    if (!n) throw new FsError('ENOENT', p, 'no such file or directory');
    if (n.kind !== 'dir') throw new FsError('ENOTDIR', p, 'not a directory');
    return n;
  }

  /** Paths are bounded so that every walk over the tree (find, rm -r, cp -r, git) is too. */
  private checkLength(path: string): void {
    if (path.length > this.limits.maxPathChars)
      throw new FsError(
        'ENAMETOOLONG',
        path.slice(0, 64) + '…',
        `path longer than ${this.limits.maxPathChars} characters`,
      );
    if (baseName(path).length > this.limits.maxNameChars)
      throw new FsError(
        'ENAMETOOLONG',
        path.slice(0, 64) + '…',
        `name longer than ${this.limits.maxNameChars} characters`,
      );
  }

  private attach(path: string, node: Node): void {
    this.checkLength(path);
    if (this.nodes.size >= this.limits.maxNodes)
      throw new FsError('ENOSPC', path, `too many files (limit ${this.limits.maxNodes})`);
    const parent = this.dirNode(parentOf(path));
    parent.children.add(baseName(path));
    parent.mtimeMs = this.now();
    this.nodes.set(path, node);
  }

  exists(path: string): boolean {
    return this.nodes.has(resolvePath(path));
  }

  isDir(path: string): boolean {
    return this.node(path)?.kind === 'dir';
  }

  isFile(path: string): boolean {
    return this.node(path)?.kind === 'file';
  }

  readBytes(path: string): Uint8Array {
    const p = resolvePath(path);
    const n = this.nodes.get(p);
    if (!n) throw new FsError('ENOENT', p, 'no such file or directory');
    if (n.kind === 'dir') throw new FsError('EISDIR', p, 'is a directory');
    if (n.kind === 'symlink') return encoder.encode(n.target);
    return n.data;
  }

  readFile(path: string): string {
    return decoder.decode(this.readBytes(path));
  }

  writeFile(path: string, content: string | Uint8Array): void {
    const p = resolvePath(path);
    const data = typeof content === 'string' ? encoder.encode(content) : new Uint8Array(content);
    const existing = this.nodes.get(p);
    if (existing?.kind === 'dir') throw new FsError('EISDIR', p, 'is a directory');
    const oldSize = existing?.kind === 'file' ? existing.data.length : 0;
    if (this.totalBytes - oldSize + data.length > this.limits.maxTotalBytes) {
      throw new FsError('ENOSPC', p, `file system full (limit ${this.limits.maxTotalBytes} bytes)`);
    }
    this.totalBytes += data.length - oldSize;
    if (existing?.kind === 'file') {
      existing.data = data;
      existing.mtimeMs = this.now();
      return;
    }
    if (existing) this.remove(p);
    this.attach(p, { kind: 'file', data, mtimeMs: this.now(), ino: this.nextIno++ });
  }

  appendFile(path: string, content: string): void {
    const prev = this.isFile(path) ? this.readFile(path) : '';
    this.writeFile(path, prev + content);
  }

  mkdir(path: string): void {
    const p = resolvePath(path);
    if (this.nodes.has(p)) throw new FsError('EEXIST', p, 'file already exists');
    this.attach(p, { kind: 'dir', children: new Set(), mtimeMs: this.now(), ino: this.nextIno++ });
  }

  /** `mkdir -p`: creates missing parents; fine if it exists as a directory. */
  mkdirp(path: string): void {
    const p = resolvePath(path);
    this.checkLength(p);
    let at = '';
    for (const part of p.split('/').filter(Boolean)) {
      at += '/' + part;
      const n = this.nodes.get(at);
      if (!n) this.mkdir(at);
      else if (n.kind !== 'dir') throw new FsError('ENOTDIR', at, 'not a directory');
    }
  }

  /** Names in a directory, sorted. */
  list(path: string): string[] {
    return [...this.dirNode(path).children].sort();
  }

  /** Delete a file, or a directory (empty unless `recursive`). */
  remove(path: string, opts: { recursive?: boolean } = {}): void {
    const p = resolvePath(path);
    const n = this.nodes.get(p);
    if (!n) throw new FsError('ENOENT', p, 'no such file or directory');
    if (p === '/') throw new FsError('EINVAL', p, 'cannot remove the root directory');
    if (n.kind === 'dir') {
      if (n.children.size > 0 && !opts.recursive) throw new FsError('ENOTEMPTY', p, 'directory not empty');
      for (const child of [...n.children]) this.remove(`${p}/${child}`, { recursive: true });
    } else if (n.kind === 'file') {
      this.totalBytes -= n.data.length;
    }
    this.nodes.delete(p);
    const parent = this.dirNode(parentOf(p));
    parent.children.delete(baseName(p));
    parent.mtimeMs = this.now();
  }

  /** Move a file or directory tree. */
  rename(from: string, to: string): void {
    const src = resolvePath(from);
    const dst = resolvePath(to);
    if (!this.nodes.has(src)) throw new FsError('ENOENT', src, 'no such file or directory');
    if (dst === src) return;
    if (dst.startsWith(src + '/')) throw new FsError('EINVAL', dst, 'cannot move a directory into itself');
    this.copy(src, dst);
    this.remove(src, { recursive: true });
  }

  /** Copy a file or (recursively) a directory tree. */
  copy(from: string, to: string): void {
    const src = resolvePath(from);
    const dst = resolvePath(to);
    const n = this.nodes.get(src);
    if (!n) throw new FsError('ENOENT', src, 'no such file or directory');
    if (n.kind === 'file') return this.writeFile(dst, n.data);
    if (n.kind === 'symlink') return this.symlink(n.target, dst);
    if (dst.startsWith(src + '/')) throw new FsError('EINVAL', dst, 'cannot copy a directory into itself');
    if (!this.isDir(dst)) this.mkdir(dst);
    for (const child of [...n.children]) this.copy(`${src}/${child}`, `${dst}/${child}`);
  }

  symlink(target: string, path: string): void {
    const p = resolvePath(path);
    if (this.nodes.has(p)) throw new FsError('EEXIST', p, 'file already exists');
    this.attach(p, { kind: 'symlink', target, mtimeMs: this.now(), ino: this.nextIno++ });
  }

  readlink(path: string): string {
    const p = resolvePath(path);
    const n = this.nodes.get(p);
    if (!n) throw new FsError('ENOENT', p, 'no such file or directory');
    if (n.kind !== 'symlink') throw new FsError('EINVAL', p, 'not a symbolic link');
    return n.target;
  }

  stat(path: string): VfsStats {
    const p = resolvePath(path);
    const n = this.nodes.get(p);
    if (!n) throw new FsError('ENOENT', p, 'no such file or directory');
    const type = n.kind;
    const size = n.kind === 'file' ? n.data.length : n.kind === 'symlink' ? n.target.length : 0;
    const mode = type === 'file' ? 0o100644 : type === 'dir' ? 0o40755 : 0o120000;
    return {
      type,
      mode,
      size,
      ino: n.ino,
      mtimeMs: n.mtimeMs,
      ctimeMs: n.mtimeMs,
      uid: 1,
      gid: 1,
      dev: 1,
      isFile: () => type === 'file',
      isDirectory: () => type === 'dir',
      isSymbolicLink: () => type === 'symlink',
    };
  }

  /** Every file under `root` depth-first: absolute paths, sorted. */
  walk(root = '/', opts: { skipGit?: boolean } = {}): string[] {
    const out: string[] = [];
    const visit = (dir: string) => {
      for (const name of this.list(dir)) {
        if (opts.skipGit && name === '.git') continue;
        const p = dir === '/' ? `/${name}` : `${dir}/${name}`;
        if (this.isDir(p)) visit(p);
        else out.push(p);
      }
    };
    if (this.isDir(root)) visit(resolvePath(root));
    else if (this.exists(root)) out.push(resolvePath(root));
    return out;
  }

  /** Text of every file under `root`, keyed by path relative to `root`; `.git` is left out. */
  snapshot(root = '/'): Record<string, string> {
    const base = resolvePath(root);
    const out: Record<string, string> = {};
    for (const p of this.walk(base, { skipGit: true })) {
      out[base === '/' ? p.slice(1) : p.slice(base.length + 1)] = this.readFile(p);
    }
    return out;
  }

  /** The node-fs-like promise API isomorphic-git expects (`{ promises }` must be an enumerable property). */
  readonly promises = {
    readFile: async (path: string, options?: string | { encoding?: string }): Promise<string | Uint8Array> => {
      if (typeof path !== 'string') throw new FsError('EINVAL', String(path), 'path must be a string');
      const encoding = typeof options === 'string' ? options : options?.encoding;
      return encoding ? this.readFile(path) : this.readBytes(path);
    },
    writeFile: async (path: string, data: string | Uint8Array): Promise<void> => this.writeFile(path, data),
    mkdir: async (path: string): Promise<void> => this.mkdir(path),
    rmdir: async (path: string): Promise<void> => {
      if (!this.isDir(path)) throw new FsError('ENOTDIR', resolvePath(path), 'not a directory');
      this.remove(path);
    },
    unlink: async (path: string): Promise<void> => {
      if (this.isDir(path)) throw new FsError('EISDIR', resolvePath(path), 'is a directory');
      this.remove(path);
    },
    stat: async (path: string): Promise<VfsStats> => this.stat(path),
    lstat: async (path: string): Promise<VfsStats> => this.stat(path),
    readdir: async (path: string): Promise<string[]> => this.list(path),
    readlink: async (path: string): Promise<string> => this.readlink(path),
    symlink: async (target: string, path: string): Promise<void> => this.symlink(target, path),
    chmod: async (): Promise<void> => {},
  };
}
