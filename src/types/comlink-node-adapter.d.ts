// comlink ships its Node adapter without a declaration next to the .mjs file.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  export default function nodeEndpoint(nep: unknown): Endpoint;
}
