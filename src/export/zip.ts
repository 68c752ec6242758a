/**
 * Reading zip archives someone else made, without trusting their sizes: only the entries asked for are
 * inflated, each into a buffer of the size its directory entry declares, and that size is checked
 * against a cap first. fflate never grows a buffer it was given, so a zip bomb (an entry that inflates
 * to gigabytes) costs at most the cap, and a size that lies small only truncates the entry.
 */
import { unzipSync } from 'fflate';
import { ImportError } from './import-error.ts';

export interface ZipContents {
  /** Inflated entries, keyed by file name without folders. */
  files: Map<string, Uint8Array>;
  /** Every entry's file name without folders, inflated or not. */
  names: Set<string>;
}

/** `wanted` maps a file name (without folders) to the most bytes it may inflate to. */
export function unzipSelected(bytes: Uint8Array, file: string, wanted: Record<string, number>): ZipContents {
  const files = new Map<string, Uint8Array>();
  const names = new Set<string>();
  const baseName = (name: string) => name.split('/').pop()!;
  let inflated: Record<string, Uint8Array>;
  try {
    inflated = unzipSync(bytes, {
      filter: (entry) => {
        const name = baseName(entry.name);
        names.add(name);
        if (!Object.hasOwn(wanted, name)) return false;
        if (entry.originalSize > wanted[name]) {
          throw new ImportError(
            file,
            `${entry.name} would inflate to ${entry.originalSize} bytes, over the ${wanted[name]}-byte limit for it`,
          );
        }
        return true;
      },
    });
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(file, `not a readable zip archive, or truncated (${(e as Error).message})`, {}, { cause: e });
  }
  for (const [name, data] of Object.entries(inflated)) files.set(baseName(name), data);
  return { files, names };
}
