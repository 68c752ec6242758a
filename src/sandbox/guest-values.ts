/**
 * Reading guest values on the host for runJs: the completion value and console arguments as bounded
 * JSON-ish strings, guest strings cut before they cross, and the guest's JSON.parse for host results.
 *
 * Why on the host: QuickJS compiles every function of a script when it parses it, and a per-call
 * bootstrap script that defined console and a formatter cost more than the rest of a call. Primitives
 * (what most calls return or print) are formatted here without guest code; the object formatter
 * (cycles, throwing getters, depth and item caps) runs in a context of its own that user code never
 * reaches (FormatterRealm), compiled once per runtime. The built-ins the string cut and host results
 * use are read before the user's code runs, so tampering with String.prototype.slice or JSON.parse
 * cannot change them.
 *
 * `format(value, maxChars)` gives: strings quoted, `undefined`, functions as `[Function: name]`, errors
 * as `Name: message`, cycles as `[Circular]`, depth > 4 as `[Object]`/`[Array]`, at most 100 items per
 * container, `[unprintable]` for what cannot be read; longer than maxChars, cut with `...[truncated]`.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';

/**
 * The guest side of `format` for objects. It runs in a context of its own (FormatterRealm), so user code
 * never reaches its built-ins, and `instanceof Error` would miss the user's realm's errors: the class
 * is read with Object.prototype.toString instead.
 */
const OBJECT_FORMATTER = String.raw`(function () {
  'use strict';
  const stringify = JSON.stringify, keys = Object.keys, isArray = Array.isArray, StringFn = String;
  const classOf = Function.prototype.call.bind(Object.prototype.toString);
  // Reads Symbol.toStringTag: a Proxy whose reads throw is then shown as an object, not an error.
  function isError(x) { try { return classOf(x) === '[object Error]'; } catch (e) { return false; } }
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
    if (isError(x)) return StringFn(x.name) + ': ' + StringFn(x.message);
    if (depth >= MAX_DEPTH) return isArray(x) ? '[Array]' : '[Object]';
    seen[seen.length] = x;
    const parts = [];
    if (isArray(x)) {
      const n = x.length < MAX_ITEMS ? x.length : MAX_ITEMS;
      for (let i = 0; i < n; i++) parts[i] = fmt(x[i], depth + 1, seen);
      if (x.length > MAX_ITEMS) parts[n] = '...' + (x.length - MAX_ITEMS) + ' more';
      seen.length--;
      return '[' + parts.join(',') + ']';
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
    return '{' + parts.join(',') + '}';
  }
  return function format(value, maxChars) {
    let s;
    try { s = fmt(value, 0, []); } catch (e) { s = '[unprintable]'; }
    if (typeof s !== 'string') s = '[unprintable]';
    return s.length > maxChars ? s.slice(0, maxChars) + '...[truncated]' : s;
  };
})()`;

/**
 * The object formatter's own context in a runtime, compiled on first use and kept while the runtime
 * serves calls (compiling it in every call's fresh context cost more than the rest of the call). Values
 * of a call's context are passed to it directly: contexts of one QuickJS runtime share its heap, and its
 * deadline and memory limit hold for both. Nothing of this realm is ever handed to user code, so no call
 * can change how a later one is shown.
 */
export class FormatterRealm {
  private ctx: QuickJSContext | null = null;
  private fn: QuickJSHandle | null = null;

  constructor(private readonly runtime: QuickJSRuntime) {}

  /** `format` of the header for a non-primitive; null when it did not finish (deadline, heap). */
  format(h: QuickJSHandle, maxChars: number): string | null {
    const fn = this.formatter();
    if (!fn || !this.ctx) return null;
    const ctx = this.ctx;
    const max = ctx.newNumber(maxChars);
    const r = ctx.callFunction(fn, ctx.undefined, h, max);
    max.dispose();
    if (r.error) {
      r.error.dispose();
      return null;
    }
    const s = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : null;
    r.value.dispose();
    return s;
  }

  dispose(): void {
    this.fn?.dispose();
    this.ctx?.dispose();
    this.fn = null;
    this.ctx = null;
  }

  private formatter(): QuickJSHandle | null {
    if (this.fn) return this.fn;
    this.ctx ??= this.runtime.newContext();
    const made = this.ctx.evalCode(OBJECT_FORMATTER, 'spindle-format.js', { type: 'global', strict: true });
    if (made.error) {
      // Out of time or heap (the user's call used it up): try again on the next object.
      made.error.dispose();
      return null;
    }
    this.fn = made.value;
    return this.fn;
  }
}

/** The built-ins read before the user's code runs. */
const PRISTINE = ['String.prototype.slice', 'JSON.parse'] as const;
const SLICE = PRISTINE.indexOf('String.prototype.slice');
const PARSE = PRISTINE.indexOf('JSON.parse');

const TRUNCATED = '...[truncated]';

export class GuestValues {
  private readonly builtins: QuickJSHandle[];

  /** Reads the built-ins now: call before any user code. `keep` registers a handle for disposal with the call. */
  constructor(
    private readonly ctx: QuickJSContext,
    private readonly keep: (h: QuickJSHandle) => QuickJSHandle,
    private readonly formatter: FormatterRealm,
  ) {
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
    const cut = this.ctx.callFunction(
      this.builtins[SLICE],
      h,
      this.keep(this.ctx.newNumber(0)),
      this.keep(this.ctx.newNumber(max)),
    );
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
    return this.isString(h)
      ? this.ctx.getNumber(this.keep(this.ctx.getProp(h, 'length')))
      : (this.format(h, maxChars) ?? '[unprintable]').length;
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
        return this.formatter.format(h, maxChars);
    }
  }
}

function cut(s: string, maxChars: number): string {
  return s.length > maxChars ? s.slice(0, maxChars) + TRUNCATED : s;
}
