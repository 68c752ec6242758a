/**
 * Writes examples/tasks/word-problems.jsonl: grade-school word problems in the GSM8K layout (a question,
 * and an answer whose worked steps end in "#### N"), generated here from templates with a fixed seed, so
 * the file is the same on every run. Levels are the steps a problem needs: level 1 two, level 2 three,
 * level 3 four or five. Every answer is a whole number of at least 2, computed with the question. Each
 * row names the `number` verifier, so the file works without a `tasks.verifier` setting.
 *
 *   npx tsx scripts/examples/make-word-problems.ts
 */
import { writeFileSync } from 'node:fs';
import { createRng, type Rng } from '../../src/rng.ts';

const OUT = 'examples/tasks/word-problems.jsonl';
const PER_LEVEL = 100;
const SEED = 2024;

interface Problem {
  question: string;
  /** Worked steps, each "expression = value". */
  steps: string[];
  answer: number;
}

const PEOPLE: [string, 'he' | 'she'][] = [
  ['Amara', 'she'],
  ['Ben', 'he'],
  ['Chloe', 'she'],
  ['Dev', 'he'],
  ['Elena', 'she'],
  ['Farid', 'he'],
  ['Grace', 'she'],
  ['Hugo', 'he'],
  ['Ines', 'she'],
  ['Jonas', 'he'],
  ['Keiko', 'she'],
  ['Liam', 'he'],
  ['Maya', 'she'],
  ['Noah', 'he'],
  ['Olga', 'she'],
  ['Pablo', 'he'],
  ['Quinn', 'she'],
  ['Ravi', 'he'],
  ['Sofia', 'she'],
  ['Tomas', 'he'],
];
const PACKED = ['stickers', 'pencils', 'marbles', 'crayons', 'cards', 'buttons', 'beads', 'erasers'];
const BAKED = ['cookies', 'muffins', 'rolls', 'cupcakes', 'biscuits'];
const CROPS: [string, string][] = [
  ['tomato', 'tomatoes'],
  ['pepper', 'peppers'],
  ['bean', 'pods'],
  ['strawberry', 'berries'],
  ['squash', 'squashes'],
];
const COLLECTED = ['stamps', 'coins', 'shells', 'postcards', 'comics'];

const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
const hours = (n: number) => `${n} hour${n === 1 ? '' : 's'}`;
const person = (rng: Rng) => {
  const [name, he] = rng.pick(PEOPLE);
  return { name, he, He: cap(he), his: he === 'he' ? 'his' : 'her' };
};
const otherPerson = (rng: Rng, not: string[]) => {
  let p = person(rng);
  while (not.includes(p.name)) p = person(rng);
  return p;
};

