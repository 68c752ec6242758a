/**
 * Families whose tools look things up: a product catalogue (several look-alike lookups; the task names
 * the attribute only in words) and a directory of people (an id found by one tool is what the next
 * one needs).
 */
import type { Rng } from '../../../src/rng.ts';
import { arg, drawTool, fail, wording, type DrawnTool } from './roles.ts';
import { digits, nameStyle, personNames, pickDistinct, thingNames, WORDS } from './surface.ts';
import type { Family, PlanStep, Surface } from './world.ts';

/** A catalogue attribute: how a value is drawn and shown, and how a task asks for it. */
const ATTRIBUTES = {
  price: {
    unit: 'dollars',
    draw: (r: Rng) => `${r.int(2, 90)}.${digits(r, 2).slice(0, 2)}`,
    ask: [
      'How much does the {item} cost?',
      'What is the price of the {item}?',
      'What does one {item} sell for?',
      'Tell me what the {item} costs.',
    ],
    more: 'costs more',
  },
  weight: {
    unit: 'grams',
    draw: (r: Rng) => String(r.int(40, 2400)),
    ask: [
      'How heavy is the {item}?',
      'What does the {item} weigh?',
      'Give me the weight of the {item}.',
      'How much does the {item} weigh in grams?',
    ],
    more: 'is heavier',
  },
  stock: {
    unit: 'units',
    draw: (r: Rng) => String(r.int(0, 400)),
    ask: [
      'How many of the {item} are in stock?',
      'What is the stock level of the {item}?',
      'How many {item} units are left?',
      'Check how many of the {item} we still have.',
    ],
    more: 'has more units in stock',
  },
  rating: {
    unit: 'stars',
    draw: (r: Rng) => `${r.int(1, 4)}.${r.int(0, 9)}`,
    ask: [
      'What rating does the {item} have?',
      'How do customers rate the {item}?',
      'What is the star rating of the {item}?',
      'Find the average rating of the {item}.',
    ],
    more: 'is rated higher',
  },
} as const;
type Attribute = keyof typeof ATTRIBUTES;

interface CatalogSurface extends Surface {
  lookups: Record<Attribute, DrawnTool>;
  list: DrawnTool;
}

const lookupSpec = (attr: Attribute) => ({
  words: [`get_${attr}`, `${attr}_of`, `lookup_${attr}`, `fetch_${attr}`, `${attr}`],
  stem: attr,
  descriptions: [
    `Returns the ${attr} of a product, in ${ATTRIBUTES[attr].unit}.`,
    `Look up a product's ${attr} (${ATTRIBUTES[attr].unit}).`,
    `Gives the ${attr} of one catalogue item.`,
  ],
  params: { item: { names: ['item', 'product', 'name'], description: 'the full product name, e.g. "blue widget"' } },
});

