/**
 * Reading guest values on the host for runJs: the completion value and console arguments as bounded
 * JSON-ish strings, guest strings cut before they cross, and the guest's JSON.parse for host results.
 *
 * Why on the host: QuickJS compiles every function of a script when it parses it, and a per-call
 * bootstrap script that defined console and a formatter cost more than the rest of a call. Primitives
 * (what most calls return or print) are formatted here without guest code; the object formatter
 * (cycles, throwing getters, depth and item caps) is compiled only when a call meets an object. The
 * built-ins the formatter and the string cut use are read before the user's code runs, so tampering
 * with JSON.stringify, Object.keys or Array.prototype.join cannot change how values are shown.
 *
 * `format(value, maxChars)` gives: strings quoted, `undefined`, functions as `[Function: name]`, errors
 * as `Name: message`, cycles as `[Circular]`, depth > 4 as `[Object]`/`[Array]`, at most 100 items per
 * container, `[unprintable]` for what cannot be read; longer than maxChars, cut with `...[truncated]`.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';

/** The guest side of `format` for objects: a factory over pristine built-ins, compiled on first use. */
const OBJECT_FORMATTER = String.raw`(function (stringify, keys, isArray, apply, join, slice, StringFn) {
  'use strict';
  const MAX_ITEMS = 100, MAX_DEPTH = 4;
  function fmt(x, depth, seen) {
    if (x === null) return 'null';
    const t = typeof x;
    if (t === 'undefined') return 'undefined';
    if (t === 'string') return stringify(x);
    if (t === 'number' || t === 'boolean') return StringFn(x);
    if (t === 'bigint') return StringFn(x) + 'n';
    if (t === 'symbol') return 'Symbol()';
    if (t === 'function') return '[Function' + (typeof x.name === 'string' && x.name ? ': ' + x.name : '') + ']';
    for (let i = 0; i < seen.length; i++) if (seen[i] === x) return '[Circular]';
    if (x instanceof Error) return StringFn(x.name) + ': ' + StringFn(x.message);
    if (depth >= MAX_DEPTH) return isArray(x) ? '[Array]' : '[Object]';
    seen[seen.length] = x;
    const parts = [];
    if (isArray(x)) {
      const n = x.length < MAX_ITEMS ? x.length : MAX_ITEMS;
      for (let i = 0; i < n; i++) parts[i] = fmt(x[i], depth + 1, seen);
      if (x.length > MAX_ITEMS) parts[n] = '...' + (x.length - MAX_ITEMS) + ' more';
      seen.length--;
      return '[' + apply(join, parts, [',']) + ']';
    }
    const ks = keys(x);
    const n = ks.length < MAX_ITEMS ? ks.length : MAX_ITEMS;
    for (let i = 0; i < n; i++) {
      let v;
      try { v = fmt(x[ks[i]], depth + 1, seen); } catch (e) { v = '[unprintable]'; }
      parts[i] = stringify(ks[i]) + ':' + v;
    }
    if (ks.length > MAX_ITEMS) parts[n] = '...' + (ks.length - MAX_ITEMS) + ' more';
    seen.length--;
    return '{' + apply(join, parts, [',']) + '}';
  }
  return function format(value, maxChars) {
    let s;
    try { s = fmt(value, 0, []); } catch (e) { s = '[unprintable]'; }
    if (typeof s !== 'string') s = '[unprintable]';
    return s.length > maxChars ? apply(slice, s, [0, maxChars]) + '...[truncated]' : s;
  };
})`;

/** The built-ins read before the user's code runs, in the order OBJECT_FORMATTER takes them (then JSON.parse). */
const PRISTINE = ['JSON.stringify', 'Object.keys', 'Array.isArray', 'Reflect.apply', 'Array.prototype.join', 'String.prototype.slice', 'String', 'JSON.parse'] as const;
const SLICE = PRISTINE.indexOf('String.prototype.slice');
const PARSE = PRISTINE.indexOf('JSON.parse');

const TRUNCATED = '...[truncated]';

export class GuestValues {
  private readonly builtins: QuickJSHandle[];
  private objectFormat: QuickJSHandle | null = null;

