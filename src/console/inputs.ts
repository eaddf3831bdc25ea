/// <reference lib="dom" />
/**
 * Form controls for a WAITING event's expected inputs (string, integer, boolean, map, array<T>):
 * a text field, a whole-number field, a checkbox, and for maps and arrays a list of rows to add
 * and remove (an array's rows are controls of its element type, a map's are key and value), so
 * nobody types JSON. `read` returns the value typed as the run expects it, or throws an
 * InputInvalid whose message names the input (`tags[1]: enter a whole number`).
 */
import { h } from "./dom.js";

type InputType = { kind: "string" | "integer" | "boolean" | "map" } | { kind: "array"; of: InputType };

export class InputInvalid extends Error {}

export interface InputControl {
  element: HTMLElement;
  /** The value, read at `path` (the name shown in a message). */
  read(path: string): unknown;
}

/** The protocol's type names (see lattice/protocol/inputs.ts); null for one it does not know. */
function parseType(name: string): InputType | null {
  const s = name.trim();
  if (s === "string" || s === "integer" || s === "boolean" || s === "map") return { kind: s };
  const m = /^array\s*<(.*)>$/.exec(s);
  const of = m ? parseType(m[1]!) : null;
  return of ? { kind: "array", of } : null;
}

/** A map value as typed: JSON when it reads as JSON (42, true, {"a":1}, "quoted"), else the text itself. */
function mapValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

interface Row {
  element: HTMLElement;
  read: (path: string) => unknown;
}

/** Rows to add and remove; `read` reads each row still there, in order, with its index. */
function rows(
  add: string,
  label: string,
  row: () => Row,
): { element: HTMLElement; read: <T>(fn: (r: Row, at: number) => T) => T[] } {
  const list = h("ol", { class: "rows" });
  const readers = new WeakMap<Element, Row>();
  const more = h("button", { type: "button", class: "add" }, add);
  more.addEventListener("click", () => {
    const r = row();
    const remove = h("button", { type: "button", class: "remove", "aria-label": `remove this ${label}` }, "Remove");
    const li = h("li", { "data-row": "" }, r.element, " ", remove);
    remove.addEventListener("click", () => li.remove());
    readers.set(li, r);
    list.append(li);
  });
  return {
    element: h("div", { class: "rows-editor" }, list, more),
    read: (fn) => Array.from(list.children).map((li, at) => fn(readers.get(li)!, at)),
  };
}

function control(type: InputType, attrs: Record<string, string>): InputControl {
  switch (type.kind) {
    case "boolean": {
      const el = h("input", { type: "checkbox", ...attrs }) as HTMLInputElement;
      return { element: el, read: () => el.checked };
    }
    case "integer": {
      const el = h("input", { type: "number", step: "1", ...attrs }) as HTMLInputElement;
      return {
        element: el,
        read: (path) => {
          if (!/^-?\d+$/.test(el.value.trim())) throw new InputInvalid(`${path}: enter a whole number`);
          return Number(el.value);
        },
      };
    }
    case "string": {
      const el = h("input", { type: "text", ...attrs }) as HTMLInputElement;
      return { element: el, read: () => el.value };
    }
    case "map": {
      const editor = rows("Add entry", "entry", () => {
        const key = h("input", {
          type: "text",
          class: "key",
          placeholder: "key",
          "aria-label": "key",
        }) as HTMLInputElement;
        const value = h("input", {
          type: "text",
          class: "value",
          placeholder: "value (text, or JSON)",
          "aria-label": "value",
        }) as HTMLInputElement;
        return { element: h("span", {}, key, " = ", value), read: () => [key.value.trim(), mapValue(value.value)] };
      });
      return {
        element: h("div", { ...attrs, role: "group" }, editor.element),
        read: (path) => {
          const out: Record<string, unknown> = {};
          for (const [key, value] of editor.read((r) => r.read(path) as [string, unknown])) {
            if (key === "") throw new InputInvalid(`${path}: an entry has no key: give it one, or remove it`);
            if (key in out) throw new InputInvalid(`${path}: the key "${key}" is given twice`);
            out[key] = value;
          }
          return out;
        },
      };
    }
    case "array": {
      const editor = rows("Add item", "item", () => control(type.of, { "aria-label": "item" }));
      return {
        element: h("div", { ...attrs, role: "group" }, editor.element),
        read: (path) => editor.read((r, at) => r.read(`${path}[${at}]`)),
      };
    }
  }
}

/** The control for one expected input; a type the console does not know is typed as JSON. */
export function inputControl(name: string, typeName: string, id: string): InputControl {
  const type = parseType(typeName);
  const attrs = { name, id, "data-input": name, "data-type": typeName };
  if (type === null) {
    const el = h("textarea", { ...attrs, placeholder: `${typeName} as JSON`, rows: "2" }) as HTMLTextAreaElement;
    return {
      element: el,
      read: (path) => {
        try {
          return JSON.parse(el.value) as unknown;
        } catch (err) {
          throw new InputInvalid(`${path}: not valid JSON (${(err as Error).message})`);
        }
      },
    };
  }
  return control(type, type.kind === "string" || type.kind === "integer" ? { ...attrs, required: "" } : attrs);
}