export const catalogFamily: Family<CatalogSurface> = {
  name: 'catalog',
  levels: [1, 2, 3],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const taken = new Set<string>();
    const lookups = Object.fromEntries(
      (Object.keys(ATTRIBUTES) as Attribute[]).map((a) => [a, drawTool(rng, naming, taken, lookupSpec(a))]),
    ) as Record<Attribute, DrawnTool>;
    const list = drawTool(rng, naming, taken, {
      words: ['list_products', 'products', 'catalog', 'list_items'],
      stem: 'list',
      descriptions: ['Lists every product name in the catalogue.', 'Returns the names of all products.'],
    });
    return { tools: { ...lookups, list }, lookups, list };
  },
  tools(s) {
    const lookup = (attr: Attribute) => ({
      name: s.lookups[attr].name,
      description: s.lookups[attr].description,
      params: s.lookups[attr].schema,
      run(args: Record<string, unknown>, _state: unknown, data: Record<string, unknown>) {
        const products = data.products as Record<string, Record<Attribute, string>>;
        const item = arg(args, s.lookups[attr].params.item).toLowerCase();
        const row = products[item];
        if (!row) {
          const partial = Object.keys(products).filter((p) => p.split(' ').some((w) => item.split(' ').includes(w)));
          fail(
            partial.length === 1 && item.split(' ').length === 1
              ? `no product named "${item}"; use the full name: call ${s.list.name} to see all product names`
              : `no product named "${item}"; call ${s.list.name} to see the product names`,
          );
        }
        return `${item}: ${row[attr]} ${ATTRIBUTES[attr].unit}`;
      },
    });
    return [
      ...(Object.keys(ATTRIBUTES) as Attribute[]).map(lookup),
      {
        name: s.list.name,
        description: s.list.description,
        params: {},
        run: (_a, _s, data) => Object.keys(data.products as object).join(', '),
      },
    ];
  },
  sample(s, rng, level, templates) {
    const names = thingNames(rng, 6);
    const attrs = Object.keys(ATTRIBUTES) as Attribute[];
    const products = Object.fromEntries(
      names.map((n) => [n, Object.fromEntries(attrs.map((a) => [a, ATTRIBUTES[a].draw(rng)]))]),
    );
    const attr = rng.pick(attrs);
    const tool = s.lookups[attr];
    const count = level === 1 ? 1 : level;
    const items = pickDistinct(rng, names, count);
    // A third of the items name only the thing ("the teapot"): the lookup refuses it, the listing shows the full name.
    const shortName = rng.chance(1 / 3) && names.filter((n) => n.split(' ')[1] === items[0].split(' ')[1]).length === 1;
    const said = items.map((it, i) => (i === 0 && shortName ? it.split(' ')[1] : it));
    const plan: PlanStep[] = [];
    if (shortName) {
      plan.push({
        think: `"${said[0]}" may not be a full product name; ${tool.name} gives the ${attr}.`,
        call: { name: tool.name, args: { [tool.params.item]: said[0] } },
      });
      plan.push({
        think: `I need the full name; ${s.list.name} lists the products.`,
        call: { name: s.list.name, args: {} },
      });
    }
    for (const it of items)
      plan.push({
        think: `${tool.name} gives the ${attr} of a product.`,
        call: { name: tool.name, args: { [tool.params.item]: it } },
      });
    // Distinct values among the asked items keep a comparison's answer unique.
    for (const [i, it] of items.entries()) {
      while (items.slice(0, i).some((o) => Number(products[o][attr]) === Number(products[it][attr])))
        products[it][attr] = ATTRIBUTES[attr].draw(rng);
    }
    const values = items.map((it) => Number(products[it][attr]));
    let prompt: string;
    let answer: string;
    if (count === 1) {
      prompt = wording(rng, [...ATTRIBUTES[attr].ask], templates, { item: said[0] });
      answer = products[items[0]][attr];
    } else {
      const list = said.map((x) => `the ${x}`).join(count === 2 ? ' or ' : ', ');
      prompt = wording(
        rng,
        [
          `Which ${ATTRIBUTES[attr].more}: ${list}?`,
          `Of ${list}, which one ${ATTRIBUTES[attr].more}?`,
          `Tell me which ${ATTRIBUTES[attr].more} - ${list}.`,
        ],
        templates,
        {},
      );
      answer = items[values.indexOf(Math.max(...values))];
    }
    plan.push({ think: count === 1 ? null : `Comparing the ${attr}s.`, answer });
    const evidence = count === 1 ? [products[items[0]][attr]] : items.map((it) => `${it}: ${products[it][attr]}`);
    return { prompt, key: JSON.stringify([attr, items, products]), data: { products }, answer, plan, evidence };
  },
};

interface DirectorySurface extends Surface {
  find: DrawnTool;
  field: DrawnTool;
  other: DrawnTool;
  manager: DrawnTool;
  fieldName: string;
}

const FIELDS = {
  phone: { draw: (r: Rng) => `555-${digits(r, 4)}`, words: ['phone', 'phone number', 'extension'] },
  email: {
    draw: (r: Rng, who: string) => `${who.split(' ')[0]}.${digits(r, 2)}@corp.example`,
    words: ['email', 'email address'],
  },
  office: { draw: (r: Rng) => `room ${r.int(1, 9)}${digits(r, 2)}`, words: ['office', 'room'] },
  badge: { draw: (r: Rng) => `B${digits(r, 5)}`, words: ['badge number', 'badge'] },
} as const;
type Field = keyof typeof FIELDS;

const idParam = {
  names: ['id', 'user_id', 'person_id'],
  description: 'a person id like u1234 (find it by name first)',
};

