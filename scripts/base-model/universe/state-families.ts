/**
 * Families whose tools hold state or chain through what they show: named counters (a read feeds an
 * add), a job queue (take jobs until the right one comes up), a unit converter (no direct rate: go
 * through the unit the error names) and a small file tree (a listing names the file, a note names the
 * next one).
 */
import { arg, drawTool, fail, intArg, wording, type DrawnTool } from './roles.ts';
import { digits, letters, nameStyle, pickDistinct, WORDS } from './surface.ts';
import type { Family, PlanStep, Surface } from './world.ts';

interface CounterSurface extends Surface {
  read: DrawnTool;
  add: DrawnTool;
}

const counterParam = { names: ['counter', 'key', 'name'], description: 'the counter name, e.g. "visits"' };

export const counterFamily: Family<CounterSurface> = {
  name: 'counters',
  levels: [1, 2, 3],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const taken = new Set<string>();
    const read = drawTool(rng, naming, taken, {
      words: ['read_counter', 'get_count', 'counter_value'],
      stem: 'read',
      descriptions: ['Returns the current value of a named counter.', 'Reads a counter.'],
      params: { key: counterParam },
    });
    const add = drawTool(rng, naming, taken, {
      words: ['add_to_counter', 'increment', 'bump_counter'],
      stem: 'add',
      descriptions: [
        'Adds an amount to a named counter and returns its new value.',
        'Increases a counter by an amount; returns the new value.',
      ],
      params: {
        key: counterParam,
        amount: { names: ['amount', 'by', 'delta'], description: 'a whole number to add', type: 'number' },
      },
    });
    return { tools: { read, add }, read, add };
  },
  init: (data) => ({ counters: { ...(data.counters as Record<string, number>) } }),
  tools(s) {
    const counterOf = (tool: DrawnTool, args: Record<string, unknown>, state: Record<string, unknown>) => {
      const counters = state.counters as Record<string, number>;
      const key = arg(args, tool.params.key).toLowerCase();
      if (!(key in counters)) fail(`no counter "${key}"; the counters are: ${Object.keys(counters).join(', ')}`);
      return { counters, key };
    };
    return [
      {
        name: s.read.name,
        description: s.read.description,
        params: s.read.schema,
        run: (args, state) => {
          const { counters, key } = counterOf(s.read, args, state);
          return `${key} = ${counters[key]}`;
        },
      },
      {
        name: s.add.name,
        description: s.add.description,
        params: s.add.schema,
        run(args, state) {
          const { counters, key } = counterOf(s.add, args, state);
          counters[key] += intArg(args, s.add.params.amount, s.add.name);
          return `${key} is now ${counters[key]}`;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const names = pickDistinct(rng, WORDS.counter_words, 4);
    const counters = Object.fromEntries(names.map((n) => [n, rng.int(3, 400)]));
    const [a, b, c] = names;
    const plan: PlanStep[] = [];
    const add = (key: string, amount: number) =>
      plan.push({
        think: `${s.add.name} adds to a counter.`,
        call: { name: s.add.name, args: { [s.add.params.key]: key, [s.add.params.amount]: amount } },
      });
    const read = (key: string) =>
      plan.push({
        think: `${s.read.name} reads a counter.`,
        call: { name: s.read.name, args: { [s.read.params.key]: key } },
      });
    let prompt: string;
    let total: number;
    if (level === 1) {
      const n = rng.int(2, 60);
      prompt = wording(
        rng,
        [
          'Add {n} to the {a} counter and tell me its new value.',
          'Increase {a} by {n}. What is it now?',
          'Record {n} more {a} and report the new count.',
          'Bump the {a} counter by {n} and say what it reads.',
        ],
        templates,
        { n: String(n), a },
      );
      add(a, n);
      total = counters[a] + n;
    } else {
      const from = level === 2 ? [a] : [a, c];
      prompt =
        level === 2
          ? wording(
              rng,
              [
                'Add the value of the {a} counter to the {b} counter. What is {b} now?',
                'Read {a}, then add that much to {b}; report {b}.',
                'Put the {a} count onto {b} and tell me the new {b}.',
              ],
              templates,
              { a, b },
            )
          : wording(
              rng,
              [
                'Add the values of the {a} and {c} counters to the {b} counter. What is {b} now?',
                'Read {a} and {c}, add each to {b}, and report {b}.',
                'Move the {a} and {c} counts onto {b}; what does {b} read?',
              ],
              templates,
              { a, b, c },
            );
      total = counters[b];
      for (const f of from) {
        read(f);
        add(b, counters[f]);
        total += counters[f];
      }
    }
    const answer = String(total);
    plan.push({ think: null, answer });
    return {
      prompt,
      key: JSON.stringify([level, counters, prompt]),
      data: { counters },
      answer,
      plan,
      evidence: [`is now ${answer}`],
    };
  },
};

interface QueueSurface extends Surface {
  next: DrawnTool;
  size: DrawnTool;
}

export const queueFamily: Family<QueueSurface> = {
  name: 'queue',
  levels: [1, 2, 3, 4, 5],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const taken = new Set<string>();
    const next = drawTool(rng, naming, taken, {
      words: ['next_job', 'pop_job', 'take_job', 'dequeue'],
      stem: 'next',
      descriptions: [
        'Takes the next job off the queue and returns it (ticket and team).',
        'Removes and returns the job at the front of the queue.',
      ],
    });
    const size = drawTool(rng, naming, taken, {
      words: ['queue_size', 'count_jobs', 'jobs_left'],
      stem: 'size',
      descriptions: ['Returns how many jobs are waiting in the queue.', 'Counts the jobs still queued.'],
    });
    return { tools: { next, size }, next, size };
  },
  init: (data) => ({ queue: [...(data.jobs as string[][])] }),
  tools(s) {
    return [
      {
        name: s.next.name,
        description: s.next.description,
        params: {},
        run(_a, state) {
          const queue = state.queue as string[][];
          const job = queue.shift();
          if (!job) fail('the queue is empty');
          return `ticket ${job[0]} for team ${job[1]}`;
        },
      },
      {
        name: s.size.name,
        description: s.size.description,
        params: {},
        run: (_a, state) => `${(state.queue as unknown[]).length} jobs waiting`,
      },
    ];
  },
  sample(s, rng, level, templates) {
    const teams = pickDistinct(rng, WORDS.teams, 5);
    // Jobs taken before the team's: none at level 1, then up to 3, 6, 14 and 28 (long episodes whose every
    // call depends on what the last one showed).
    const at = level === 1 ? 0 : rng.int([1, 1, 1, 7, 15][level - 1], [0, 3, 6, 14, 28][level - 1]);
    const team = teams[0];
    const jobs = Array.from({ length: at + 3 }, (_, i) => [
      `T-${digits(rng, 4)}`,
      i === at ? team : rng.pick(teams.slice(1)),
    ]);
    const prompt =
      level === 1
        ? wording(
            rng,
            [
              'Take the next job off the queue. What is its ticket?',
              'Pull one job from the queue and tell me the ticket number.',
              'What ticket is the next queued job?',
            ],
            templates,
            {},
          )
        : wording(
            rng,
            [
              'Take jobs off the queue until you get one for the {team} team. What is its ticket?',
              'Keep taking queued jobs until one is for {team}; report that ticket.',
              'Find the first queued job for team {team} by taking jobs in order; give its ticket.',
            ],
            templates,
            { team },
          );
    const plan: PlanStep[] = [];
    for (let i = 0; i <= at; i++)
      plan.push({
        think: i === 0 ? `${s.next.name} takes the next job.` : `Not ${team} yet; the next one.`,
        call: { name: s.next.name, args: {} },
      });
    const answer = jobs[at][0];
    plan.push({ think: null, answer });
    return {
      prompt,
      key: JSON.stringify([level, jobs]),
      data: { jobs },
      answer,
      plan,
      evidence: [`ticket ${answer} for team ${jobs[at][1]}`],
    };
  },
};

interface ConverterSurface extends Surface {
  convert: DrawnTool;
}

export const converterFamily: Family<ConverterSurface> = {
  name: 'converter',
  levels: [1, 2, 3],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const convert = drawTool(rng, naming, new Set(), {
      words: ['convert', 'convert_units', 'unit_convert'],
      stem: 'convert',
      descriptions: [
        'Converts an amount from one unit to another where a rate exists.',
        'Changes an amount between two units.',
      ],
      params: {
        amount: { names: ['amount', 'value', 'quantity'], description: 'a whole number', type: 'number' },
        from: { names: ['from', 'from_unit', 'source'], description: 'the unit the amount is in' },
        to: { names: ['to', 'to_unit', 'target'], description: 'the unit wanted' },
      },
    });
    return { tools: { convert }, convert };
  },
  tools(s) {
    const p = s.convert.params;
    return [
      {
        name: s.convert.name,
        description: s.convert.description,
        params: s.convert.schema,
        run(args, _state, data) {
          const rates = data.rates as Record<string, number>;
          const units = [...new Set(Object.keys(rates).flatMap((k) => k.split('>')))];
          const amount = intArg(args, p.amount, s.convert.name);
          const from = arg(args, p.from).toLowerCase();
          const to = arg(args, p.to).toLowerCase();
          for (const u of [from, to])
            if (!units.includes(u)) fail(`unknown unit "${u}"; the units are: ${units.join(', ')}`);
          const rate = rates[`${from}>${to}`];
          if (rate === undefined) {
            const via = Object.keys(rates)
              .filter((k) => k.startsWith(`${from}>`))
              .map((k) => k.split('>')[1]);
            fail(`no direct rate from ${from} to ${to}; ${from} converts to: ${via.join(', ')}`);
          }
          return `${amount} ${from} = ${amount * rate} ${to}`;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const units = pickDistinct(rng, WORDS.fake_units, level + 2);
    const rates: Record<string, number> = {};
    for (let i = 0; i + 1 < units.length; i++) rates[`${units[i]}>${units[i + 1]}`] = rng.int(2, 9);
    const steps = level; // level L: L conversions, through the units each error names
    const amount = rng.int(2, 30);
    const p = s.convert.params;
    const call = (n: number, from: string, to: string) => ({
      name: s.convert.name,
      args: { [p.amount]: n, [p.from]: from, [p.to]: to },
    });
    const plan: PlanStep[] = [];
    const target = units[steps];
    if (steps > 1) plan.push({ think: `${s.convert.name} converts units.`, call: call(amount, units[0], target) });
    let n = amount;
    for (let i = 0; i < steps; i++) {
      plan.push({
        think: steps > 1 ? `Through ${units[i + 1]}.` : `${s.convert.name} converts units.`,
        call: call(n, units[i], units[i + 1]),
      });
      n *= rates[`${units[i]}>${units[i + 1]}`];
    }
    const answer = String(n);
    plan.push({ think: null, answer });
    const prompt = wording(
      rng,
      [
        'How many {to} is {n} {from}?',
        'Convert {n} {from} to {to}.',
        'What is {n} {from} in {to}?',
        'Express {n} {from} as {to}.',
      ],
      templates,
      { n: String(amount), from: units[0], to: target },
    );
    return {
      prompt,
      key: JSON.stringify([amount, units, rates]),
      data: { rates },
      answer,
      plan,
      evidence: [`= ${answer} ${target}`],
    };
  },
};

interface FilesSurface extends Surface {
  list: DrawnTool;
  read: DrawnTool;
}

export const filesFamily: Family<FilesSurface> = {
  name: 'files',
  levels: [1, 2, 3, 4, 5],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const taken = new Set<string>();
    const list = drawTool(rng, naming, taken, {
      words: ['list_dir', 'ls', 'list_files'],
      stem: 'list',
      descriptions: ['Lists the files in a folder.', 'Returns the names of the files in a directory.'],
      params: { dir: { names: ['dir', 'folder', 'path'], description: 'a folder like /notes' } },
    });
    const read = drawTool(rng, naming, taken, {
      words: ['read_file', 'cat', 'open_file'],
      stem: 'read',
      descriptions: ['Returns the text of a file.', 'Reads a file by its full path.'],
      params: { path: { names: ['path', 'file', 'filename'], description: 'a full path like /notes/a.txt' } },
    });
    return { tools: { list, read }, list, read };
  },
  tools(s) {
    const files = (data: Record<string, unknown>) => data.files as Record<string, string>;
    return [
      {
        name: s.list.name,
        description: s.list.description,
        params: s.list.schema,
        run(args, _s, data) {
          const dir = arg(args, s.list.params.dir).replace(/\/+$/, '');
          const names = Object.keys(files(data))
            .filter((p) => p.startsWith(`${dir}/`))
            .map((p) => p.slice(dir.length + 1));
          if (names.length === 0)
            fail(
              `no folder ${dir || '(empty)'}; folders: ${[...new Set(Object.keys(files(data)).map((p) => p.split('/')[1]))].map((f) => `/${f}`).join(', ')}`,
            );
          return names.join(' ');
        },
      },
      {
        name: s.read.name,
        description: s.read.description,
        params: s.read.schema,
        run(args, _s, data) {
          const path = arg(args, s.read.params.path);
          const text = files(data)[path];
          if (text === undefined) {
            const dir = path.slice(0, path.lastIndexOf('/'));
            const near = Object.keys(files(data)).filter((p) => p.startsWith(`${dir}/`));
            fail(near.length ? `no file ${path}; ${s.list.name} shows what ${dir} holds` : `no file ${path}`);
          }
          return text;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const dirs = pickDistinct(rng, ['notes', 'docs', 'archive', 'inbox', 'shared'], 3);
    const hops = [1, 2, 3, 5, 8][level - 1]; // notes read, each naming the next
    const topics = pickDistinct(rng, WORDS.topics, Math.min(WORDS.topics.length, hops + 3));
    const fileName = (topic: string) => `${topic}-${letters(rng, 2)}${rng.int(1, 9)}.txt`;
    const files: Record<string, string> = {};
    const code = digits(rng, 4);
    const chain: string[] = [];
    for (let i = 0; i < hops; i++) chain.push(`/${dirs[i % dirs.length]}/${fileName(topics[i])}`);
    chain.forEach(
      (path, i) =>
        (files[path] = i + 1 < chain.length ? `moved: see ${chain[i + 1]}` : `the ${topics[0]} code is ${code}`),
    );
    for (const t of topics.slice(hops))
      files[`/${rng.pick(dirs)}/${fileName(t)}`] = `the ${t} code is ${digits(rng, 4)}`;
    const dir = chain[0].split('/')[1];
    const prompt = wording(
      rng,
      [
        'What is the code in the {topic} note in /{dir}?',
        'Find the {topic} code; its note is somewhere in /{dir}.',
        'There is a {topic} note in /{dir}. Which code does it give?',
        'Read the {topic} file in /{dir} and tell me its code.',
      ],
      templates,
      { topic: topics[0], dir },
    );
    const plan: PlanStep[] = [
      {
        think: `${s.list.name} shows the files in /${dir}.`,
        call: { name: s.list.name, args: { [s.list.params.dir]: `/${dir}` } },
      },
    ];
    for (const path of chain)
      plan.push({
        think: `${s.read.name} reads ${path}.`,
        call: { name: s.read.name, args: { [s.read.params.path]: path } },
      });
    plan.push({ think: null, answer: code });
    return { prompt, key: JSON.stringify(files), data: { files }, answer: code, plan, evidence: [`code is ${code}`] };
  },
};
