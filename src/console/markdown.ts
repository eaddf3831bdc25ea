/// <reference lib="dom" />
/**
 * A small Markdown renderer for Kai's digests: headings, paragraphs, bullet and numbered lists,
 * fenced code, tables, inline code, bold, italics and links. It builds DOM nodes and puts all text in
 * through text nodes, so any HTML in the source shows as text and never becomes markup; a link is
 * kept only for http(s), mailto and in-page targets.
 */
import { h } from "./dom.js";

const SAFE_URL = /^(https?:\/\/|mailto:|#)/i;

/** Inline markup of one line of text. */
export function inline(text: string): Node[] {
  const out: Node[] = [];
  const re =
    /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_]*?)_(?![\w_])/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    if (m[1] !== undefined) out.push(h("code", {}, m[1]));
    else if (m[2] !== undefined || m[3] !== undefined) out.push(h("strong", {}, ...inline(m[2] ?? m[3]!)));
    else if (m[4] !== undefined) {
      const url = m[5]!;
      out.push(
        SAFE_URL.test(url)
          ? h(
              "a",
              { href: url, rel: "noopener noreferrer", ...(url.startsWith("#") ? {} : { target: "_blank" }) },
              ...inline(m[4]),
            )
          : document.createTextNode(m[0]),
      );
    } else out.push(h("em", {}, ...inline(m[6] ?? m[7]!)));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

const cells = (row: string): string[] =>
  row
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim());

/** Render Markdown into a <div class="md">. */
export function renderMarkdown(source: string): HTMLElement {
  const root = h("div", { class: "md" });
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length) root.append(h("p", {}, ...inline(para.join(" "))));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) body.push(lines[i]!);
      root.append(h("pre", {}, h("code", {}, body.join("\n"))));
      i++;
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      // Page headings stay below the console's own h1/h2.
      root.append(h(`h${Math.min(6, heading[1]!.length + 2)}`, {}, ...inline(heading[2]!)));
      i++;
      continue;
    }
    const item = /^\s{0,3}([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      flush();
      const ordered = /\d/.test(item.exec(line)![1]!);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length && item.test(lines[i]!)) {
        let text = lines[i]!.replace(item, "");
        // Continuation lines (indented, not a new item) belong to the item.
        for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i]!) && !item.test(lines[i]!); i++)
          text += ` ${lines[i]!.trim()}`;
        list.append(h("li", {}, ...inline(text)));
      }
      root.append(list);
      continue;
    }
    if (
      line.includes("|") &&
      i + 1 < lines.length &&
      /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(lines[i + 1]!)
    ) {
      flush();
      const head = h("tr", {}, ...cells(line).map((c) => h("th", {}, ...inline(c))));
      const body = h("tbody", {});
      for (i += 2; i < lines.length && lines[i]!.includes("|"); i++)
        body.append(h("tr", {}, ...cells(lines[i]!).map((c) => h("td", {}, ...inline(c)))));
      root.append(h("table", {}, h("thead", {}, head), body));
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line.trim());
    i++;
  }
  flush();
  return root;
}
