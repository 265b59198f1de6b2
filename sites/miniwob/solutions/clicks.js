// Buttons, dialogs, tabs, collapsibles, menus, trees and other widgets that need clicks (and hovers) only.
(() => {
  // The names of an utterance "Select a, b and click Submit." ([] for "nothing").
  const listed = (prefix) => {
    const names = utterance.slice(prefix.length).replace(/ and click Submit\.$/, "");
    return names === "nothing" ? [] : names.split(", ");
  };
  // Tabs (jQuery UI): click the tab of the first link named `word` unless one is visible, then the link.
  const tabLink = (word) => {
    const links = $$("#area .alink").filter((a) => text(a) === word);
    const shown = links.find((a) => a.getClientRects().length > 0);
    if (shown) return [click(shown)];
    const panel = links[0].closest(".ui-tabs-panel");
    return [click($(`#area a[href="#${panel.id}"]`)), click(word)];
  };
  // Accordions (jQuery UI): a section's content follows its header.
  const sectionLink = (word) => {
    const link = $$("#area .alink").find((a) => text(a) === word);
    return [click(link.parentElement.previousElementSibling), click(word)];
  };
  // Menus (jQuery UI): an item with a submenu is an element only by its caret icon, an item with an icon by
  // that icon, any other by its text. A submenu opens 300 ms after its item is hovered, before the environment
  // observes the page (it waits for a page's short timers).
  // Positions inside a submenu are measured by showing it where the menu will place it.
  const menuSteps = (leaf, first = []) => {
    const parents = [];
    for (let li = leaf.closest("li").parentElement.closest("li"); li; li = li.parentElement.closest("li")) parents.unshift(li);
    const shown = [$("#menu"), ...parents.map((li) => $(":scope > ul", li))].filter((ul) => ul.style.display === "none");
    const steps = [...first];
    const place = (ul) => ul.id === "menu" ? jQuery(ul).show() : jQuery(ul).show().position({my: "left top", at: "right top", of: jQuery(ul.parentElement)});
    if (shown[0]?.id === "menu") place(shown[0]);
    for (const li of parents) {
      steps.push(hover($(":scope > div > .ui-menu-icon", li)));
      place($(":scope > ul", li));
    }
    const icon = $(".ui-icon", leaf);
    steps.push(click(icon || (parents.length ? text(leaf) : leaf)));
    shown.reverse().forEach((ul) => jQuery(ul).hide());
    return steps;
  };
  return {
  "click-test": () => [click($("#subbtn"))],
  "click-test-2": () => [click(byText("#area button", "ONE"))],
  "click-test-transfer": () => [click(byText("#area button", utterance.match(/^Click button (\w+)\.$/)[1]))],
  "click-dialog": () => [click($(".ui-dialog-titlebar-close"))],
  "click-dialog-2": () => {
    const label = quoted()[0];
    return [click(label === "x" ? $(".ui-dialog-titlebar-close") : byText(".ui-dialog-buttonpane button", label))];
  },
  "click-tab": () => [click(byText("#area ul a", utterance.match(/^Click on (Tab #\d)\.$/)[1]))],
  "click-tab-2": () => tabLink(quoted()[0]),
  "click-tab-2-easy": () => tabLink(quoted()[0]),
  // The second tab is emptied after the link is chosen: if the link was only there, clicking that tab wins.
  "click-tab-2-medium": () => {
    const word = quoted()[0];
    return $$("#area .alink").some((a) => text(a) === word) ? tabLink(word) : [click($$("#area ul a")[1])];
  },
  "click-tab-2-hard": () => tabLink(quoted()[0]),
  "click-collapsible": () => [click($("#area h3")), click("Submit")],
  "click-collapsible-nodelay": () => [click($("#area h3")), click("Submit")],
  "click-collapsible-2": () => sectionLink(quoted()[0]),
  "click-collapsible-2-nodelay": () => sectionLink(quoted()[0]),
  "click-widget": () => {
    const kind = quoted()[0];
    return [click($$("#area .widget [data-type]").find((el) => el.dataset.type === kind))];
  },
  "click-menu": () => {
    const name = utterance.split(">").pop().replace(/^Select /, "");
    return menuSteps($$("#menu li > div").find((d) => text(d) === name));
  },
  "click-menu-2": () => {
    if ($("#query .ui-icon")) throw new Error("unsolvable: the item is named by an icon, which the observation does not show");
    const item = $$("#menu li > div").find((d) => text(d) === quoted()[1]);
    return menuSteps(item, [click($("#open-menu"))]);
  },
  "click-checkboxes-large": () => [...listed("Select ").map((n) => click(inputLabelled(n))), click(submit())],
  "click-checkboxes-transfer": () => [...listed("Select ").map((n) => click(inputLabelled(n))), click(submit())],
  // Each box is labelled with a synonym of a listed word, from the page's own SYNONYMS groups.
  "click-checkboxes-soft": () => {
    const boxes = listed("Select words similar to ").map((word) => {
      const group = SYNONYMS.find((g) => g.includes(word) && $$("#boxes label").some((l) => g.includes(text(l))));
      return $("input", $$("#boxes label").find((l) => group.includes(text(l))));
    });
    return [...boxes.map((box) => click(box)), click(submit())];
  },
  // A multiple <select>: the select action chooses one option (the first whose text contains the name).
  "click-scroll-list": () => {
    const names = utterance.replace(/^Select /, "").replace(/ from the scroll list and click Submit\.$/, "").split(", ");
    if (names.length > 1) throw new Error("unsolvable: selecting two options of a list needs a ctrl-click");
    const options = $$("#options option").map(text);
    if (options.find((o) => o.toLowerCase().includes(names[0].toLowerCase())) !== names[0]) {
      throw new Error("unsolvable: an option before it contains its name");
    }
    return [select($("#options"), names[0]), click(submit())];
  },
  // The field ignores keys: click an arrow n times, with a hover between (five identical actions end an episode).
  "use-spinner": () => {
    const n = Number(utterance.match(/^Select (-?\d+) /)[1]);
    const arrow = click($(n > 0 ? ".ui-spinner-up" : ".ui-spinner-down"));
    const steps = Array.from({length: Math.abs(n)}, (_, i) => (i ? [hover($("#spinner")), arrow] : [arrow])).flat();
    return [...steps, click(submit())];
  },
  "unicode-test": () => [click(byText("#area button", quoted()[0]))],
  // A collapsed tree (jQuery treeview): click each closed folder above the file, shallowest match first.
  // Positions below a folder are measured by opening its list for a moment.
  "navigate-tree": () => {
    const name = quoted()[0];
    const closedAbove = (el) => $$("#tree ul").filter((ul) => ul.contains(el) && ul.style.display === "none");
    const spans = $$("#tree span").filter((s) => text(s) === name);
    const goal = spans.reduce((a, b) => (closedAbove(b).length < closedAbove(a).length ? b : a));
    const steps = [];
    const opened = [];
    for (const ul of closedAbove(goal)) {
      steps.push(click($(":scope > span", ul.parentElement)));
      ul.style.display = "block";
      opened.push(ul);
    }
    steps.push(click(goal));
    opened.forEach((ul) => { ul.style.display = "none"; });
    return steps;
  },
  };
})()
