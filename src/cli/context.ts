import type { Command } from "commander";
import { loadProject, type Project } from "../config/index.js";
import { openStore, type Store } from "../store/index.js";

/** Global options every command sees (declared on the root program). */
export interface GlobalOptions {
  config?: string;
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

export function project(cmd: Command): Project {
  return loadProject({ configPath: globalOptions(cmd).config });
}

/** Run `fn` with the project and its open store, closing the store afterwards. */
export async function withStore<T>(cmd: Command, fn: (p: Project, store: Store) => Promise<T>, options: { yieldWhileBusy?: boolean } = {}): Promise<T> {
  const p = project(cmd);
  const store = await openStore({ root: p.root, storage: p.config.storage, ...options });
  try {
    return await fn(p, store);
  } finally {
    await store.close();
  }
}
