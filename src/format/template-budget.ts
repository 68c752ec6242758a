/**
 * What one render of an untrusted chat template may cost, and the interpreter that holds a render to it.
 *
 * Time: `range` is replaced by one that counts every item it hands out in the render (nested loops count
 * their product), and the interpreter counts every node it evaluates and checks a wall-clock deadline as
 * it goes, so loops that need no range (three nested loops over the messages) end too. Real templates use
 * a few range items and a few hundred evaluations per message. The input is capped by the caller.
 *
 * Memory: counting nodes bounds time, not memory: `{% set x = x + x %}` thirty times is thirty evaluations and a
 * list of a billion items. So besides the node count, the range items and the deadline, a render is held
 * to sizes, each refused by name before or as the value is built:
 *   - every value an expression yields: a string of at most `valueChars` characters, a list or mapping of
 *     at most `listItems` entries that holds at most `valueChars` characters as written, counted through
 *     its nesting (a list that holds another twice counts it twice, as `tojson` would write it);
 *   - the builtins whose result can be far larger than their inputs (`tojson(indent=…)`, `indent`,
 *     `join`, `replace`, `split`): their arguments are evaluated first and the size of the result
 *     is worked out before the builtin runs, so `tojson(indent=100000000)` never allocates its padding;
 *     an indent is at most `indent` spaces;
 *   - the output: every piece a block writes (text and `{{ … }}`, loop bodies included) counts as it is
 *     written, at most `outputChars` in all, so a loop that writes a large value each time stops early.
 */
import { Environment, Interpreter } from '@huggingface/jinja';

export const RENDER_BUDGET = {
  rangeItems: 100_000,
  evaluations: 2_000_000,
  deadlineMs: 2000,
  inputChars: 4 * 1024 * 1024,
  outputChars: 8 * 1024 * 1024,
  valueChars: 8 * 1024 * 1024,
  listItems: 1024 * 1024,
  indent: 64,
};

/** A render that ran past RENDER_BUDGET: the template is refused, not probed further. */
export class RenderBudgetError extends Error {}

/** The error for a size over its budget: what was built (or asked for), and the most allowed. */
const over = (what: string, limit: number, allowed = 'a render may build') =>
  new RenderBudgetError(`${what}, above the ${limit} ${allowed}`);

type Statement = Parameters<Interpreter['evaluate']>[0];
type Value = ReturnType<Interpreter['evaluate']>;
/** An AST node as the interpreter reads it: a `type` and its fields (the library does not export its node classes). */
type Node = { type: string } & Record<string, unknown>;

/** Jinja's `range(stop)` / `range(start, stop, step)`, drawing on one render's budget. */
export function budgetedRange(deadline: number): (...args: number[]) => number[] {
  let handedOut = 0;
  return (...args: number[]) => {
    const [start, stop, step = 1] = args.length === 1 ? [0, args[0]] : args;
    if (![start, stop, step].every(Number.isFinite)) throw new Error('range() takes numbers');
    if (step === 0) throw new Error('range() step must not be zero');
    const count = Math.max(0, Math.ceil((stop - start) / step));
    handedOut += count;
    if (handedOut > RENDER_BUDGET.rangeItems)
      throw new RenderBudgetError(
        `the template's loops ran past ${RENDER_BUDGET.rangeItems} range() items in one render; a chat template needs a few per message`,
      );
    if (Date.now() > deadline) throw new RenderBudgetError(`the render took more than ${RENDER_BUDGET.deadlineMs} ms`);
    return Array.from({ length: count }, (_, i) => start + i * step);
  };
}

const itemsOf = (v: Value): Value[] | null =>
  v.type === 'ArrayValue' || v.type === 'TupleValue' ? (v.value as Value[]) : null;
const entriesOf = (v: Value): Map<string, Value> | null =>
  v.type === 'ObjectValue' || v.type === 'KeywordArgumentsValue' || v.type === 'NamespaceValue'
    ? (v.value as Map<string, Value>)
    : null;
const stringOf = (v: Value | undefined): string | null => (v?.type === 'StringValue' ? (v.value as string) : null);
const numberOf = (v: Value | undefined): number | null =>
  v?.type === 'IntegerValue' || v?.type === 'FloatValue' ? (v.value as number) : null;

