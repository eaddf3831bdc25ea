import type { Migration } from "../../store/index.js";
import { m0600 } from "./0600_forge_pull_comments.js";

/** The forge's own tables (its pull requests table is older, in lattice's 0110), in order. */
export const forgeMigrations: readonly Migration[] = [m0600];
