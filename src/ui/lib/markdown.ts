/**
 * A tiny Markdown reader for model cards: headings, paragraphs, lists, fenced code, tables and
 * inline code/bold/links, turned into plain blocks that Svelte renders as text (never as HTML,
 * so a card cannot inject markup). Front matter (`---` … `---`) becomes key/value pairs.
 */

export type Inline = { kind: 'text' | 'code' | 'strong'; text: string } | { kind: 'link'; text: string; href: string };

export type Block =
  | { kind: 'heading'; level: number; inline: Inline[] }
  | { kind: 'paragraph'; inline: Inline[] }
  | { kind: 'list'; ordered: boolean; items: Inline[][] }
  | { kind: 'code'; lang: string; text: string }
  | { kind: 'table'; header: Inline[][]; rows: Inline[][][] };

export interface MarkdownDoc {
  frontMatter: [string, string][];
  blocks: Block[];
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\[[^\]]+\]\([^)\s]+\))/g;

function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let cursor = 0;
  INLINE.lastIndex = 0;
  for (let m = INLINE.exec(text); m; m = INLINE.exec(text)) {
    if (m.index > cursor) out.push({ kind: 'text', text: text.slice(cursor, m.index) });
    const token = m[0];
    if (m[1]) out.push({ kind: 'code', text: token.slice(1, -1) });
    else if (m[2]) out.push({ kind: 'strong', text: token.slice(2, -2) });
    else {
      const close = token.indexOf('](');
      const href = token.slice(close + 2, -1);
      // Only http(s) and relative links become links; anything else (javascript:) stays text.
      if (/^(https?:\/\/|\.{0,2}\/|#)/.test(href)) out.push({ kind: 'link', text: token.slice(1, close), href });
      else out.push({ kind: 'text', text: token.slice(1, close) });
    }
    cursor = m.index + token.length;
  }
  if (cursor < text.length) out.push({ kind: 'text', text: text.slice(cursor) });
  return out;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => parseInline(c.trim()));

export function parseMarkdown(source: string): MarkdownDoc {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  const frontMatter: [string, string][] = [];
  let i = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const colon = line.indexOf(':');
        if (colon > 0 && !line.startsWith(' '))
          frontMatter.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
      }
      i = end + 1;
    }
  }
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) blocks.push({ kind: 'paragraph', inline: parseInline(paragraph.join(' ')) });
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const listItem = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (line.startsWith('```')) {
      flush();
      const lang = line.slice(3).trim();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) body.push(lines[i]);
      blocks.push({ kind: 'code', lang, text: body.join('\n') });
      i++;
    } else if (heading) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1].length, inline: parseInline(heading[2]) });
      i++;
    } else if (line.trim().startsWith('|') && /^\s*\|?[\s:-]+\|/.test(lines[i + 1] ?? '')) {
      flush();
      const header = cells(line);
      const rows: Inline[][][] = [];
      for (i += 2; i < lines.length && lines[i].trim().startsWith('|'); i++) rows.push(cells(lines[i]));
      blocks.push({ kind: 'table', header, rows });
    } else if (listItem) {
      flush();
      const ordered = /\d/.test(listItem[1]);
      const items: Inline[][] = [];
      let m: RegExpExecArray | null = listItem;
      while (m) {
        items.push(parseInline(m[2]));
        m = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(lines[++i] ?? '');
      }
      blocks.push({ kind: 'list', ordered, items });
    } else if (!line.trim()) {
      flush();
      i++;
    } else {
      paragraph.push(line.trim());
      i++;
    }
  }
  flush();
  return { frontMatter, blocks };
}
