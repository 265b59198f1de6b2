// App-like environments: the email inboxes, forms in steps, movie search forms, a ticket list, a phone book and a
// search engine. Where a view appears only after a click (an opened email, a page of results), the solver opens it
// here with the page's own handlers to see where things land, then puts the page back as it was.
(() => {
// The movie search form of multi-layouts and multi-orderings: each text box's row holds its label
// (Genre / Director (Name) / Year or Released Date), the rows in random order.
const movieSearch = () => {
  const [, genre, director, year] = utterance.match(/^Search for (.+) movies directed by (.+) from year (\d+)\.$/);
  const value = (input) => {
    const label = text(input.closest("p, .row, tr, .field, .ui-entry"));
    return /genre/i.test(label) ? genre : /director/i.test(label) ? director : year;
  };
  return [...$$("#area input[type=text]").map((input) => type(input, value(input))),
    click($("#area button, #area .final, #area .ui-submit"))];
};

// The inbox's icons are CSS images (`content: url(...)`) without a width of their own: wait until those shown
// have loaded (at most 2 s), as the places of the icons after them depend on it.
const settle = async () => {
  const loading = () => $$("#area *").some((el) => getComputedStyle(el).content.startsWith("url(")
    && el.getClientRects().length > 0 && el.getClientRects()[0].width === 0);
  for (let i = 0; i < 100 && loading(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
};
// The email inbox: `task` is reply, forward, delete or important, `by` the sender, `to` the forward's recipient,
// `message` the reply. The page checks only the sender's name, except that a forward must carry the body of the
// email it picked: with two different emails by that sender the task is ambiguous.
const inbox = async ({ task, by, to, message }) => {
  const threads = $$("#main .email-thread").filter((t) => text($(".email-sender", t)) === by);
  if (!threads.length) throw new Error(`no email by ${by}`);
  // The list shows the start of a body: open an email here (the page's own handlers) to read all of it.
  const fullBody = (thread) => {
    thread.click();
    const body = text($("#email .email-body"));
    $("#close-email").click();
    return body;
  };
  if (task === "forward" && new Set(threads.map(fullBody)).size > 1) {
    throw new Error(`unsolvable: two different emails by ${by}`);
  }
  const thread = threads.find((t) => reachable($(".email-sender", t))) || threads[0];
  const icon = $(task === "delete" ? ".trash" : ".star", thread);
  if ((task === "delete" || task === "important") && reachable(icon)) return [click(icon)];
  // The email opens at the same place however it is opened: open it here, note where its controls are, close it.
  const body = fullBody(thread);
  thread.click();
  await settle();
  const view = await {
    delete: async () => [click($("#email .trash"))],
    important: async () => [click($("#email .star"))],
    reply: async () => {
      $("#email .email-reply").click();
      await settle();
      const steps = [click("Reply"), type($("#reply-text"), message), click($("#send-reply"))];
      $("#close-reply").click();
      return steps;
    },
    forward: async () => {
      $("#email .email-forward").click();
      await settle();
      const steps = [click("Forward"), type($("#forward .forward-sender"), to), click($("#send-forward"))];
      $("#close-forward").click();
      return steps;
    },
  }[task]();
  $("#close-email").click();
  // An email scrolled out of the list is found by searching for its body, which leaves it the only result.
  const open = reachable($(".email-sender", thread)) ? [click($(".email-sender", thread))]
    : [click($("#open-search")), type("placeholder=Search", body), click(by)];
  return [...open, ...view];
};
// The utterance of the plain inbox environments.
const plainInbox = () => {
  const by = utterance.match(/^Find the email by (.+?) and /)[1];
  if (/ and reply to them with the text "/.test(utterance)) return inbox({ task: "reply", by, message: quoted()[0] });
  const forward = utterance.match(/ and forward that email to (.+)\.$/);
  if (forward) return inbox({ task: "forward", by, to: forward[1] });
  return inbox({ task: /trash icon/.test(utterance) ? "delete" : "important", by });
};
// The natural-language inboxes fill a template's first NAME, DEST and MSG and keep them in core.currentFields. Some
// templates swap the two names ("Find the email from DEST and forward it to NAME."), so an utterance that another
// template reads with the names the other way round is ambiguous.
const nlInbox = (templates, task) => {
  const { by, to, message } = window.core.currentFields;
  const fill = (t, name, dest) => t.replace(/NAME/, name).replace(/DEST/, dest).replace(/MSG/, message)
    .replace(/\s+/g, " ").trim();
  if (to !== undefined && to !== by && templates.some((t) => fill(t, to, by) === utterance)) {
    throw new Error("unsolvable: the utterance reads both ways round");
  }
  return inbox({ task, by, to, message });
};

return {
  "email-inbox": plainInbox,
  "email-inbox-delete": plainInbox,
  "email-inbox-forward": plainInbox,
  "email-inbox-forward-nl": () => nlInbox(window.NL_TEMPLATES, "forward"),
  "email-inbox-forward-nl-turk": () => nlInbox(window.TEMPLATES.forward.train, "forward"),
  "email-inbox-important": plainInbox,
  "email-inbox-nl-turk": () => {
    const task = { star: "important" }[window.core.currentFields.task] || window.core.currentFields.task;
    return nlInbox(window.TEMPLATES[task].train, task);
  },
  "email-inbox-noscroll": plainInbox,
  "email-inbox-reply": plainInbox,
  "email-inbox-star-reply": plainInbox,
  "buy-ticket": () => {
    const flights = $$("#area .flight").map((f) => ({
      button: $(".buy-ticket", f),
      price: Number($(".buy-ticket", f).dataset.price),
      duration: Number($(".time-duration", f).dataset.duration),
    }));
    const [key, sign] = {
      "cheapest cost": ["price", 1], "most expensive cost": ["price", -1],
      "shortest duration": ["duration", 1], "longest duration": ["duration", -1],
    }[$("#query span").textContent.trim()];
    const best = flights.reduce((a, b) => (sign * (b[key] - a[key]) < 0 ? b : a));
    return [click(best.button)];
  },
  "form-sequence-2": () => {
    const [, radio, number, box] = utterance.match(/the (\d)\w\w radio button and enter the number "(-?\d+)" into the (\d)\w\w/);
    return [click($(`#area input[type=radio][value="${radio}"]`)), type($(`#input-${box}`), number), click(submit())];
  },
  "form-sequence-3": () => {
    const [, height, button] = utterance.match(/^Choose (.+) from the dropdown, then click the button labeled "(.+)"\.$/);
    // The <select> is hidden behind a Selectric widget whose list shows ~2 items and, opened again, scrolls to
    // show the chosen one. Typing into it (a space is swallowed) highlights the last item starting with the text,
    // and Enter picks it: "5" -> 5ft 11in, "6" -> 6ft 2in; the items next to the chosen one are then in view.
    const widget = $(".selectric .button");
    const steps = {
      "5ft 9in": [click(widget), click("5ft 9in")],
      "5ft 10in": [search(widget, "5"), click("▾"), click("5ft 10in")],
      "5ft 11in": [search(widget, "5")],
      "6 ft": [search(widget, "6"), click("▾"), click("6 ft")],
      "6ft 1in": [search(widget, "6"), click("▾"), click("6ft 1in")],
    }[height];
    return [...steps, click(byText("#buttons button", button))];
  },
  "phone-book": () => {
    const [, person, property] = utterance.match(/^Find (.+) in the contact book and click on their (\w+)/);
    // One contact shows at a time and ">" pages on: page through the book here to find the person, then back.
    const shown = (label) => $$("#pagination a").find((a) => text(a) === label && a.offsetParent !== null);
    const contact = () => {
      const link = $(`#contact .${property}`);
      return { name: text($("#contact .name")), value: text(link), reachable: reachable(link) };
    };
    const contacts = [contact()];
    while (shown(">") && contacts.length < 10) {
      shown(">").click();
      contacts.push(contact());
    }
    while (shown("<")) shown("<").click();
    const found = contacts.map((c, i) => ({ ...c, i })).filter((c) => c.name === person);
    if (found.length !== 1) throw new Error(`unsolvable: ${found.length} contacts are called ${person}`);
    if (!found[0].reachable) throw new Error(`unsolvable: the ${property} is covered at its centre (it wraps)`);
    return [...Array(found[0].i).fill(click(">")), click(found[0].value)];
  },
  "search-engine": () => {
    const [wanted] = quoted();
    const nth = Number(utterance.match(/click the (\d+)\w\w search result/)[1]);
    const page = Math.ceil(nth / 3);
    // The results (3 a page) appear only after searching: search here to see where the result lands, then clear.
    const jq = window.jQuery;
    $("#search-text").value = wanted;
    $("#search").click();
    if (page > 1) byText("#pagination a", String(page)).click();
    // The result is named by its place: by its title, the search box (whose value is the title too) or another
    // result of that title could be found first.
    const result = click($$("#page-content a")[(nth - 1) % 3]);
    jq("#pagination").twbsPagination("destroy");
    jq("#page-content").empty();
    $("#search-text").value = "";
    return [type($("#search-text"), wanted), click($("#search")), ...(page > 1 ? [click(String(page))] : []), result];
  },
  "multi-layouts": movieSearch,
  "multi-orderings": movieSearch,
};
})()
