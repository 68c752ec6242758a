/**
 * Drawing a world's surface: tool names in several styles (some say what the tool does, some do not),
 * descriptions in several phrasings, and the shared word lists (words.json).
 */
import type { Rng } from '../../../src/rng.ts';
import WORDS from './words.json' with { type: 'json' };

export { WORDS };

/** `n` distinct items, in drawn order. */
export function pickDistinct<T>(rng: Rng, items: readonly T[], n: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(rng.int(0, pool.length - 1), 1)[0]);
  return out;
}

const LETTERS = 'abcdefghjkmnpqrstuvwxyz';

export function letters(rng: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += LETTERS[rng.int(0, LETTERS.length - 1)];
  return s;
}

export function digits(rng: Rng, n: number): string {
  let s = String(rng.int(1, 9));
  for (let i = 1; i < n; i++) s += String(rng.int(0, 9));
  return s;
}

export type NameStyle = 'plain' | 'prefixed' | 'opaque';

/**
 * The world's naming style: 'plain' names say what the tool does (`get_price`), 'prefixed' ones share a
 * vendor prefix (`acme_price`), 'opaque' ones say nothing (`tool_kq`, `fn3`), so only the description
 * tells the tools apart. With `prefixes: 'any'` (the build families) half the worlds' prefixes and opaque
 * tags are letters drawn for the world (`qzr_price`, `tool_hwk`): a name the base cannot have memorised
 * is one it must copy from the tool list. Before that, every prefix came from 22 words, and on held-out
 * worlds the base wrote a remembered prefix with the right stem (`echo_stock` for `count_stock`) and kept
 * it through every "unknown tool" error. The held-out families keep the word prefixes, so their figures
 * stay comparable across builds.
 */
export function nameStyle(
  rng: Rng,
  prefixes: 'words' | 'any' = 'words',
): { style: NameStyle; prefix: string; opaque: string; tagLetters: number } {
  const r = rng.next();
  const style: NameStyle = r < 0.4 ? 'plain' : r < 0.7 ? 'prefixed' : 'opaque';
  const naming = {
    style,
    prefix: rng.pick(WORDS.prefixes),
    opaque: rng.pick(['tool', 'fn', 'op', 'api', 'cmd']),
    tagLetters: 2,
  };
  if (prefixes === 'any' && rng.chance(0.5)) {
    naming.prefix = letters(rng, rng.int(2, 5));
    naming.tagLetters = rng.int(2, 4);
  }
  return naming;
}

/**
 * A tool name for a role: `words` are the role's plain spellings (`['get_price', 'price_of']`), `stem`
 * its key word; names already taken in the world are not drawn again.
 */
export function toolName(
  rng: Rng,
  naming: ReturnType<typeof nameStyle>,
  words: string[],
  stem: string,
  taken: Set<string>,
): string {
  for (let attempt = 0; attempt < 20; attempt++) {
    const name =
      naming.style === 'plain'
        ? rng.pick(words)
        : naming.style === 'prefixed'
          ? `${naming.prefix}_${stem}`
          : `${naming.opaque}_${letters(rng, naming.tagLetters)}`;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
  }
  const fallback = `${naming.opaque}_${letters(rng, 4)}`;
  taken.add(fallback);
  return fallback;
}

/** One of several phrasings of a description, `{x}` filled from `fill`. */
export function phrase(rng: Rng, templates: string[], fill: Record<string, string> = {}): string {
  return rng.pick(templates).replace(/\{(\w+)\}/g, (_, k: string) => fill[k] ?? `{${k}}`);
}

/** A parameter name from a few synonyms. */
export function paramName(rng: Rng, options: string[]): string {
  return rng.pick(options);
}

/** "a blue widget"-style names: adjective + thing, distinct. */
export function thingNames(rng: Rng, n: number): string[] {
  const names = new Set<string>();
  while (names.size < n) names.add(`${rng.pick(WORDS.adjectives)} ${rng.pick(WORDS.things)}`);
  return [...names];
}

export function personNames(rng: Rng, n: number): string[] {
  const names = new Set<string>();
  while (names.size < n) names.add(`${rng.pick(WORDS.first_names)} ${rng.pick(WORDS.last_names)}`);
  return [...names];
}
