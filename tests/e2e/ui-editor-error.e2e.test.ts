/**
 * The environment editor (`?demo`) shows a check's error at its line without covering code: the
 * message starts after the marked line's last character, or after the next line's when the marked one
 * fills the editor's width. Positions are measured in the page (the line's text width in the editor's font).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

/** Where the message sits against the text of the line it shares: its left edge and that text's right edge, in px. */
function measure(page: App['page']) {
  return page.evaluate(() => {
    const textarea = document.querySelector<HTMLTextAreaElement>('[data-testid="env-editor"]')!;
    const message = document.querySelector<HTMLElement>('[data-testid="env-editor-error-message"]')!;
    const band = document.querySelector<HTMLElement>('[data-testid="env-editor-error-band"]')!;
    const row = Number(message.dataset.row);
    const line = Number(band.dataset.line) - 1 + row;
    const style = getComputedStyle(textarea);
    const context = document.createElement('canvas').getContext('2d')!;
    context.font = `${style.fontSize} ${style.fontFamily}`;
    const text = textarea.value.split('\n')[line] ?? '';
    const box = textarea.getBoundingClientRect();
    const textEnd = box.left + parseFloat(style.paddingLeft) + context.measureText(text).width - textarea.scrollLeft;
    const m = message.getBoundingClientRect();
    const lineTop = box.top + parseFloat(style.paddingTop) + line * parseFloat(style.lineHeight) - textarea.scrollTop;
    return { row, messageLeft: m.left, messageRight: m.right, textEnd, boxRight: box.right, top: m.top, lineTop };
  });
}

describe('editor error placement', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#environments');
  });
  afterAll(async () => {
    await app?.close();
  });

  async function checkWith(edit: (lines: string[]) => void) {
    const { page } = app;
    const editor = page.locator('[data-testid="env-editor"]');
    await page.locator('[data-testid="env-example"]').click();
    const lines = (await editor.inputValue()).split('\n');
    edit(lines);
    await editor.fill(lines.join('\n'));
    await page.locator('[data-testid="env-check-button"]').click();
    await page.locator('[data-testid="env-check"][data-phase="failed"]').waitFor({ timeout: 30_000 });
    return measure(page);
  }

  it('puts the message beside the marked line, after its text', async () => {
    const m = await checkWith((lines) => (lines[1] = `${lines[1]} {{`));
    expect(m.row).toBe(0);
    expect(m.messageLeft).toBeGreaterThan(m.textEnd);
    expect(m.messageRight).toBeLessThanOrEqual(m.boxRight);
    expect(Math.abs(m.top - m.lineTop)).toBeLessThan(2);
    expect(app.errors).toEqual([]);
  });

  it('a line as wide as the editor gets the message beside the line below instead', async () => {
    const m = await checkWith((lines) => (lines[2] = `  // ${'x'.repeat(400)} {{`));
    expect(m.row).toBe(1);
    expect(m.messageLeft).toBeGreaterThan(m.textEnd);
    expect(Math.abs(m.top - m.lineTop)).toBeLessThan(2);
  });
});
