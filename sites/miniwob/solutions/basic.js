// Forms and buttons whose solution the utterance names outright.
({
  "click-button": () => [click(byText("#area button", quoted()[0]))],
  "click-button-sequence": () => [click(byText("#area button", "ONE")), click(byText("#area button", "TWO"))],
  "click-checkboxes": () => {
    const wanted = utterance.replace(/^Select /, "").replace(/ and click Submit\.$/, "");
    const names = wanted === "nothing" ? [] : wanted.split(", ");
    return [...names.map((name) => click(inputLabelled(name))), click(submit())];
  },
  "click-link": () => [click(byText("#area span.alink", quoted()[0]))],
  "click-option": () => {
    const name = utterance.replace(/^Select /, "").replace(/ and click Submit\.$/, "");
    return [click(inputLabelled(name)), click(submit())];
  },
  "choose-list": () => {
    const name = utterance.replace(/^Select /, "").replace(/ from the list and click Submit\.$/, "");
    return [select($("#options"), name), click(submit())];
  },
  "enter-password": () => [type($("#password"), quoted()[0]), type($("#verify"), quoted()[0]), click(submit())],
  "enter-text": () => [type($("#area input"), quoted()[0]), click(submit())],
  "focus-text": () => [click($("#tt"))],
  "login-user": () => [type($("#username"), quoted()[0]), type($("#password"), quoted()[1]), click(submit())],
})