export const directoryFamily: Family<DirectorySurface> = {
  name: 'directory',
  levels: [1, 2, 3],
  surface(rng) {
    const naming = nameStyle(rng, 'any');
    const taken = new Set<string>();
    const [fieldName, otherName] = pickDistinct(rng, Object.keys(FIELDS) as Field[], 2);
    const find = drawTool(rng, naming, taken, {
      words: ['find_person', 'lookup_user', 'search_people', 'find_user'],
      stem: 'find',
      descriptions: [
        'Finds people by name; returns each match with its id and team.',
        'Searches the staff directory by name and gives person ids.',
      ],
      params: { name: { names: ['name', 'query', 'person'], description: 'a person name or part of one' } },
    });
    const fieldTool = (f: Field) =>
      drawTool(rng, naming, taken, {
        words: [`get_${f}`, `${f}_of`, `user_${f}`],
        stem: f,
        descriptions: [
          `Returns the ${FIELDS[f].words[0]} of the person with this id.`,
          `Gives a person's ${FIELDS[f].words[0]}, by id.`,
        ],
        params: { id: idParam },
      });
    const field = fieldTool(fieldName);
    const other = fieldTool(otherName);
    const manager = drawTool(rng, naming, taken, {
      words: ['get_manager', 'manager_of', 'reports_to'],
      stem: 'manager',
      descriptions: [
        'Returns the id of the manager of the person with this id.',
        'Gives the id of the person someone reports to.',
      ],
      params: { id: idParam },
    });
    return { tools: { find, field, other, manager }, find, field, other, manager, fieldName };
  },
  tools(s) {
    type Person = { name: string; team: string; manager: string } & Record<string, string>;
    const people = (data: Record<string, unknown>) => data.people as Record<string, Person>;
    const byId = (tool: DrawnTool, args: Record<string, unknown>, data: Record<string, unknown>) => {
      const id = arg(args, tool.params.id).toLowerCase();
      const p = people(data)[id];
      if (!p)
        fail(
          /^u\d+$/.test(id)
            ? `${tool.name}: no person with id "${id}"`
            : `${tool.name}: "${id}" is not a person id; ids look like u1234: call ${s.find.name} with the name first`,
        );
      return { id, p };
    };
    const fieldTool = (tool: DrawnTool, field: string) => ({
      name: tool.name,
      description: tool.description,
      params: tool.schema,
      run: (args: Record<string, unknown>, _s: unknown, data: Record<string, unknown>) => {
        const { id, p } = byId(tool, args, data);
        return `${id}: ${p[field]}`;
      },
    });
    const otherField = (Object.keys(FIELDS) as Field[]).find((f) => s.other.description.includes(FIELDS[f].words[0]))!;
    return [
      {
        name: s.find.name,
        description: s.find.description,
        params: s.find.schema,
        run(args, _s, data) {
          const q = arg(args, s.find.params.name).toLowerCase();
          const hits = Object.entries(people(data)).filter(([, p]) => q !== '' && p.name.includes(q));
          if (hits.length === 0) fail(`nobody named "${q}"; try the first or last name alone`);
          return hits.map(([id, p]) => `${p.name} (${p.team}): ${id}`).join('\n');
        },
      },
      fieldTool(s.field, s.fieldName),
      fieldTool(s.other, otherField),
      {
        name: s.manager.name,
        description: s.manager.description,
        params: s.manager.schema,
        run(args, _s, data) {
          const { id, p } = byId(s.manager, args, data);
          return `${id} reports to ${p.manager}`;
        },
      },
    ];
  },
  sample(s, rng, level, templates) {
    const names = personNames(rng, 8);
    const ids = names.map(() => `u${digits(rng, 4)}`);
    const people: Record<string, Record<string, string>> = {};
    names.forEach((name, i) => {
      people[ids[i]] = { name, team: rng.pick(WORDS.teams), manager: ids[(i + 1) % names.length] };
      for (const f of Object.keys(FIELDS) as Field[]) people[ids[i]][f] = FIELDS[f].draw(rng, name);
    });
    const start = rng.int(0, names.length - 1);
    const hops = level - 1;
    const chain = [ids[start]];
    for (let h = 0; h < hops; h++) chain.push(people[chain.at(-1)!].manager);
    const target = people[chain.at(-1)!];
    const fieldWord = rng.pick(FIELDS[s.fieldName as Field].words);
    const who = names[start];
    const whose = ['', "'s manager", "'s manager's manager"][hops];
    const prompt = wording(
      rng,
      [
        `What is the ${fieldWord} of ${who}${whose}?`,
        `I need the ${fieldWord} of ${who}${whose}.`,
        `Find ${who}${whose} ${fieldWord}.`,
        `Could you get me the ${fieldWord} for ${who}${whose}?`,
      ],
      templates,
      {},
    );
    const plan: PlanStep[] = [];
    if (rng.chance(0.25))
      plan.push({
        think: `${s.field.name} gives the ${fieldWord}.`,
        call: { name: s.field.name, args: { [s.field.params.id]: who } },
      });
    plan.push({
      think: `I need ${who}'s id; ${s.find.name} finds people.`,
      call: { name: s.find.name, args: { [s.find.params.name]: who } },
    });
    for (let h = 0; h < hops; h++)
      plan.push({
        think: `Next, the manager of ${chain[h]}.`,
        call: { name: s.manager.name, args: { [s.manager.params.id]: chain[h] } },
      });
    plan.push({
      think: `${s.field.name} gives the ${fieldWord} of ${chain.at(-1)}.`,
      call: { name: s.field.name, args: { [s.field.params.id]: chain.at(-1)! } },
    });
    const answer = target[s.fieldName];
    plan.push({ think: null, answer });
    return {
      prompt,
      key: JSON.stringify([who, level, people]),
      data: { people },
      answer,
      plan,
      evidence: [`${chain.at(-1)}: ${answer}`],
    };
  },
};
