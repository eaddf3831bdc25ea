import { existsSync, readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { UsageError, confinePath } from "../core/index.js";
import { AGENT_ROLES, type AgentRole } from "./roles.js";

/** Templates shipped in the package: `templates/prompts/` (same depth from src/ and dist/). */
export const PACKAGE_TEMPLATES_DIR = fileURLToPath(new URL("../../templates/prompts/", import.meta.url));

/** Where a project overrides templates, relative to its root (same relative names). */
export const PROJECT_TEMPLATES_DIR = ".pmagent/prompts";

export const BASE_TEMPLATE = "base.md";

export function developerTemplateName(role: AgentRole): string {
  return `dev/${role}.md`;
}

export interface TemplateFile {
  /** Name relative to the templates directory, e.g. `dev/reviewer.md`. */
  name: string;
  /** File the text was read from. */
  path: string;
  origin: "package" | "project";
  text: string;
}

export interface PromptTemplates {
  base: TemplateFile;
  developer: Record<AgentRole, TemplateFile>;
}

/**
 * Load the base and developer templates: the package's, each replaced by the project's file of the
 * same name under `.pmagent/prompts/` when the project has one.
 */
export function loadTemplates(options: { projectRoot?: string } = {}): PromptTemplates {
  const developer = {} as Record<AgentRole, TemplateFile>;
  for (const role of AGENT_ROLES) developer[role] = loadTemplate(developerTemplateName(role), options.projectRoot);
  return { base: loadTemplate(BASE_TEMPLATE, options.projectRoot), developer };
}

function loadTemplate(name: string, projectRoot: string | undefined): TemplateFile {
  if (projectRoot !== undefined) {
    const overrideDir = confinePath(projectRoot, PROJECT_TEMPLATES_DIR, "template directory");
    const path = confinePath(overrideDir, name, "template");
    if (existsSync(path)) {
      // A link in the repository must not pull a file from elsewhere into a prompt sent to a model.
      confinePath(realpathSync(projectRoot), realpathSync(path), `prompt template ${path} links to`);
      return { name, path, origin: "project", text: readTemplate(path) };
    }
  }
  return {
    name,
    path: join(PACKAGE_TEMPLATES_DIR, name),
    origin: "package",
    text: readTemplate(join(PACKAGE_TEMPLATES_DIR, name)),
  };
}

function readTemplate(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(
      "template_unreadable",
      `cannot read prompt template ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (text.trim() === "")
    throw new UsageError(
      "template_empty",
      `prompt template ${path} is empty: write the prompt into it or delete it to use the built-in one`,
    );
  return text.trimEnd();
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/**
 * Fill `{{name}}` placeholders. A placeholder the caller does not know is a mistake in an
 * override, reported with the file, rather than text the model would see verbatim.
 */
export function renderTemplate(
  template: TemplateFile,
  values: Record<string, string>,
  required: string[] = [],
): string {
  const present = new Set([...template.text.matchAll(PLACEHOLDER)].map((m) => m[1]!));
  for (const name of required) {
    if (!present.has(name))
      throw new UsageError("template_invalid", `prompt template ${template.path} must contain {{${name}}}`);
  }
  for (const name of present) {
    if (!(name in values)) {
      throw new UsageError(
        "template_invalid",
        `prompt template ${template.path} uses unknown placeholder {{${name}}} (known: ${
          Object.keys(values)
            .map((k) => `{{${k}}}`)
            .join(", ") || "none"
        })`,
      );
    }
  }
  return template.text.replace(PLACEHOLDER, (_, name: string) => values[name]!);
}
