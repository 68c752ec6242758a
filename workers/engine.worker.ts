/**
 * Web worker entry of the engine (module worker, one per tab): the tfjs backend, the models, the
 * training run and its rollout workers live here so the page never blocks. The logic is
 * src/pipeline/engine/browser-engine.ts (tested in Node); the page talks to it through
 * src/ui/sources/real/engine-client.ts.
 */
import * as Comlink from 'comlink';
import { createBrowserEngine } from '../src/pipeline/platform/browser.ts';

Comlink.expose(createBrowserEngine());