  /** Reads the built-ins now: call before any user code. `keep` registers a handle for disposal with the call. */
  constructor(private readonly ctx: QuickJSContext, private readonly keep: (h: QuickJSHandle) => QuickJSHandle) {
    const objects = new Map<string, QuickJSHandle>();
    const read = (path: string): QuickJSHandle => {
      const cached = objects.get(path);
      if (cached) return cached;
      const dot = path.lastIndexOf('.');
      const handle = keep(ctx.getProp(dot < 0 ? ctx.global : read(path.slice(0, dot)), path.slice(dot + 1)));
      objects.set(path, handle);
      return handle;
    };
    this.builtins = PRISTINE.map(read);
  }

  /** The guest's own JSON.parse, as it was before the user's code ran. */
  get parseJson(): QuickJSHandle {
    return this.builtins[PARSE];
  }

  isString(h: QuickJSHandle): boolean {
    return this.ctx.typeof(h) === 'string';
  }

  /** A guest string's first `max` characters (cut in the guest: a huge string never crosses whole) and its full length. */
  stringHead(h: QuickJSHandle, max: number): { head: string; length: number } {
    const length = this.ctx.getNumber(this.keep(this.ctx.getProp(h, 'length')));
    if (length <= max) return { head: this.ctx.getString(h), length };
    const cut = this.ctx.callFunction(this.builtins[SLICE], h, this.keep(this.ctx.newNumber(0)), this.keep(this.ctx.newNumber(max)));
    if (cut.error) {
      cut.error.dispose();
      return { head: '', length };
    }
    const head = this.ctx.getString(cut.value);
    cut.value.dispose();
    return { head, length };
  }

  /** Length of what `format` would give, without reading a long string across (for output that is only counted). */
  formattedLength(h: QuickJSHandle, maxChars: number): number {
    return this.isString(h) ? this.ctx.getNumber(this.keep(this.ctx.getProp(h, 'length'))) : (this.format(h, maxChars) ?? '[unprintable]').length;
  }

  /**
   * A thrown value: `Name: message` read directly when it has both as strings (an Error, even one thrown
   * because the heap is full, when compiling the formatter would fail too), else `format`.
   */
  describeError(h: QuickJSHandle, maxChars: number): string | null {
    if (this.ctx.typeof(h) === 'object') {
      try {
        const name = this.keep(this.ctx.getProp(h, 'name'));
        const message = this.keep(this.ctx.getProp(h, 'message'));
        if (this.isString(name) && this.isString(message)) {
          return cut(`${this.stringHead(name, maxChars).head}: ${this.stringHead(message, maxChars).head}`, maxChars);
        }
      } catch {
        // A getter that throws (or a Proxy): the formatter says [unprintable] for it.
      }
    }
    return this.format(h, maxChars);
  }

  /** The value as a bounded string (see the header); null when the guest formatter did not finish (its deadline). */
  format(h: QuickJSHandle, maxChars: number): string | null {
    const ctx = this.ctx;
    switch (ctx.typeof(h)) {
      case 'undefined':
        return cut('undefined', maxChars);
      case 'number':
        return cut(String(ctx.getNumber(h)), maxChars);
      case 'boolean':
        return cut(String(ctx.dump(h)), maxChars);
      case 'string': {
        const { head, length } = this.stringHead(h, maxChars);
        const quoted = JSON.stringify(head);
        return length > maxChars ? quoted.slice(0, maxChars) + TRUNCATED : cut(quoted, maxChars);
      }
      default:
        return this.formatInGuest(h, maxChars);
    }
  }

  private formatInGuest(h: QuickJSHandle, maxChars: number): string | null {
    const ctx = this.ctx;
    const format = this.objectFormatter();
    if (!format) return null;
    const r = ctx.callFunction(format, ctx.undefined, h, this.keep(ctx.newNumber(maxChars)));
    if (r.error) {
      r.error.dispose();
      return null;
    }
    const s = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : null;
    r.value.dispose();
    return s;
  }

  private objectFormatter(): QuickJSHandle | null {
    if (this.objectFormat) return this.objectFormat;
    const factory = this.ctx.evalCode(OBJECT_FORMATTER, 'spindle-format.js', { type: 'global', strict: true });
    if (factory.error) {
      factory.error.dispose();
      return null;
    }
    const made = this.ctx.callFunction(this.keep(factory.value), this.ctx.undefined, ...this.builtins.slice(0, PARSE));
    if (made.error) {
      made.error.dispose();
      return null;
    }
    this.objectFormat = this.keep(made.value);
    return this.objectFormat;
  }
}

function cut(s: string, maxChars: number): string {
  return s.length > maxChars ? s.slice(0, maxChars) + TRUNCATED : s;
}
