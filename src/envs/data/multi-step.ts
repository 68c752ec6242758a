/**
 * Catalog data for the multi-step environments (file_chain, order_total, func_trace): how many
 * dependent steps each level takes, the share of items whose first reasonable attempt fails, names
 * and wording. Names are short on purpose: the shipped policy reads one byte per token.
 */

/**
 * Share of items built so that the first reasonable attempt fails informatively and success needs a
 * corrected retry: a moved file (cat fails, find shows where it went), a price file named differently
 * from the order (cat fails, ls shows the name), a function whose file does not say what it uses (the
 * run fails with "x is not defined", which names the file to read).
 */
export const RECOVERY_SHARE = 0.3;

/** file_chain: files on the chain per level (each needs one read: 2, 3, 4, 5 and 6 calls). */
export const CHAIN_FILES: Record<number, number> = { 1: 2, 2: 3, 3: 4, 4: 5, 5: 6 };
/** file_chain: files off the chain (dead ends holding other words), so reading the wrong one answers wrong. */
export const CHAIN_DECOYS = 4;
export const CHAIN_PROMPT = 'Start at {start} and follow each next: to the end. What word is there?';
/** Where a moved file goes: the chain still names its old place. */
export const MOVED_DIRS = ['old', 'moved', 'attic'];

/**
 * order_total: pages of the order and items per level. One page, one item is 2 calls (the order, then
 * the price: the answer is the price); from two items the total needs calc; each more page is one more
 * dependent read (a page's last line names the next page): 2, 3, 4, 5 and 6 calls.
 */
export const ORDER_LEVELS: Record<number, { pages: number; items: number; maxQty: number }> = {
  1: { pages: 1, items: 1, maxQty: 1 },
  2: { pages: 1, items: 2, maxQty: 3 },
  3: { pages: 2, items: 2, maxQty: 3 },
  4: { pages: 3, items: 3, maxQty: 3 },
  5: { pages: 4, items: 4, maxQty: 3 },
};
export const ORDER_PROMPT = 'What does the order in {file} cost in total?';
export const ORDER_ITEMS = [
  'apple',
  'pear',
  'plum',
  'fig',
  'lime',
  'kiwi',
  'melon',
  'grape',
  'peach',
  'mango',
  'lemon',
  'cherry',
  'onion',
  'bean',
  'rice',
  'bread',
  'milk',
  'egg',
  'tea',
  'salt',
];
export const ORDER_NAMES = ['order', 'cart', 'basket', 'list', 'bill'];
export const PAGE_SUFFIXES = ['b', 'c', 'd'];
/** Prices are small integers: the policy copies them into calc, never computes them in its head. */
export const PRICE_RANGE: [number, number] = [2, 19];

/**
 * func_trace: functions on the call chain per level (each file read is a call, plus the js run: 2, 3,
 * 4, 5 and 6 calls).
 */
export const TRACE_FUNCS: Record<number, number> = { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5 };
export const TRACE_PROMPT = 'What does {name}({x}) return? It is in lib/{name}.js.';
export const FUNC_NAMES = [
  'scale',
  'shift',
  'twist',
  'fold',
  'bump',
  'grow',
  'trim',
  'warp',
  'mix',
  'spin',
  'step',
  'lift',
  'drop',
  'flip',
  'push',
  'pull',
];
/** Function bodies over `x` and the next function's call `n(x)`; each keeps integers small. */
export const FUNC_OPS = ['+', '-', '*'] as const;
export const TRACE_DECOYS = 3;