/** How many times `part` occurs in `text`, without overlaps (as replace and split count). */
function occurrences(text: string, part: string): number {
  if (part === '') return text.length + 1;
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) n++;
  return n;
}

/** How many runs of non-space characters `text` has (what split() without a separator returns), counted without keeping them. */
function words(text: string): number {
  const word = /\S+/g;
  let n = 0;
  while (word.exec(text)) n++;
  return n;
}

interface Shape {
  /** Characters as written (quotes, commas and brackets included, escapes not). */
  chars: number;
  /** Entries through the nesting. */
  entries: number;
  depth: number;
  /** The namespace generation it was measured at when a namespace (mutable) is inside; else null. */
  stamp: number | null;
}

/** Sizes of a render's values, memoized: lists and mappings never change once built, except namespaces. */
class Sizes {
  private readonly known = new WeakMap<object, Shape>();
  /** Bumped at every namespace assignment, which makes the sizes measured with a namespace inside stale. */
  generation = 0;

  shape(v: Value): Shape {
    const items = itemsOf(v);
    const entries = items ? null : entriesOf(v);
    if (!items && !entries) {
      const chars = v.type === 'StringValue' ? (v.value as string).length + 2 : String(v.value).length;
      return { chars, entries: 0, depth: 0, stamp: null };
    }
    const known = this.known.get(v);
    if (known && (known.stamp === null || known.stamp === this.generation)) return known;
    const shape: Shape = {
      chars: 2,
      entries: 0,
      depth: 0,
      stamp: v.type === 'NamespaceValue' ? this.generation : null,
    };
    const add = (child: Value, keyChars: number) => {
      const s = this.shape(child);
      shape.chars += s.chars + keyChars + 2;
      shape.entries += 1 + s.entries;
      shape.depth = Math.max(shape.depth, s.depth + 1);
      if (s.stamp !== null) shape.stamp = this.generation;
    };
    if (items) for (const item of items) add(item, 0);
    else for (const [key, value] of entries!) add(value, key.length + 4);
    this.known.set(v, shape);
    return shape;
  }
}

/** The statements whose value a block writes to its output (text, `{{ … }}`), as opposed to those holding blocks. */
const HOLDS_BLOCKS = new Set([
  'Program',
  'If',
  'For',
  'Macro',
  'CallStatement',
  'FilterStatement',
  'Set',
  'Break',
  'Continue',
  'Comment',
]);
const outputsOf = new WeakMap<object, WeakSet<object>>();

function outputStatements(program: Node): WeakSet<object> {
  let found = outputsOf.get(program);
  if (found) return found;
  const outputs = new WeakSet<object>();
  const visit = (block: unknown) => {
    if (!Array.isArray(block)) return;
    for (const statement of block as Node[]) {
      if (!HOLDS_BLOCKS.has(statement.type)) outputs.add(statement);
      else for (const field of ['body', 'alternate', 'defaultBlock']) visit(statement[field]);
    }
  };
  visit(program.body);
  found = outputs;
  outputsOf.set(program, found);
  return found;
}

/** The builtins whose result can outgrow their inputs: as filters (`x|tojson(indent=2)`) and as methods (`s.replace(a, b)`). */
const SIZED_FILTERS = new Set(['tojson', 'indent', 'join', 'replace']);
const SIZED_METHODS = new Set(['replace', 'split']);

function sizedName(node: Node): string | null {
  if (node.type === 'FilterExpression') {
    const filter = node.filter as Node;
    if (filter.type === 'Identifier') return null;
    const callee = filter.callee as Node;
    return callee.type === 'Identifier' && SIZED_FILTERS.has(callee.value as string) ? (callee.value as string) : null;
  }
  if (node.type === 'CallExpression') {
    const callee = node.callee as Node;
    const property = callee.property as Node | undefined;
    const named = callee.type === 'MemberExpression' && !callee.computed && property?.type === 'Identifier';
    if (named && SIZED_METHODS.has(property.value as string)) return property.value as string;
  }
  return null;
}

