// One call per observation (VAB/WebRL simplified-HTML pipeline, steps 1-3; see webrl/env/observation.py).
// Returns the marked HTML (a clone of the document, so the live page gets only `data-label-id`),
// the boxes of the labelled elements (`clickAt` "box": their data-bbox, "line": their first line box of
// at least 1 px²), and the page's url, title and viewport size.
(clickAt) => {
  const vw = Math.max(document.documentElement.clientWidth || 0, window.innerWidth || 0);
  const vh = Math.max(document.documentElement.clientHeight || 0, window.innerHeight || 0);
  const TAGS = new Set(["input", "textarea", "select", "button", "a", "iframe", "video", "object", "embed", "details"]);
  const ROLES = new Set(["button", "tab", "link", "checkbox", "menuitem", "menuitemcheckbox", "menuitemradio", "radio"]);

  for (const old of document.querySelectorAll("[data-label-id]")) old.removeAttribute("data-label-id");

  const root = document.documentElement;
  const live = [root, ...root.getElementsByTagName("*")];

  // data-bbox: the first client rect, its edges rounded (so width = right - left of the rounded edges).
  const roundedBox = (r) => {
    const left = Math.round(r.left), top = Math.round(r.top);
    return [left, top, Math.round(r.right) - left, Math.round(r.bottom) - top];
  };

  // Step 2: interactive elements.
  // jsaction holds rules "event:namespace.method" separated by ";"; a rule without "event:" is a click.
  // It makes a click when some rule is a click whose namespace is not "none" and that names a method.
  const jsactionClick = (value) => value.split(";").some((rule) => {
    const parts = rule.trim().split(":");
    if (parts.length > 2) return false;
    const [event, handler] = parts.length === 1 ? ["click", parts[0]] : parts;
    const [namespace, method = "_"] = handler.trim().split(".");
    return event === "click" && namespace !== "none" && method !== "_";
  });
  // An image with a usemap counts when a <map> of that name exists.
  const imageMap = (el) => {
    const usemap = el.getAttribute("usemap");
    if (!usemap || el.getClientRects().length === 0) return false;
    const name = usemap.replace(/^#/, "");
    return [...document.getElementsByTagName("map")].some((m) => m.getAttribute("name") === name);
  };
  const matchesRule = (el) => {
    const tag = el.localName;
    if (el.onclick != null || window.getComputedStyle(el).cursor === "pointer") return true;
    if (tag === "img" && imageMap(el)) return true;
    const role = el.getAttribute("role");
    if (role !== null && ROLES.has(role.toLowerCase())) return true;
    const editable = el.getAttribute("contenteditable");
    if (editable !== null && ["", "contenteditable", "true"].includes(editable.toLowerCase())) return true;
    if (el.hasAttribute("jsaction") && jsactionClick(el.getAttribute("jsaction"))) return true;
    if (TAGS.has(tag)) return true;
    if (tag === "label" && el.control != null && !el.control.disabled) return true;
    if (tag === "img" && ["zoom-in", "zoom-out"].includes(el.style.cursor)) return true;
    if ((el.getAttribute("class") || "").toLowerCase().includes("button")) return true;
    const tabindex = parseInt(el.getAttribute("tabindex") || "-1");
    return tabindex >= 0;
  };
  // The area, clipped to the viewport, of the client rects whose centre hits the element (or a descendant).
  const hitArea = (el) => {
    let area = 0;
    for (const r of el.getClientRects()) {
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (hit === null || !(hit === el || el.contains(hit))) continue;
      area += (Math.min(vw, r.right) - Math.max(0, r.left)) * (Math.min(vh, r.bottom) - Math.max(0, r.top));
    }
    return area;
  };
  const interactive = new Set();
  for (const el of live) if (matchesRule(el) && hitArea(el) >= 1) interactive.add(el);
  const containers = new Set();
  for (const el of interactive) {
    for (let p = el.parentElement; p !== null; p = p.parentElement) {
      if (interactive.has(p)) containers.add(p);
    }
  }

  // Step 3: labels 0, 1, 2, ... in document order, for those whose first client rect, clipped to the viewport,
  // has a positive width or height.
  const firstLine = (el) => {
    for (const r of el.getClientRects()) if (r.width * r.height >= 1) return r;
    return el.getBoundingClientRect();
  };
  const boxes = [];
  let next = 0;
  for (const el of live) {
    if (!interactive.has(el) || containers.has(el)) continue;
    const r = el.getClientRects()[0];
    if (!r || !(Math.min(r.right, vw) - Math.max(r.left, 0) > 0 || Math.min(r.bottom, vh) - Math.max(r.top, 0) > 0)) {
      continue;
    }
    el.setAttribute("data-label-id", String(next));
    if (clickAt === "line") {
      const b = firstLine(el);
      boxes.push([next, b.left, b.top, b.width, b.height]);
    } else {
      boxes.push([next, ...roundedBox(r)]);
    }
    next += 1;
  }

  // Step 1 on a clone: node ids, boxes, own text, form state.
  const clone = root.cloneNode(true);
  const copies = [clone, ...clone.getElementsByTagName("*")];
  if (copies.length !== live.length) return { error: "clone differs from the page" };
  // Each own text node trimmed, runs of 2+ whitespace characters (U+00A0 included) made one space.
  const ownText = (el) => {
    const parts = [];
    for (const n of el.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) {
        const t = n.textContent.trim().replace(/\s{2,}/g, " ");
        if (t) parts.push(t);
      }
    }
    return parts.join(",");
  };
  for (let i = 0; i < live.length; i++) {
    const el = live[i], copy = copies[i], tag = el.localName;
    copy.setAttribute("data-backend-node-id", String(i));
    const rects = el.getClientRects();
    if (rects.length > 0) copy.setAttribute("data-bbox", roundedBox(rects[0]).join(","));
    if (tag === "select") {
      copy.setAttribute("data-value", el.value);
      const chosen = el.selectedIndex >= 0 ? el.options[el.selectedIndex] : null;
      copy.setAttribute("data-text", chosen ? chosen.text : "");
      if (chosen) {
        const at = live.indexOf(chosen, i);
        if (at >= 0) copies[at].setAttribute("data-status", "selected");
      }
      continue;
    }
    copy.setAttribute("data-text", ownText(el));
    if (tag === "input" || tag === "textarea") {
      copy.setAttribute("data-value", el.value);
      if (tag === "input" && el.getAttribute("type") === "checkbox") {
        copy.setAttribute("data-status", el.checked ? "checked" : "not-checked");
      }
    }
  }
  return {
    html: clone.outerHTML,
    boxes: boxes,
    url: location.href,
    title: document.title,
    viewport: [window.innerWidth, window.innerHeight],
  };
}
