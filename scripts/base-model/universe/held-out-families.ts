/**
 * Families kept out of the build whole: the base model never sees their tools, their wording or their
 * errors, so its success on them measures whether it reads a tool list rather than replays one. An
 * inventory (counts that shipping and receiving change; shipping more than is left is refused with how
 * many are) and a calendar (events by date; a date in the wrong format is refused with the format).
 */
import { arg, drawTool, fail, intArg, wording, type DrawnTool } from './roles.ts';
import { nameStyle, pickDistinct, thingNames, WORDS } from './surface.ts';
import type { Family, PlanStep, Surface } from './world.ts';

interface InventorySurface extends Surface {
  count: DrawnTool;
  receive: DrawnTool;
  ship: DrawnTool;
}

const itemParam = { names: ['item', 'sku', 'product'], description: 'the item name, e.g. "red lamp"' };
const qtyParam = {
  names: ['qty', 'quantity', 'count'],
  description: 'how many, a whole number',
  type: 'number' as const,
};

export const inventoryFamily: Family<InventorySurface> = {
  name: 'inventory',
  levels: [1, 2, 3],
  surface(rng) {
    const naming = nameStyle(rng);
    const taken = new Set<string>();
    const count = drawTool(rng, naming, taken, {
      words: ['stock_count', 'on_hand', 'count_stock'],
      stem: 'count',
      descriptions: ['Returns how many of an item the warehouse holds.', 'Counts the units of an item on hand.'],
      params: { item: itemParam },
    });
    const receive = drawTool(rng, naming, taken, {
      words: ['receive', 'restock', 'add_stock'],
      stem: 'receive',
      descriptions: [
        'Records units of an item arriving; returns the new count.',
        'Adds delivered units to the stock of an item.',
      ],
      params: { item: itemParam, qty: qtyParam },
    });
    const ship = drawTool(rng, naming, taken, {
      words: ['ship', 'dispatch', 'remove_stock'],
      stem: 'ship',
      descriptions: [
        'Ships units of an item out of the warehouse; returns what is left.',
        'Takes units of an item out of stock for an order.',
      ],
      params: { item: itemParam, qty: qtyParam },
    });
    return { tools: { count, receive, ship }, count, receive, ship };
  },
  init: (data) => ({ stock: { ...(data.stock as Record<string, number>) } }),
  tools(s) {
    const itemOf = (tool: DrawnTool, args: Record<string, unknown>, state: Record<string, unknown>) => {
      const stock = state.stock as Record<string, number>;
      const item = arg(args, tool.params.item).toLowerCase();
      if (!(item in stock)) fail(`unknown item "${item}"; items: ${Object.keys(stock).join(', ')}`);
      return { stock, item };
    };
    return [
      {
        name: s.count.name,
        description: s.count.description,
        params: s.count.schema,
        run: (args, state) => {
          const { stock, item } = itemOf(s.count, args, state);
          return `${stock[item]} ${item} on hand`;
        },
      },
      {
        name: s.receive.name,
        description: s.receive.description,
        params: s.receive.schema,
        run(args, state) {
          const { stock, item } = itemOf(s.receive, args, state);
          stock[item] += intArg(args, s.receive.params.qty, s.receive.name);
          return `${item}: ${stock[item]} on hand`;
        },
      },
      {
        name: s.ship.name,
        description: s.ship.description,
        params: s.ship.schema,
        run(args, state) {
          const { stock, item } = itemOf(s.ship, args, state);
          const qty = intArg(args, s.ship.params.qty, s.ship.name);
          if (qty > stock[item]) fail(`only ${stock[item]} ${item} on hand; ship at most ${stock[item]}`);
          stock[item] -= qty;
          return `shipped ${qty}; ${item}: ${stock[item]} on hand`;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const items = thingNames(rng, 4);
    const stock = Object.fromEntries(items.map((it) => [it, rng.int(2, 90)]));
    const item = items[0];
    const plan: PlanStep[] = [];
    const call = (tool: DrawnTool, qty?: number) => ({
      name: tool.name,
      args: qty === undefined ? { [tool.params.item]: item } : { [tool.params.item]: item, [tool.params.qty]: qty },
    });
    let prompt: string;
    let answer: string;
    let evidence: string;
    if (level === 1) {
      prompt = wording(
        rng,
        ['How many {item} do we have?', 'Check the stock of {item}.', 'What is the on-hand count of {item}?'],
        templates,
        { item },
      );
      plan.push({ think: `${s.count.name} counts stock.`, call: call(s.count) });
      answer = String(stock[item]);
      evidence = `${answer} ${item} on hand`;
    } else if (level === 2) {
      const n = rng.int(3, 40);
      prompt = wording(
        rng,
        [
          'We just received {n} {item}. Record it and tell me the new count.',
          'A delivery of {n} {item} came in; log it and report the stock.',
          'Add {n} delivered {item} to stock. How many now?',
        ],
        templates,
        { n: String(n), item },
      );
      plan.push({ think: `${s.receive.name} records a delivery.`, call: call(s.receive, n) });
      answer = String(stock[item] + n);
      evidence = `${item}: ${answer} on hand`;
    } else {
      const n = stock[item] + rng.int(1, 20);
      prompt = wording(
        rng,
        [
          'An order wants {n} {item}. Ship as many as we can; how many are left?',
          'Ship {n} {item}, or all we have if that is fewer. What remains?',
          'Fill an order of {n} {item} as far as stock allows and report what is left.',
        ],
        templates,
        { n: String(n), item },
      );
      plan.push({ think: `${s.ship.name} ships units.`, call: call(s.ship, n) });
      plan.push({ think: `Only ${stock[item]} on hand; ship those.`, call: call(s.ship, stock[item]) });
      answer = '0';
      evidence = `shipped ${stock[item]}; ${item}: 0 on hand`;
    }
    plan.push({ think: null, answer });
    return { prompt, key: JSON.stringify([level, stock, prompt]), data: { stock }, answer, plan, evidence: [evidence] };
  },
};

interface CalendarSurface extends Surface {
  events: DrawnTool;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

export const calendarFamily: Family<CalendarSurface> = {
  name: 'calendar',
  levels: [1, 2, 3],
  surface(rng) {
    const events = drawTool(rng, nameStyle(rng), new Set(), {
      words: ['events_on', 'calendar_day', 'agenda'],
      stem: 'events',
      descriptions: [
        'Lists the events on a date (YYYY-MM-DD) with their times.',
        "Returns a day's agenda: time and event, for a date written YYYY-MM-DD.",
      ],
      params: { date: { names: ['date', 'day', 'on'], description: 'a date written YYYY-MM-DD' } },
    });
    return { tools: { events }, events };
  },
  tools(s) {
    return [
      {
        name: s.events.name,
        description: s.events.description,
        params: s.events.schema,
        run(args, _state, data) {
          const date = arg(args, s.events.params.date);
          if (!/^\d{4}-\d{2}-\d{2}$/.test(date))
            fail(`"${date}" is not a date in the form YYYY-MM-DD, e.g. 2025-03-07`);
          const day = (data.days as Record<string, string[]>)[date];
          return day?.length ? day.join('\n') : `no events on ${date}`;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const month = rng.int(1, 12);
    const first = rng.int(1, 24);
    const iso = (d: number) => `2025-${String(month).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    const span = level === 3 ? 3 : 1;
    const kinds = pickDistinct(rng, WORDS.events, 4);
    const target = kinds[0];
    const on = first + rng.int(0, span - 1);
    const days: Record<string, string[]> = {};
    const time = `${String(rng.int(8, 17)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])}`;
    for (let d = first; d < first + span; d++) {
      const rows = kinds
        .slice(1)
        .filter(() => rng.chance(0.6))
        .map((k) => `${String(rng.int(8, 17)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])} ${k}`);
      if (d === on) rows.push(`${time} ${target}`);
      days[iso(d)] = rows.sort();
    }
    const spoken = `${MONTHS[month - 1]} ${on}, 2025`;
    const plan: PlanStep[] = [];
    const call = (date: string) => ({ name: s.events.name, args: { [s.events.params.date]: date } });
    let prompt: string;
    let answer: string;
    if (level < 3) {
      const said = level === 1 ? iso(on) : spoken;
      prompt = wording(
        rng,
        [
          'What time is the {event} on {date}?',
          'When does the {event} start on {date}?',
          'On {date}, at what time is the {event}?',
        ],
        templates,
        { event: target, date: said },
      );
      if (level === 2) plan.push({ think: `${s.events.name} lists a day's events.`, call: call(spoken) });
      plan.push({
        think: level === 2 ? 'The date must be YYYY-MM-DD.' : `${s.events.name} lists a day's events.`,
        call: call(iso(on)),
      });
      answer = time;
    } else {
      prompt = wording(
        rng,
        [
          'Which day from {a} to {b} has the {event}? Answer with the date.',
          'Between {a} and {b}, on which date is the {event}?',
          'Find the date of the {event}; it is between {a} and {b}.',
        ],
        templates,
        { a: iso(first), b: iso(first + span - 1), event: target },
      );
      for (let d = first; d <= on; d++)
        plan.push({
          think: d === first ? `${s.events.name} lists a day's events.` : 'Not there; the next day.',
          call: call(iso(d)),
        });
      answer = iso(on);
    }
    plan.push({ think: null, answer });
    return {
      prompt,
      key: JSON.stringify([level, days, target]),
      data: { days },
      answer,
      plan,
      evidence: [`${time} ${target}`],
    };
  },
};
