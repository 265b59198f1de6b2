"""Templates check the task, not the text: over the whole suite, no check can be met by the text a task dictates or
by text the agent can set instead of doing the task, and the three attacks below score 0 on every template
they apply to, played through the real harness:

- wrong forum: the dictated post made in another forum, the comment on another post (the body of a create_post task
  names its forum: /f/nyc was found in a post made in /f/AskReddit);
- edit instead of delete: the item's text edited to what the check looks for (task 308's review);
- dictated text: a required string inside a text the task dictates."""

from __future__ import annotations

import re

import pytest

from webrl.env.actions import parse_action

QUOTED = re.compile(r'"([^"]+)"')


def dictated(task) -> list[str]:
    """What the task asks the agent to write: the quoted texts of its intent and every text its solution types,
    searches or selects."""
    typed = [parse_action(step, "webrl").argument for step in task.cheat or []]
    return [*QUOTED.findall(task.intent), *(t for t in typed if t)]


def required(target) -> list[str]:
    """The strings a target looks for (a must_include finds them inside any longer text; an exact_match does not)."""
    return [alt for item in target.required_contents.must_include or [] for alt in item.split(" |OR| ")]


def test_no_check_is_met_by_text_the_task_dictates(suite):
    """A required string inside a dictated text (not the text itself) is found wherever that text is written: in
    another forum, in the wrong field. A target that reads the whole page finds any text the agent set on it."""
    found = set()
    for task in suite:
        if "program_html" not in task.eval.eval_types:
            continue
        texts = dictated(task)
        for index, target in enumerate(task.eval.program_html):
            if not target.locator.strip():
                found.add(f"{task.template}: target {index} reads the whole page")
            for needed in required(target):
                inside = [t for t in texts if needed != t and needed.lower() in t.lower()]
                if inside:
                    found.add(
                        f"{task.template}: target {index} needs {needed!r}, which the task dictates in {inside[0]!r}"
                    )
    assert not found, "\n".join(sorted(found))


# template -> its intent's container value (the forum, the post), the other container's page (None: it is named in
# an argument of the solution, which is swapped instead)
CONTAINERS = {
    "reddit.create_post": ("forum", lambda forum: f"__REDDIT__/f/{forum}"),
    "multi.gitlab_reddit.share_repo": ("forum", None),
    "multi.gitlab_reddit.share_repo_last_commit": ("forum", None),
    "reddit.comment_on_post": ("title", None),
}
# the attacks were found on these: "post in the nyc forum" passed from /f/AskReddit; "delete the review" by editing it
FOUND_ON = (721, 308)
# template -> the text field of the item and the button that saves it (an edit the check must not take for deletion)
EDITS = {"shopping_admin.delete_review": ("Review", "Save Review")}


def in_another(task, key: str, other: str, page_of):
    """The task's own solution carried out in another container: started on that container's page after the step
    that entered the task's own, or with the container's name swapped where a step names it."""
    name = task.instantiation_dict[key]
    entered = [i for i, step in enumerate(task.cheat) if f'element="{{{name}}}"' in step]
    if entered and page_of is not None:
        return task.model_copy(update={"start_url": page_of(other), "cheat": task.cheat[entered[-1] + 1 :]})
    return task.model_copy(update={"cheat": [step.replace(name, other) for step in task.cheat]})


def edited_instead(task, field: str, save: str):
    """The solution up to the deletion, then the item's text edited to every string the check needs, and saved."""
    from webrl.tasks.script import click, done, type_

    delete = next(i for i, step in enumerate(task.cheat) if "Delete" in step)
    needed = " ".join(s for target in task.eval.program_html for s in required(target))
    return task.model_copy(update={"cheat": [*task.cheat[:delete], type_(field, needed), click(save), done()]})


@pytest.mark.slow  # the attacks and the honest solutions on the real sites (~1 min)
def test_the_attacks_score_0_on_every_template_they_apply_to(suite, site_servers, run_oracle):
    by_template = {}
    for task in sorted(suite, key=lambda t: (t.task_id not in FOUND_ON, t.task_id)):  # those tasks first
        by_template.setdefault(task.template, []).append(task)
    deleting = {t.template for t in suite if t.intent.startswith(("Delete", "Remove"))}
    assert deleting == set(EDITS), "a template that deletes: add its edit form to EDITS"
    attacks, honest = {}, {}
    for template, (key, page_of) in CONTAINERS.items():
        task, *others = by_template[template]
        values = (
            [t.instantiation_dict[key] for t in suite if t.template == "reddit.create_post"] if key == "forum" else []
        )
        values += [t.instantiation_dict[key] for t in others]
        other = next(v for v in values if v != task.instantiation_dict[key])
        attacks[f"{template} in {other}"] = in_another(task, key, other, page_of)
        honest[template] = task
    for template, (field, save) in EDITS.items():
        task = by_template[template][0]
        attacks[f"{template} edited"] = edited_instead(task, field, save)
        honest[template] = task
    # one at a time, each from a fresh site: an attack's leftovers never meet another task
    backend = site_servers("shopping", "shopping_admin", "reddit", "gitlab")
    scores = {}
    for name, task in {**attacks, **{f"{k} (honest)": t for k, t in honest.items()}}.items():
        backend.reset()
        row = run_oracle(backend, [task])[task.task_id]
        scores[name] = row["score"]
        assert all(s["error"] is None for s in row["steps"]), (
            name,
            [(s["response"], s["error"]) for s in row["steps"]],
        )
    assert scores == {name: 0.0 if name in attacks else 1.0 for name in scores}, scores


# templates whose check reads the page the agent ended on, and why another container's page does not pass it
AGENT_PAGE = {
    "gitlab.create_issue": "the issue page's path names its project",
    "shopping.write_review": "the review is read from the shop's REST API by the product's SKU",
    "map.place_page": "the place's page names it by its id",
    "map.directions_form": "the route's distance is checked, which only those two places give",
}


def test_every_check_of_the_agents_own_page_is_attacked_or_says_why(suite):
    """Where the checked page is the one the agent ended on (`last`, `__last_url__`), a post made in the wrong forum
    would be read as the task's: each such template is attacked above, or checks what its page is."""
    own_page = {
        t.template
        for t in suite
        if "program_html" in t.eval.eval_types
        and (t.eval.program_html[0].url == "last" or "__last_url__" in t.eval.program_html[0].url)
    }
    assert own_page <= set(CONTAINERS) | set(AGENT_PAGE), own_page - set(CONTAINERS) - set(AGENT_PAGE)