interface Arguments {
  positional: Value[];
  keywords: Map<string, Value>;
  /** The argument nodes again, each now reading its evaluated value from the scope. */
  nodes: Node[];
}

/** The interpreter of one render: every node it evaluates counts against the budget, and every value it builds is measured. */
export class BudgetedInterpreter extends Interpreter {
  private evaluations = 0;
  private written = 0;
  private outputs = new WeakSet<object>();
  private readonly sizes = new Sizes();

  constructor(
    env: Environment,
    private readonly deadline: number,
  ) {
    super(env);
  }

  override run(program: Parameters<Interpreter['run']>[0]): Value {
    this.outputs = outputStatements(program as unknown as Node);
    return super.run(program);
  }

  override evaluate(statement: Statement, environment: Environment): Value {
    this.evaluations++;
    if (this.evaluations > RENDER_BUDGET.evaluations)
      throw new RenderBudgetError(
        `the template evaluated more than ${RENDER_BUDGET.evaluations} expressions in one render; a chat template needs a few hundred per message`,
      );
    // Date.now() is cheap but not free: checked every 1024 evaluations.
    if ((this.evaluations & 1023) === 0 && Date.now() > this.deadline)
      throw new RenderBudgetError(`the render took more than ${RENDER_BUDGET.deadlineMs} ms`);
    const node = statement as unknown as Node | undefined;
    const sized = node ? sizedName(node) : null;
    const value = sized ? this.evaluateSized(node!, sized, environment) : super.evaluate(statement, environment);
    if (node?.type === 'Set' && (node.assignee as Node).type === 'MemberExpression') this.sizes.generation++;
    this.measure(value);
    if (node && this.outputs.has(node)) this.write(value);
    return value;
  }

  /** Refuses a value over the budget's sizes, just built. */
  private measure(value: Value) {
    const text = stringOf(value);
    if (text !== null) {
      if (text.length > RENDER_BUDGET.valueChars)
        throw over(`the template built a string of ${text.length} characters`, RENDER_BUDGET.valueChars);
      return;
    }
    const count = itemsOf(value)?.length ?? entriesOf(value)?.size;
    if (count === undefined) return;
    const kind = itemsOf(value) ? 'list' : 'mapping';
    if (count > RENDER_BUDGET.listItems)
      throw over(`the template built a ${kind} of ${count} items`, RENDER_BUDGET.listItems);
    const { chars } = this.sizes.shape(value);
    if (chars > RENDER_BUDGET.valueChars) {
      throw over(`the template built a ${kind} that holds ${chars} characters as written`, RENDER_BUDGET.valueChars);
    }
  }

  /** Counts what a block writes, as it is written. */
  private write(value: Value) {
    if (value.type === 'NullValue' || value.type === 'UndefinedValue') return;
    this.written += stringOf(value)?.length ?? this.sizes.shape(value).chars;
    if (this.written > RENDER_BUDGET.outputChars) {
      throw new RenderBudgetError(
        `the template wrote more than ${RENDER_BUDGET.outputChars} characters, the most a render may write`,
      );
    }
  }

  /**
   * A builtin whose result can outgrow its inputs: its operand and arguments are evaluated (once), the
   * result's size is worked out and refused if over the budget, and only then does the builtin run, on
   * the values already evaluated (bound in a child scope under names no template can write).
   */
  private evaluateSized(node: Node, name: string, environment: Environment): Value {
    const scope = new Environment(environment);
    let bound = 0;
    const bind = (v: Value): Node => {
      const id = `\u0000spindle-${bound++}`;
      scope.setVariable(id, v);
      return { type: 'Identifier', value: id };
    };
    if (node.type === 'FilterExpression') {
      const operand = this.evaluate(node.operand as Statement, environment);
      const filter = node.filter as Node; // a call: sizedName names no bare filter
      const args = this.argumentsOf(filter.args as Node[], environment, bind);
      this.checkResult(name, operand, args);
      const rebuilt = { ...node, operand: bind(operand), filter: { ...filter, args: args.nodes } };
      return super.evaluate(rebuilt as unknown as Statement, scope);
    }
    const callee = node.callee as Node;
    const object = this.evaluate(callee.object as Statement, environment);
    const args = this.argumentsOf(node.args as Node[], environment, bind);
    this.checkResult(name, object, args);
    const rebuilt = { ...node, callee: { ...callee, object: bind(object) }, args: args.nodes };
    return super.evaluate(rebuilt as unknown as Statement, scope);
  }