/** The templates of each level; each draws its numbers so every intermediate value is a whole number. */
const TEMPLATES: Record<number, ((rng: Rng) => Problem)[]> = {
  1: [
    (rng) => {
      const p = person(rng),
        item = rng.pick(PACKED),
        a = rng.int(2, 9),
        b = rng.int(4, 15),
        total = a * b,
        c = rng.int(2, total - 2);
      return {
        question: `${p.name} buys ${a} packs of ${item} with ${b} ${item} in each pack. ${p.He} gives ${c} ${item} to a friend. How many ${item} does ${p.name} have left?`,
        steps: [`${a}*${b} = ${total}`, `${total}-${c} = ${total - c}`],
        answer: total - c,
      };
    },
    (rng) => {
      const p = person(rng),
        rate = rng.int(8, 25),
        h1 = rng.int(2, 8),
        h2 = rng.int(2, 8);
      return {
        question: `${p.name} earns $${rate} an hour. ${p.He} works ${h1} hours on Monday and ${h2} hours on Tuesday. How many dollars does ${p.he} earn in the two days?`,
        steps: [`${h1}+${h2} = ${h1 + h2}`, `${h1 + h2}*${rate} = ${(h1 + h2) * rate}`],
        answer: (h1 + h2) * rate,
      };
    },
    (rng) => {
      const p = person(rng),
        item = rng.pick(BAKED),
        friends = rng.int(2, 8),
        trays = rng.int(2, 6),
        perTray = friends * rng.int(2, Math.floor(24 / friends));
      const total = trays * perTray;
      return {
        question: `${p.name} bakes ${trays} trays of ${item} with ${perTray} ${item} on each tray. ${p.He} shares them equally among ${friends} friends. How many ${item} does each friend get?`,
        steps: [`${trays}*${perTray} = ${total}`, `${total}/${friends} = ${total / friends}`],
        answer: total / friends,
      };
    },
    (rng) => {
      const p = person(rng),
        book = rng.int(3, 15),
        start = 3 * book + rng.int(2, 40);
      return {
        question: `${p.name} has $${start}. ${p.He} spends $${book} on a book and twice as much on a board game. How many dollars does ${p.he} have left?`,
        steps: [`${book}*2 = ${2 * book}`, `${start}-${book}-${2 * book} = ${start - 3 * book}`],
        answer: start - 3 * book,
      };
    },
  ],
  2: [
    (rng) => {
      const p = person(rng),
        n = rng.int(2, 6),
        price = rng.int(2, 9),
        m = rng.int(2, 8),
        pen = rng.int(1, 4),
        cost = n * price + m * pen;
      const bill = [20, 50, 100].find((b) => b >= cost + 2)!;
      return {
        question: `${p.name} buys ${n} notebooks at $${price} each and ${m} pens at $${pen} each. ${p.He} pays with a $${bill} bill. How many dollars of change does ${p.he} get?`,
        steps: [
          `${n}*${price} = ${n * price}`,
          `${m}*${pen} = ${m * pen}`,
          `${bill}-${n * price}-${m * pen} = ${bill - cost}`,
        ],
        answer: bill - cost,
      };
    },
    (rng) => {
      const p = person(rng),
        [crop, fruit] = rng.pick(CROPS),
        rows = rng.int(2, 8),
        per = rng.int(3, 12),
        each = rng.int(2, 6),
        total = rows * per * each,
        kept = rng.int(2, Math.min(30, total - 2));
      return {
        question: `${p.name} has ${rows} rows of ${crop} plants with ${per} plants in each row. Each plant gives ${each} ${fruit}. ${p.He} keeps ${kept} ${fruit} and sells the rest. How many ${fruit} does ${p.he} sell?`,
        steps: [
          `${rows}*${per} = ${rows * per}`,
          `${rows * per}*${each} = ${total}`,
          `${total}-${kept} = ${total - kept}`,
        ],
        answer: total - kept,
      };
    },
    (rng) => {
      const s1 = rng.int(4, 9) * 10,
        t1 = rng.int(1, 3),
        s2 = rng.int(3, 8) * 10,
        t2 = rng.int(1, 3),
        done = s1 * t1 + s2 * t2,
        left = rng.int(2, 30) * 5;
      return {
        question: `A bus drives at ${s1} km per hour for ${hours(t1)}, then at ${s2} km per hour for ${hours(t2)}. The town it is going to is ${done + left} km from the start. How many km are left to drive?`,
        steps: [
          `${s1}*${t1} = ${s1 * t1}`,
          `${s2}*${t2} = ${s2 * t2}`,
          `${done + left}-${s1 * t1}-${s2 * t2} = ${left}`,
        ],
        answer: left,
      };
    },
    (rng) => {
      const p = person(rng),
        a = rng.int(5, 30),
        b = rng.int(10, 50),
        w = rng.int(2, 4);
      return {
        question: `${p.name} reads ${a} pages on each weekday and ${b} pages on each day of the weekend. How many pages does ${p.he} read in ${w} weeks?`,
        steps: [`5*${a} = ${5 * a}`, `2*${b} = ${2 * b}`, `(${5 * a}+${2 * b})*${w} = ${(5 * a + 2 * b) * w}`],
        answer: (5 * a + 2 * b) * w,
      };
    },
  ],
  3: [
    (rng) => {
      const p = person(rng),
        guests = rng.int(6, 30),
        slices = rng.int(2, 4),
        per = rng.pick([6, 8, 10, 12]),
        price = rng.int(8, 16),
        drinks = rng.int(4, 20),
        dp = rng.int(1, 3);
      const pizzas = Math.ceil((guests * slices) / per);
      return {
        question: `${p.name} is having ${guests} guests. Each guest eats ${slices} slices of pizza, and a pizza has ${per} slices. ${p.He} buys just enough whole pizzas at $${price} each, and ${drinks} drinks at $${dp} each. How many dollars does ${p.he} spend?`,
        steps: [
          `${guests}*${slices} = ${guests * slices}`,
          `${guests * slices}/${per} rounded up = ${pizzas}`,
          `${pizzas}*${price} = ${pizzas * price}`,
          `${drinks}*${dp} = ${drinks * dp}`,
          `${pizzas * price}+${drinks * dp} = ${pizzas * price + drinks * dp}`,
        ],
        answer: pizzas * price + drinks * dp,
      };
    },
    (rng) => {
      const p = person(rng),
        price = rng.int(1, 4) * 20,
        off = rng.pick([10, 20, 25, 50]),
        n = rng.int(2, 5),
        hat = rng.int(5, 20),
        fee = rng.int(3, 9);
      const sale = (price * (100 - off)) / 100;
      return {
        question: `A shop sells shirts for $${price}. In a sale, shirts are ${off}% off. ${p.name} buys ${n} shirts and a hat for $${hat}, which is not on sale, and pays a $${fee} delivery fee. How many dollars does ${p.he} pay in all?`,
        steps: [
          `${price}*${off}/100 = ${(price * off) / 100}`,
          `${price}-${(price * off) / 100} = ${sale}`,
          `${n}*${sale} = ${n * sale}`,
          `${n * sale}+${hat}+${fee} = ${n * sale + hat + fee}`,
        ],
        answer: n * sale + hat + fee,
      };
    },
    (rng) => {
      const cap4 = rng.int(5, 30) * 4,
        [num, den, word] = rng.pick([
          [1, 2, 'half'],
          [1, 4, 'a quarter'],
          [3, 4, 'three quarters'],
        ] as const),
        rate = rng.int(2, 9),
        mins = rng.int(3, 12);
      const start = (cap4 * num) / den,
        added = rate * mins,
        used = rng.int(2, start + added - 2);
      return {
        question: `A water tank holds ${cap4} liters and is ${word} full. A pump adds ${rate} liters a minute for ${mins} minutes, and then ${used} liters are used to water a garden. How many liters are in the tank now?`,
        steps: [
          `${cap4}*${num}/${den} = ${start}`,
          `${rate}*${mins} = ${added}`,
          `${start}+${added} = ${start + added}`,
          `${start + added}-${used} = ${start + added - used}`,
        ],
        answer: start + added - used,
      };
    },
    (rng) => {
      const p = person(rng),
        q = otherPerson(rng, [p.name]),
        r = otherPerson(rng, [p.name, q.name]),
        thing = rng.pick(COLLECTED),
        a = rng.int(4, 40),
        k = rng.int(2, 5),
        d = rng.int(2, k * a - 2),
        e = rng.int(2, 15);
      return {
        question: `${p.name} has ${a} ${thing}. ${q.name} has ${k} times as many ${thing} as ${p.name}, and ${r.name} has ${d} fewer than ${q.name}. Then ${p.name} buys ${e} more. How many ${thing} do the three of them have together now?`,
        steps: [
          `${k}*${a} = ${k * a}`,
          `${k * a}-${d} = ${k * a - d}`,
          `${a}+${e} = ${a + e}`,
          `${a + e}+${k * a}+${k * a - d} = ${a + e + 2 * k * a - d}`,
        ],
        answer: a + e + 2 * k * a - d,
      };
    },
    (rng) => {
      const p = person(rng),
        hours = rng.int(42, 50),
        wage = rng.int(5, 12) * 2,
        weeks = rng.int(2, 4),
        rent = rng.int(5, 20) * 10;
      const regular = 40 * wage,
        over = (hours - 40) * wage * 1.5,
        week = regular + over;
      return {
        question: `${p.name} works ${hours} hours a week and is paid $${wage} an hour for the first 40 hours and 1.5 times that for each hour over 40. After ${weeks} weeks ${p.he} pays $${rent} for ${p.his} rent. How many dollars does ${p.he} have left from ${p.his} pay?`,
        steps: [
          `40*${wage} = ${regular}`,
          `(${hours}-40)*${wage}*1.5 = ${over}`,
          `${regular}+${over} = ${week}`,
          `${week}*${weeks}-${rent} = ${week * weeks - rent}`,
        ],
        answer: week * weeks - rent,
      };
    },
  ],
};

const lines: string[] = [];
const seen = new Set<string>();
for (const level of [1, 2, 3]) {
  const rng = createRng(SEED + level);
  let made = 0;
  while (made < PER_LEVEL) {
    const problem = rng.pick(TEMPLATES[level])(rng);
    if (seen.has(problem.question)) continue;
    if (!Number.isInteger(problem.answer) || problem.answer < 2)
      throw new Error(`bad answer ${problem.answer} for: ${problem.question}`);
    seen.add(problem.question);
    lines.push(
      JSON.stringify({
        question: problem.question,
        answer: `${problem.steps.join('; ')}\n#### ${problem.answer}`,
        level,
        tools: ['calc'],
        verifier: 'number',
      }),
    );
    made++;
  }
}
writeFileSync(OUT, lines.join('\n') + '\n');
console.log(`wrote ${lines.length} problems to ${OUT}`);
