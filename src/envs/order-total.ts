/**
 * order_total: find with sh, compute with calc. An order file lists items with quantities
 * (`2 plum`); a page may end with `next: orders/cart-b.txt`, the rest of the order. Each item's price
 * is in `prices/<item>.txt`. The answer is the order's total. One page with one item takes 2 calls (the
 * order, then the price, which is the answer); from two items the total is computed with calc; each more
 * page is one more dependent read. In RECOVERY_SHARE of the items one order line names its item in the
 * plural (`2 plums`) and its price file carries a code only a listing shows (`prices/plum-k4.txt`): the
 * file by the written name does not exist, nor does the singular (no fixed rule such as dropping the s
 * finds it), `ls prices` shows the right name, and success needs the corrected read.
 *
 * Success: each page read after the one naming it, each price read after the page listing its item
 * (step-evidence.ts), and — when the answer is a sum or a product — a calc call after those reads whose
 * expression uses every price and whose result is the total; and the final answer is the total. Either
 * part alone is half credit.
 */
import type { Task } from '../contracts.ts';
import { finalAnswer, integerAnswer } from './answer.ts';
import {
  ORDER_ITEMS,
  ORDER_LEVELS,
  ORDER_NAMES,
  ORDER_PROMPT,
  PAGE_SUFFIXES,
  PRICE_RANGE,
  RECOVERY_SHARE,
} from './data/multi-step.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { containsToken, scoreParts } from './evidence.ts';
import { allNeedsMet, readNeed, type StepNeed } from './step-evidence.ts';
import type { EnvironmentSpec, ToolboxSetup } from './types.ts';

export interface OrderLine {
  item: string;
  /** How the order writes it: the item, or its plural in a recovery item. */
  written: string;
  /** Its price file: `prices/<item>.txt`, or with a code (`prices/plum-k4.txt`) in a recovery item. */
  file?: string;
  qty: number;
  price: number;
  /** The page (index) that lists it. */
  page: number;
}

export interface OrderTotalData {
  pages: string[];
  lines: OrderLine[];
  total: number;
  files: Record<string, string>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

const sh = (command: string) => ({ name: 'sh', arguments: { command } });
const priceFile = (item: string): string => `prices/${item}.txt`;
/** Where a line's price is (trajectories stored before lines named their file read `prices/<item>.txt`). */
const fileOf = (line: OrderLine): string => line.file ?? priceFile(line.item);
/** The calc expression of the total, in the order's order: `2 * 7 + 5`. */
const totalExpression = (lines: OrderLine[]): string =>
  lines.map((l) => (l.qty === 1 ? String(l.price) : `${l.qty} * ${l.price}`)).join(' + ');

export const orderTotal: EnvironmentSpec = {
  name: 'order_total',
  description: 'Total an order: read its pages, look up each price, add them up with calc.',
  tags: ['shell', 'files', 'multi-step', 'multi-tool', 'tool-use'],
  requiredTools: ['sh', 'calc'],
  systemStyle: 'compact',
  sample(rng, difficulty) {
    const level = ORDER_LEVELS[difficulty];
    const name = rng.pick(ORDER_NAMES);
    const pages = [
      `orders/${name}.txt`,
      ...PAGE_SUFFIXES.slice(0, level.pages - 1).map((s) => `orders/${name}-${s}.txt`),
    ];
    const items = rng.shuffle(ORDER_ITEMS);
    const plural = rng.chance(RECOVERY_SHARE) ? rng.int(0, level.items - 1) : -1;
    // Items go to pages in turn, so every page lists at least one.
    // Drawn only for a recovery item, so every other item is what it was before codes existed.
    const code = plural >= 0 ? `${rng.pick([...'bdfkmprtvz'])}${rng.int(2, 9)}` : '';
    const lines: OrderLine[] = items.slice(0, level.items).map((item, i) => ({
      item,
      written: i === plural ? `${item}s` : item,
      file: i === plural ? `prices/${item}-${code}.txt` : priceFile(item),
      qty: rng.int(1, level.maxQty),
      price: rng.int(...PRICE_RANGE),
      page: i < level.pages ? i : rng.int(0, level.pages - 1),
    }));
    lines.sort((a, b) => a.page - b.page);
    const files: Record<string, string> = {};
    pages.forEach((page, p) => {
      const body = lines.filter((l) => l.page === p).map((l) => `${l.qty} ${l.written}`);
      if (p + 1 < pages.length) body.push(`next: ${pages[p + 1]}`);
      files[page] = `${body.join('\n')}\n`;
    });
    // Prices of items not ordered too: reading every price file answers nothing.
    for (const item of items.slice(level.items, level.items + 3))
      files[priceFile(item)] = `${rng.int(...PRICE_RANGE)}\n`;
    for (const l of lines) files[fileOf(l)] = `${l.price}\n`;
    const total = lines.reduce((sum, l) => sum + l.qty * l.price, 0);
    return {
      prompt: ORDER_PROMPT.replace('{file}', pages[0]),
      data: { pages, lines, total, files, recovery: plural >= 0 } satisfies OrderTotalData,
      key: `${pages[0]}|${lines.map((l) => `${l.page}:${l.qty} ${l.written}@${l.price}`).join(',')}`,
    };
  },
  toolbox: (task: Task): ToolboxSetup => ({ files: (task.data as OrderTotalData).files }),
  evaluate(task, trajectory) {
    const { pages, lines, total, files } = task.data as OrderTotalData;
    const needs: StepNeed[] = pages.map((page, p) =>
      readNeed(page, files[page].trimEnd(), p > 0 ? [p - 1] : undefined),
    );
    const priceNeeds = lines.map((l) => needs.push(readNeed(fileOf(l), String(l.price), [l.page])) - 1);
    if (lines.length > 1 || lines[0].qty > 1) {
      needs.push({
        after: priceNeeds,
        tools: ['calc'],
        met: (source, result) =>
          integerAnswer(result) === total && lines.every((l) => containsToken(source, String(l.price))),
      });
    }
    return scoreParts(allNeedsMet(trajectory, needs), integerAnswer(finalAnswer(trajectory)) === total);
  },
  expert(task) {
    const { pages, lines, total } = task.data as OrderTotalData;
    const turns = pages.map((page, p) =>
      callTurn(p === 0 ? 'Read the order.' : 'Read the next page.', [sh(`cat ${page}`)]),
    );
    const asWritten = lines.map((l) => priceFile(l.written)).join(' ');
    turns.push(callTurn('Look up the prices.', [sh(`cat ${asWritten}`)]));
    if (lines.some((l) => l.written !== l.item)) {
      turns.push(callTurn('A price is missing. List them.', [sh('ls prices')]));
      turns.push(callTurn('Use the listed names.', [sh(`cat ${lines.map(fileOf).join(' ')}`)]));
    }
    if (lines.length > 1 || lines[0].qty > 1)
      turns.push(callTurn('Add them up.', [{ name: 'calc', arguments: { expression: totalExpression(lines) } }]));
    return [...turns, answerTurn(String(total))];
  },
};
