// The composition root's light entry: opening a project loads nothing of lattice, OA or the
// model client until an object that needs them is asked for (the CLI imports this, not ../index.ts).
export { migrations } from "./migrations.js";
export { OpenProject, openProject, withProject, type OpenProjectOptions, type KaiSourcesOptions } from "./project.js";
