/**
 * A forgiving JSON reader for tool-call payloads written by language models. On top of JSON it accepts
 * what models actually emit: single-quoted strings (Hermes' own prompt uses Python-dict style), raw
 * newlines and tabs inside strings (code arguments), unquoted keys, trailing commas, and Python's
 * True/False/None. Replacing `'` with `"` (as some parsers do) would break `"it's"`; a real tokenizer does not.
 *
 * Returns a result object instead of throwing, with an error that says where the text stopped making sense.
 */

export type LooseJsonResult = { ok: true; value: unknown } | { ok: false; error: string };

class LooseJsonError extends Error {}

const IDENTIFIER = /[A-Za-z_$][\w$-]*/y;
const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const KEYWORDS: Record<string, unknown> = {
  true: true,
  false: false,
  null: null,
  True: true,
  False: false,
  None: null,
};
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '0': '\0',
  '/': '/',
  '\\': '\\',
  '"': '"',
  "'": "'",
  '\n': '',
};
/** Deeper nesting than this is not a tool call; refusing it keeps the parser off the host's stack limit. */
const MAX_DEPTH = 64;

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    const at =
      this.pos >= this.text.length
        ? 'end of input'
        : `position ${this.pos} (${JSON.stringify(this.text.slice(this.pos, this.pos + 12))})`;
    throw new LooseJsonError(`${what} at ${at}`);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"' || c === "'") return this.string();
    NUMBER.lastIndex = this.pos;
    const num = NUMBER.exec(this.text);
    if (num) {
      this.pos += num[0].length;
      return Number(num[0]);
    }
    IDENTIFIER.lastIndex = this.pos;
    const word = IDENTIFIER.exec(this.text);
    if (word && word[0] in KEYWORDS) {
      this.pos += word[0].length;
      return KEYWORDS[word[0]];
    }
    return this.fail(c === undefined ? 'unexpected end of input' : 'expected a value');
  }

  string(): string {
    const quote = this.text[this.pos++];
    let out = '';
    while (this.pos < this.text.length) {
      const c = this.text[this.pos++];
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.text[this.pos++];
      if (e === 'u') {
        const hex = this.text.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad \\u escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += 4;
      } else if (e !== undefined) {
        out += ESCAPES[e] ?? e;
      }
    }
    return this.fail('unterminated string');
  }

  key(): string {
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '"' || c === "'") return this.string();
    IDENTIFIER.lastIndex = this.pos;
    const word = IDENTIFIER.exec(this.text);
    if (!word) return this.fail('expected a property name');
    this.pos += word[0].length;
    return word[0];
  }

  object(depth: number): Record<string, unknown> {
    this.pos++; // {
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const key = this.key();
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail(`expected ':' after "${key}"`);
      this.pos++;
      // defineProperty: a "__proto__" key must become data, not change the object's prototype.
      Object.defineProperty(out, key, {
        value: this.value(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.skipSpace();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') this.fail("expected ',' or '}'");
    }
  }

  array(depth: number): unknown[] {
    this.pos++; // [
    const out: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === ']') {
        this.pos++;
        return out;
      }
      out.push(this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== ']') this.fail("expected ',' or ']'");
    }
  }
}

/** Strict JSON first (fast, exact); the forgiving reader only when that fails. */
export function parseLooseJson(text: string): LooseJsonResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // fall through to the forgiving reader
  }
  const reader = new Reader(text);
  try {
    const value = reader.value(0);
    reader.skipSpace();
    if (reader.pos < text.length) reader.fail('unexpected text after the value');
    return { ok: true, value };
  } catch (e) {
    if (e instanceof LooseJsonError) return { ok: false, error: e.message };
    return { ok: false, error: String(e) };
  }
}

/**
 * End index (exclusive) of the bracketed value (`{…}` or `[…]`) starting at `start`, skipping brackets
 * inside single- or double-quoted strings; -1 when it does not close: the text ends first, or a `<`
 * appears outside any string (no JSON has one there: it is the next tag after a cut-off call, and
 * stopping there keeps a turn of many cut-off calls from being scanned to its end once per call).
 */
export function scanJsonValue(text: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '<') return -1;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
