import type { Command } from "./commander.js";
import { openConfig, type Project } from "../config/light/index.js";
import type { Store } from "../store/index.js";
import { withProject as withOpenProject, type OpenProject } from "../app/project/index.js";

/** Global options every command sees (declared on the root program). */
export interface GlobalOptions {
  config?: string;
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** The project the command runs in (its config validated, or remembered as validated: config/light). */
export function project(cmd: Command): Promise<Project> {
  return openConfig({ configPath: globalOptions(cmd).config });
}

/** Run `fn` with the project open (its store, and each of its objects built on first use), closing it afterwards. */
export function withProject<T>(
  cmd: Command,
  fn: (p: OpenProject) => Promise<T>,
  options: { yieldWhileBusy?: boolean } = {},
): Promise<T> {
  return withOpenProject({ configPath: globalOptions(cmd).config, storeOptions: options }, fn);
}

/** Run `fn` with the project and its open store, closing the store afterwards. */
export function withStore<T>(
  cmd: Command,
  fn: (p: Project, store: Store, opened: OpenProject) => Promise<T>,
  options: { yieldWhileBusy?: boolean } = {},
): Promise<T> {
  return withProject(cmd, (p) => fn(p.project, p.store, p), options);
}
