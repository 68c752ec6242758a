/**
 * The one error every importer throws: it names the file, the row (1-based line or record) or the
 * tensor, and the problem, so a user can open the file and fix it. Importers validate everything
 * before writing anything, so an ImportError always means nothing was imported.
 */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly where: { row?: number; tensor?: string; field?: string } = {},
    options?: { cause?: unknown },
  ) {
    const place = [
      where.row !== undefined ? `row ${where.row}` : null,
      where.tensor !== undefined ? `tensor ${where.tensor}` : null,
      where.field !== undefined ? `field ${where.field}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    super(`${file}${place ? `: ${place}` : ''}: ${problem}. Nothing was imported.`, options);
    this.name = 'ImportError';
  }
}
