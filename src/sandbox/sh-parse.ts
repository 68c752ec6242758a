/**
 * Parsing for the `sh` tool's command line: quotes ('…' literal, "…" with \" \\ escapes), backslash
 * escapes, `|` pipes, `>`/`>>` output and `<` input redirection, and `&&`, `||`, `;` between pipelines.
 * No variables, command substitution, subshells or here-docs: the command line is data, never code.
 */

export interface Word {
  text: string;
  /** True when the word holds an unquoted `*` or `?` and should be expanded against the file system. */
  glob: boolean;
}

export interface SimpleCommand {
  argv: Word[];
  /** `> file` or `>> file`. */
  output: { path: string; append: boolean } | null;
  /** `< file`. */
  input: string | null;
}

export type Connector = '&&' | '||' | ';';

export interface CommandList {
  /** Pipelines in order; `connectors[i]` joins pipeline i and i+1. */
  pipelines: SimpleCommand[][];
  connectors: Connector[];
}

export class ShellSyntaxError extends Error {
  override name = 'ShellSyntaxError';
}

type Token = { kind: 'word'; word: Word } | { kind: 'op'; op: string };

const OPERATORS = ['&&', '||', '>>', '|', '>', '<', ';'];

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') break; // comment to end of line
    const op = OPERATORS.find((o) => line.startsWith(o, i));
    if (op) {
      tokens.push({ kind: 'op', op });
      i += op.length;
      continue;
    }
    if (c === '&') throw new ShellSyntaxError("background jobs ('&') are not supported");
    let text = '';
    let glob = false;
    while (i < line.length) {
      const ch = line[i];
      if (/[\s|;<>]/.test(ch) || line.startsWith('&&', i)) break;
      if (ch === "'") {
        const end = line.indexOf("'", i + 1);
        if (end === -1) throw new ShellSyntaxError('unterminated single quote');
        text += line.slice(i + 1, end);
        i = end + 1;
      } else if (ch === '"') {
        i++;
        let closed = false;
        while (i < line.length) {
          const d = line[i];
          if (d === '"') {
            closed = true;
            i++;
            break;
          }
          if (
            d === '\\' &&
            (line[i + 1] === '"' || line[i + 1] === '\\' || line[i + 1] === '$' || line[i + 1] === '`')
          ) {
            text += line[i + 1];
            i += 2;
          } else {
            text += d;
            i++;
          }
        }
        if (!closed) throw new ShellSyntaxError('unterminated double quote');
      } else if (ch === '\\') {
        text += line[i + 1] ?? '';
        i += 2;
      } else {
        if (ch === '*' || ch === '?') glob = true;
        text += ch;
        i++;
      }
    }
    tokens.push({ kind: 'word', word: { text, glob } });
  }
  return tokens;
}

export function parseCommandLine(line: string): CommandList {
  const tokens = tokenize(line);
  const list: CommandList = { pipelines: [], connectors: [] };
  let pipeline: SimpleCommand[] = [];
  let current: SimpleCommand = { argv: [], output: null, input: null };

  const endCommand = (after: string) => {
    if (current.argv.length === 0) throw new ShellSyntaxError(`missing command before '${after}'`);
    pipeline.push(current);
    current = { argv: [], output: null, input: null };
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'word') {
      current.argv.push(t.word);
      continue;
    }
    if (t.op === '>' || t.op === '>>' || t.op === '<') {
      const target = tokens[++i];
      if (!target || target.kind !== 'word') throw new ShellSyntaxError(`'${t.op}' needs a file name after it`);
      if (t.op === '<') current.input = target.word.text;
      else current.output = { path: target.word.text, append: t.op === '>>' };
      continue;
    }
    if (t.op === '|') {
      endCommand('|');
      continue;
    }
    // && || ;
    endCommand(t.op);
    list.pipelines.push(pipeline);
    pipeline = [];
    list.connectors.push(t.op as Connector);
  }
  if (current.argv.length > 0) pipeline.push(current);
  else if (current.output || current.input) throw new ShellSyntaxError('redirection without a command');
  else if (pipeline.length > 0) throw new ShellSyntaxError("missing command after '|'");
  if (pipeline.length > 0) list.pipelines.push(pipeline);
  else if (list.connectors.length > 0) {
    // `a && ` with nothing after: a trailing ';' is fine, a trailing && / || is not.
    const last = list.connectors[list.connectors.length - 1];
    if (last !== ';') throw new ShellSyntaxError(`missing command after '${last}'`);
    list.connectors.pop();
  }
  return list;
}

/**
 * Shell-style pattern (`*`, `?`; everything else literal) → a matcher for one path segment. Matched by
 * hand with one backtrack point, so the cost is at most pattern × name: a regular expression built from
 * `*a*a*a*b` would backtrack polynomially on a long name.
 */
export function globMatcher(pattern: string, options: { ignoreCase?: boolean } = {}): (name: string) => boolean {
  const fold = (s: string) => (options.ignoreCase ? s.toLowerCase() : s);
  const p = fold(pattern);
  return (input: string) => {
    const s = fold(input);
    let i = 0;
    let j = 0;
    let star = -1;
    let resume = 0;
    while (i < s.length) {
      if (j < p.length && p[j] !== '*' && (p[j] === s[i] || (p[j] === '?' && s[i] !== '/'))) {
        i++;
        j++;
      } else if (j < p.length && p[j] === '*') {
        star = j++;
        resume = i;
      } else if (star !== -1 && s[resume] !== '/') {
        // Let the last `*` take one more character and retry from there.
        j = star + 1;
        i = ++resume;
      } else return false;
    }
    while (p[j] === '*') j++;
    return j === p.length;
  };
}
