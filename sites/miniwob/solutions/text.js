// Text entry, reading and small puzzles: the answer is read or computed off the page, then typed or clicked.
(() => {
  // "1st", "2nd", "3rd", "12th" -> 0-based index.
  const ordinal = (s) => parseInt(s, 10) - 1;
  // The value in the second column of the row whose first column is `key`.
  const tableValue = (key) => $$("#tab tr").map((tr) => $$("td", tr).map(text)).find(([k]) => k === key)[1];
  // `step` n times, with `pause` after every 4th: WebRL ends an episode at 5 identical actions in a row.
  const repeat = (step, n, pause) => [...Array(n).keys()].flatMap((i) => (i % 4 === 3 ? [step, pause] : [step]));
  // jQuery UI datepicker: it opens on the month of maxDate (December 2016, today being later); go back to the
  // wanted month with "Prev", then click the day.
  const chooseDate = () => {
    const [month, day] = utterance.match(/(\d\d)\/(\d\d)\/\d{4}/).slice(1).map(Number);
    const prevs = repeat(["Click", "title=Prev"], 12 - month, ["Hover", "title=Prev"]);
    // the picker fades out over the submit button after the day is chosen: the env observes it at rest (gone)
    return [click($("#datepicker")), ...prevs, ["Click", String(day)], click(submit())];
  };
  // Scroll the element under the mouse: hover it, then turn the wheel (WebRL's Scroll Up/Down turn it by 2/3 of
  // the window's height). Hovering before each turn also keeps clear of the limit of 5 identical actions.
  const scroll = (el, direction, distance) => {
    const turns = Math.max(1, Math.ceil(Math.abs(distance) / (window.innerHeight * 2 / 3)));
    return Array(turns).fill(0).flatMap(() => [hover(el), [`Scroll ${direction}`, null]]);
  };
  // The autocomplete's first item (alphabetical) with the asked start and end.
  const wanted = () => {
    const [start, end = ""] = quoted();
    return window.ITEMS.find((c) => c.startsWith(start) && c.endsWith(end));
  };
  return {
  "enter-text-2": () => {
    const word = quoted()[0];
    return [type($("#tt"), utterance.includes("upper case") ? word.toUpperCase() : word.toLowerCase()), click(submit())];
  },
  "enter-text-dynamic": () => [type($("#tt"), quoted()[0]), click(submit())],
  // The time field's hour segment takes the keys: type 12-hour "hhmm" and AM/PM.
  "enter-time": () => {
    const [, h, m, half] = utterance.match(/Enter (\d+):(\d\d) (AM|PM)/);
    return [type($("#tt"), h.padStart(2, "0") + m + half), click(submit())];
  },
  "focus-text-2": () => [click($$("#area input")[ordinal(utterance.match(/the (\d+)\w\w input/)[1])])],
  // A focus on the field named by the hidden popupMode opens a popup that disables the form: cancel it first.
  "login-user-popup": () => {
    const [user, password] = quoted();
    const steps = [];
    for (const [field, value] of [[$("#username"), user], [$("#password"), password]]) {
      if (d3.select(field).on("focus")) steps.push(click(field), ["Click", "Cancel"]);
      steps.push(type(field, value));
    }
    return [...steps, click(submit())];
  },
  "copy-paste": () => [type($("#answer-input"), $("#to-copy").value), click(submit())],
  "copy-paste-2": () => {
    const area = $(`#text-${ordinal(utterance.match(/(\d)\w\w text area/)[1]) + 1}`);
    return [type($("#answer-input"), area.value), click(submit())];
  },
  "find-word": () => {
    const words = text($("#area p")).split(" ");
    const word = words[ordinal(utterance.match(/the (\d+)\w\w word/)[1])].replace(/[^a-zA-Z]/g, "");
    return [type($("#answer-input"), word), click(submit())];
  },
  "read-table": () => {
    const key = text($("#query .bold"));
    return [type($("#tt"), tableValue(key)), click(submit())];
  },
  "read-table-2": () => [
    ...["1", "2"].map((i) => type($(`#tt${i}`), tableValue($(`#ll${i}`).dataset.key))), click(submit())],
  "simple-arithmetic": () => {
    const [, a, op, b] = text($("#math-problem")).match(/(\d+) (\S) (\d+)/);
    const answer = { "+": +a + +b, "-": a - b, x: a * b }[op];
    return [type($("#math-answer"), answer), click(submit())];
  },
  "simple-algebra": () => {
    // "x + d = r", "x - d = r", "d + x = r" or "d - x = r"
    const [left, r] = text($("#math-problem")).split(" = ");
    const [p, op, q] = left.split(" ");
    const d = Number(p === "x" ? q : p);
    const x = op === "+" ? r - d : p === "x" ? +r + d : d - r;
    return [type($("#math-answer"), x), click(submit())];
  },
  "odd-or-even": () => [
    ...$$("#numbers .row").map((row) => {
      const odd = Math.abs(Number(text($(".display-number", row)))) % 2 === 1;
      return click($(odd ? ".odd" : ".even", row));
    }),
    click($("#submit")),
  ],
  // The page's PATTERNS hold the 7x4 grid of each digit, row by row.
  "number-checkboxes": () => {
    const grid = window.PATTERNS[Number(quoted()[0])].flat();
    const boxes = $$("#checkboxes input[type=checkbox]");
    return [...boxes.filter((_, i) => grid[i] === 1).map(click), click(submit())];
  },
  "find-greatest": () => {
    const cards = $$("#cardholder .card");
    const best = cards.reduce((a, b) => (Number(text(b)) > Number(text(a)) ? b : a));
    return [click(best), click($("#submit"))];
  },
  "text-transform": () => [type($("#tt"), text($("#captcha")).replace(/ /g, "")), click(submit())],
  "scroll-text": () => {
    const last = $("#text-area").value.trim().split(/\s+/).pop().replace(/[^a-zA-Z0-9]/g, "");
    return [type($("#answer-input"), last), click(submit())];
  },
  // Scroll the textarea to the asked end of its text.
  "scroll-text-2": () => {
    const area = $("#text-area");
    const down = utterance.includes("bottom");
    const distance = down ? area.scrollHeight - area.clientHeight - area.scrollTop : area.scrollTop;
    return [...scroll(area, down ? "Down" : "Up", distance), click(submit())];
  },
  // Name and buttons are enabled once the (disabled) agreement text is scrolled to its end.
  "sign-agreement": () => {
    if (utterance === "Click the cancel button.") return [click($("#cancel"))];
    const [name, button] = quoted();
    const area = $("#text-area");
    return [...scroll(area, "Down", area.scrollHeight - area.clientHeight), type($("#name"), name),
      click($(`#${button.toLowerCase()}`))];
  },
  // Each press of Generate draws core.randi(0, 11) from the seeded generator: press until the draw fits.
  "generate-number": () => {
    const [, rule, bound] = utterance.match(/(less than|greater than|odd|even)\D*(\d*)/);
    const fits = { "less than": (n) => n < +bound, "greater than": (n) => n > +bound,
      odd: (n) => n % 2 === 1, even: (n) => n % 2 === 0 }[rule];
    let presses = 1;
    while (!fits(core.randi(0, 11))) presses += 1;
    return [...repeat(click($("#generate")), presses, hover($("#generate"))), click($("#submit"))];
  },
  // The number is hidden in the Submit handler: find it by trying each guess with the episode timer unset
  // (endEpisode then does nothing), then demonstrate a binary search that follows the page's feedback.
  "guess-number": () => {
    const timer = core.EP_TIMER;
    core.EP_TIMER = null;
    const answer = [...Array(10).keys()].find((n) => {
      $("#tt").value = n;
      jQuery("#subbtn").triggerHandler("click");
      return !$("#correct").classList.contains("hide");
    });
    core.EP_TIMER = timer;
    window.resetUI();
    const steps = [];
    for (let lo = 0, hi = 9, guess = -1; guess !== answer;) {
      guess = Math.floor((lo + hi) / 2);
      steps.push(type($("#tt"), guess), click(submit()));
      if (guess < answer) lo = guess + 1; else hi = guess - 1;
    }
    return steps;
  },
  // The menu opens 300 ms after the last key, later than the next step: type the whole item instead. Should
  // the menu cover Submit by then, its first entry (the typed item itself) takes the click: click again.
  "use-autocomplete": () => [type($("#tags"), wanted()), click(submit()), ["Click", "Submit"]],
  // No delay: the menu is open by the next step, so type the start and click the suggestion.
  "use-autocomplete-nodelay": () => [type($("#tags"), quoted()[0]), ["Click", wanted()], click(submit())],
  // Files are listed by `ls`; delete the first with the wanted extension (or none).
  "terminal": () => {
    const ext = utterance.includes("no file extension") ? "" : text($("#query .bold")).slice(1);
    const files = window.currentFiles;
    const file = files.find((f) => (ext ? f.endsWith("." + ext) : !f.includes(".")));
    return [search($("#terminal-target"), "ls"), search($("#terminal-target"), `rm ${file}`)];
  },
  "choose-date-easy": chooseDate,
  "choose-date-medium": chooseDate,
  "choose-date": chooseDate,
  "choose-date-nodelay": chooseDate,
  };
})()
