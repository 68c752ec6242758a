/**
 * Source of the script that runs first in every fresh QuickJS context, before the user's code.
 * It captures the built-ins it needs (so later tampering by the user's code cannot change how values
 * are formatted), installs a `console` that forwards lines to the host `write` function without
 * exposing `write` as a global (`write(head, length)`: lines longer than `maxLine` are cut here, in the
 * guest, so a huge string never crosses to the host), and returns `{ format, parse }` for the host to call.
 *
 * `format(value, maxChars)` renders any guest value as a bounded JSON-ish string: strings quoted,
 * `undefined`, functions as `[Function: name]`, errors as `Name: message`, cycles as `[Circular]`,
 * depth > 4 as `[Object]`/`[Array]`, at most 100 items per container; getters that throw become
 * `[unprintable]`. It never throws and always returns a string.
 */
export const GUEST_BOOTSTRAP = String.raw`(function (write, maxLine) {
  const stringify = JSON.stringify, parse = JSON.parse, keys = Object.keys, isArray = Array.isArray;
  const apply = Reflect.apply, join = Array.prototype.join, slice = String.prototype.slice, StringFn = String;
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

  function format(value, maxChars) {
    let s;
    try { s = fmt(value, 0, []); } catch (e) { s = '[unprintable]'; }
    if (typeof s !== 'string') s = '[unprintable]';
    return s.length > maxChars ? s.slice(0, maxChars) + '...[truncated]' : s;
  }

  function logLine(args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) parts[i] = typeof args[i] === 'string' ? args[i] : format(args[i], 10000);
    return apply(join, parts, [' ']);
  }
  // Only the head that the host's buffer can still take crosses over, with the line's full length.
  function log() {
    const line = logLine(arguments);
    write(line.length > maxLine ? apply(slice, line, [0, maxLine]) : line, line.length);
  }
  globalThis.console = { log: log, info: log, warn: log, error: log, debug: log };
  return { format: format, parse: parse };
})`;