  /** Arguments as the library evaluates them (positional and `*` spreads first, then keywords and `**` spreads). */
  private argumentsOf(list: Node[], environment: Environment, bind: (v: Value) => Node): Arguments {
    const out: Arguments = { positional: [], keywords: new Map(), nodes: [] };
    const keyword = (a: Node) => a.type === 'KeywordArgumentExpression' || a.type === 'KeywordSpreadExpression';
    for (const a of list.filter((x) => !keyword(x))) {
      if (a.type === 'SpreadExpression') {
        const v = this.evaluate(a.argument as Statement, environment);
        out.positional.push(...(itemsOf(v) ?? []));
        out.nodes.push({ ...a, argument: bind(v) });
      } else {
        const v = this.evaluate(a as unknown as Statement, environment);
        out.positional.push(v);
        out.nodes.push(bind(v));
      }
    }
    for (const a of list.filter(keyword)) {
      if (a.type === 'KeywordSpreadExpression') {
        const v = this.evaluate(a.argument as Statement, environment);
        for (const [k, x] of entriesOf(v) ?? []) out.keywords.set(k, x);
        out.nodes.push({ ...a, argument: bind(v) });
      } else {
        const v = this.evaluate(a.value as Statement, environment);
        out.keywords.set((a.key as Node).value as string, v);
        out.nodes.push({ ...a, value: bind(v) });
      }
    }
    return out;
  }

  /** The size of what builtin `name` would build from these values, refused before it is built. */
  private checkResult(name: string, operand: Value, { positional, keywords }: Arguments) {
    const text = stringOf(operand);
    let chars = 0;
    let items = 0;
    if (name === 'tojson' || name === 'indent') {
      const indent =
        numberOf(name === 'tojson' ? keywords.get('indent') : (positional[0] ?? keywords.get('width'))) ?? 0;
      if (indent > RENDER_BUDGET.indent)
        throw over(`${name}() asks for an indent of ${indent} spaces`, RENDER_BUDGET.indent, 'a render allows');
      if (name === 'indent') {
        chars = text === null ? 0 : text.length + (occurrences(text, '\n') + 1) * Math.max(0, indent);
      } else {
        const separators = keywords.get('separators');
        const separatorChars = (separators ? (itemsOf(separators) ?? []) : []).reduce(
          (n, s) => n + (stringOf(s)?.length ?? 0),
          0,
        );
        const shape = this.sizes.shape(operand);
        chars = shape.chars + shape.entries * (separatorChars + (indent > 0 ? 1 + indent * shape.depth : 0));
      }
    } else if (name === 'join') {
      const separator = stringOf(positional[0] ?? keywords.get('separator')) ?? '';
      const count = text !== null ? text.length : (itemsOf(operand)?.length ?? 0);
      chars =
        (text !== null ? text.length : this.sizes.shape(operand).chars) + Math.max(0, count - 1) * separator.length;
    } else if (name === 'replace' && text !== null) {
      const [before, after] = [stringOf(positional[0]), stringOf(positional[1])];
      const limit = numberOf(positional[2] ?? keywords.get('count'));
      if (before !== null && after !== null) {
        const found = occurrences(text, before);
        chars =
          text.length +
          Math.min(found, limit !== null && limit >= 0 ? limit : found) * Math.max(0, after.length - before.length);
      }
    } else if (name === 'split' && text !== null) {
      const separator = stringOf(positional[0]);
      const limit = numberOf(positional[1]);
      const found = separator !== null && separator !== '' ? occurrences(text, separator) + 1 : words(text);
      items = limit !== null && limit >= 0 ? Math.min(found, limit + 1) : found;
    }
    if (chars > RENDER_BUDGET.valueChars)
      throw over(`${name}() would build about ${chars} characters`, RENDER_BUDGET.valueChars);
    if (items > RENDER_BUDGET.listItems)
      throw over(`${name}() would build a list of about ${items} items`, RENDER_BUDGET.listItems);
  }
}
