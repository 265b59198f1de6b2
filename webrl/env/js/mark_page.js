// One call per observation (VAB/WebRL simplified-HTML pipeline, steps 1-3; see webrl/env/observation.py).
// Returns the marked HTML (a clone of the document, so the live page gets only `data-label-id`),
// the boxes of the labelled elements, and the page's url, title and viewport size.
() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const TAGS = new Set(["input", "textarea", "select", "button", "a", "iframe", "video", "object", "embed", "details"]);
  const ROLES = new Set(["button", "tab", "link", "checkbox", "menuitem", "menuitemcheckbox", "menuitemradio", "radio"]);

  for (const old of document.querySelectorAll("[data-label-id]")) old.removeAttribute("data-label-id");

  const root = document.documentElement;
  const live = [root, ...root.getElementsByTagName("*")];

  // Step 2: interactive elements.
  const matchesRule = (el) => {
    const tag = el.localName;
    if (el.hasAttribute("onclick") || typeof el.onclick === "function") return true;
    const style = window.getComputedStyle(el);
    const cursor = style.cursor || "";
    if (cursor === "pointer") return true;
    if (tag === "img" && (el.hasAttribute("usemap") || cursor.includes("zoom"))) return true;
    if (ROLES.has((el.getAttribute("role") || "").trim().toLowerCase())) return true;
    const editable = el.getAttribute("contenteditable");
    if (editable !== null && editable.toLowerCase() !== "false") return true;
    if ((el.getAttribute("jsaction") || "").includes("click")) return true;
    if (TAGS.has(tag)) return true;
    if (tag === "label" && el.control && !el.control.disabled) return true;
    if ((el.getAttribute("class") || "").toLowerCase().includes("button")) return true;
    const tabindex = el.getAttribute("tabindex");
    return tabindex !== null && parseInt(tabindex, 10) >= 0;
  };
  // An element's box is its first client rect of at least 1 px², as VAB's data-bbox: a link that
  // wraps onto two lines is hit-tested and clicked on its first line, not in the gap between them.
  const firstRect = (el) => {
    for (const r of el.getClientRects()) if (r.width * r.height >= 1) return r;
    return null;
  };
  const onTop = (el) => {
    const b = firstRect(el);
    if (b === null) return false;
    const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
    return hit !== null && (hit === el || el.contains(hit));
  };
  const interactive = new Set();
  for (const el of live) if (matchesRule(el) && onTop(el)) interactive.add(el);
  const containers = new Set();
  for (const el of interactive) {
    for (let p = el.parentElement; p !== null; p = p.parentElement) {
      if (interactive.has(p)) containers.add(p);
    }
  }

  // Step 3: labels 0, 1, 2, ... in document order for the visible ones.
  const boxes = [];
  let next = 0;
  for (const el of live) {
    if (!interactive.has(el) || containers.has(el)) continue;
    const b = firstRect(el) || el.getBoundingClientRect();
    const w = Math.min(b.right, vw) - Math.max(b.left, 0);
    const h = Math.min(b.bottom, vh) - Math.max(b.top, 0);
    if (b.width <= 0 || b.height <= 0 || w <= 0 || h <= 0) continue;
    el.setAttribute("data-label-id", String(next));
    boxes.push([next, b.left, b.top, b.width, b.height]);
    next += 1;
  }

  // Step 1 on a clone: node ids, boxes, own text, form state.
  const clone = root.cloneNode(true);
  const copies = [clone, ...clone.getElementsByTagName("*")];
  if (copies.length !== live.length) return { error: "clone differs from the page" };
  const ownText = (el) => {
    const parts = [];
    for (const n of el.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) {
        const t = n.textContent.trim();
        if (t) parts.push(t);
      }
    }
    return parts.join(",");
  };
  for (let i = 0; i < live.length; i++) {
    const el = live[i], copy = copies[i], tag = el.localName;
    copy.setAttribute("data-backend-node-id", String(i));
    const rects = el.getClientRects();
    if (rects.length > 0) {
      const r = rects[0];
      copy.setAttribute("data-bbox", [r.left, r.top, r.width, r.height].map(Math.round).join(","));
    }
    if (tag === "select") {
      copy.setAttribute("data-value", el.value);
      const chosen = el.selectedIndex >= 0 ? el.options[el.selectedIndex] : null;
      copy.setAttribute("data-text", chosen ? chosen.text.trim() : "");
      if (chosen) {
        const at = live.indexOf(chosen, i);
        if (at >= 0) copies[at].setAttribute("data-status", "selected");
      }
      continue;
    }
    copy.setAttribute("data-text", ownText(el));
    if (tag === "input" || tag === "textarea") {
      copy.setAttribute("data-value", el.value);
      if (tag === "input" && (el.type || "").toLowerCase() === "checkbox") {
        copy.setAttribute("data-status", el.checked ? "checked" : "not-checked");
      }
    }
  }
  return {
    html: clone.outerHTML,
    boxes: boxes,
    url: location.href,
    title: document.title,
    viewport: [vw, vh],
  };
}
