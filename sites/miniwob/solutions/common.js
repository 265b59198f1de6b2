// Scripted solutions of MiniWoB++ environments, in one file per group of environments beside this one: each
// reads the problem off the page right after the episode started and returns the steps that solve it. Evaluated once per (environment, seed) when a task set is built
// (webrl.sites.miniwob.tasks); the steps become the task's `cheat`, which `--policy oracle` replays.
//
// A step is [action, target, argument?]: action a WebRL action name ("Click", "Type", "Search", "Hover",
// "Select Dropdown Option"), target how the oracle finds the element in the observation at that step: an element
// of the page now (found again by its position, `@x,y`), or a string: "text" (an element whose text or attribute
// value is exactly that) or "attribute=value". Use an element for what is on the page now, a string for what
// appears later (after a click opens it). `exit` ends a solution with an answer; most environments end when
// the page rewards the last action. A problem that no WebRL action can solve (the element to click is covered
// by another at its centre, where a WebRL click lands; the option to select comes after one whose text contains
// it) throws "unsolvable: ...": that seed is left out of the sets.
//
// A group file is one object literal, `({ "env-name": () => [steps], ... })`, keys indented by two spaces.
// This file holds the helpers they use: webrl.sites.miniwob.tasks runs it inside
// `(utterance) => { <this file> return Object.assign({}, <each group file>); }`, so `utterance` is in scope.
const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
const text = (el) => el.textContent.replace(/\s+/g, " ").trim();
// The centre of the element's first line box: where the observation's data-bbox is.
const at = (el) => {
  const box = el.getClientRects()[0] || el.getBoundingClientRect();
  return `@${Math.round(box.left + box.width / 2)},${Math.round(box.top + box.height / 2)}`;
};
const target = (t) => {
  if (typeof t === "string") return t;
  if (!t) throw new Error("no element to act on");
  return at(t);
};
// Whether a WebRL Click reaches the element: it lands at the centre of its bounding box (as VAB's does).
const reachable = (el) => {
  const box = el.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return hit !== null && (hit === el || el.contains(hit));  // an ancestor hit: el is clipped or covered there
};
const click = (t) => {
  if (t && typeof t !== "string" && !reachable(t)) throw new Error("unsolvable: the element is covered at its centre");
  return ["Click", target(t)];
};
const hover = (t) => ["Hover", target(t)];
const type = (t, value) => ["Type", target(t), String(value)];
const search = (t, value) => ["Search", target(t), String(value)];
// WebRL's select picks the first option whose text contains the argument (case-insensitive), as VAB's does.
const select = (t, option) => {
  if (t && typeof t !== "string") {
    const first = [...t.options].find((o) => o.text.toLowerCase().includes(String(option).toLowerCase()));
    if (first && first.text.trim() !== String(option)) {
      throw new Error(`unsolvable: an earlier option (${first.text.trim()}) contains ${option}`);
    }
  }
  return ["Select Dropdown Option", target(t), String(option)];
};
const exit = (message) => ["exit", null, String(message)];
// The quoted parts of the utterance, in order: 'Enter "x" ...' -> ["x"].
const quoted = () => [...utterance.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
// The element among `selector` whose text is exactly `wanted`.
const byText = (selector, wanted) => $$(selector).find((el) => text(el) === wanted);
// The checkbox or radio button of a label whose text is `wanted`.
const inputLabelled = (wanted) => {
  const label = $$("label").find((l) => text(l) === wanted);
  return label && ($("input", label) || document.getElementById(label.htmlFor));
};
const submit = () => $("#subbtn") || byText("button", "Submit") || byText("button", "submit");

