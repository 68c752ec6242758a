/** One IndexedDB connection for the whole page, opened on first use. */
import { openStore, type Store } from '../../store/index.ts';

let opening: Promise<Store> | null = null;

export function pageStore(): Promise<Store> {
  opening ??= openStore({
    onVersionChange: () => alert('Spindle was updated in another tab. Reload this page to keep saving.'),
  }).catch((err: unknown) => {
    opening = null;
    throw err;
  });
  return opening;
}
