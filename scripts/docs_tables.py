"""The docs' generated tables: numbers from the benches' stamped result files (bench/results/*.json) and settings
from the settings models, so that no page holds a number or a default typed by hand.

A page asks for a table with a marker line; this script writes the table below it, up to an end marker:

    <!-- table: NAME[/VIEW] -->       bench/results/NAME.json, drawn by the renderer of its "bench" field
    <!-- settings: MODULE:CLASS [PREFIX] -->   every field of a settings model: key, default, description
    <!-- options: MODULE:CLASS -->   the command options a settings model gives (its fields' `option` names)
    <!-- memory: MODEL ... -->   the memory plan (webrl.rl.memory) of a phase's update for these models of LLAMA_31
    <!-- end -->

It also draws the figures in FIGURES (SVG, from result files the same way).

    .venv/bin/python scripts/docs_tables.py            # rewrite the generated blocks of docs/*.md and README.md
    .venv/bin/python scripts/docs_tables.py --check    # exit 1 naming each page whose blocks differ (tests run it)
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from webrl.layered_settings import field_extra, option_name
from webrl.provenance import portable_command
from webrl.rl.memory import PUBLISHED_SHAPES, plan
from webrl.rl.settings import LoraSettings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
BLOCK = re.compile(r"^<!-- (table|settings|options|memory): (.+?) -->\n(.*?)^<!-- end -->$", re.M | re.S)
MARKER = re.compile(r"^<!-- (table|settings|options|memory): ", re.M)
ENVIRONMENT_COLUMNS = ("demonstrated envs", "new envs")
OUTCOME = {True: "holds", False: "fails", None: "not measured yet"}  # a gate's outcome in words
LEARNING_GOAL = 10.0  # the pre-registered headline: the interval's lower bound above +10 points


def stamp_line(name: str, result: dict) -> str:
    """Where a table's numbers come from: the file, its commit and date, the machine and the command; for a file
    combined from several (bench/learning.py --summarize A B), each source's stamp and the runs it measured."""
    summarized = f"; summarized at commit `{result['summarized_by']}`" if result.get("summarized_by") else ""
    if result.get("sources"):
        sources = " and ".join(f"{stamp_words(source)} ({len(source['runs'])} runs)" for source in result["sources"])
        return f"*From `bench/results/{name}.json`, combined from {sources}{summarized}.*"
    return f"*From `bench/results/{name}.json`: {stamp_words(result)}{summarized}.*"


def stamp_words(stamp: dict) -> str:
    """A stamp in words: commit, date, machine, load and the command."""
    machine = f"{stamp['machine']}, " if stamp.get("machine") else ""
    # a file stamped before provenance wrote its paths portable reads as one stamped now
    command = f"; `{portable_command(stamp['command'], ROOT)}`" if stamp.get("command") else ""
    load = f"{stamp['cores']} cores at load {stamp['load_1min']}"
    return f"commit `{stamp['commit']}`, {stamp['date'][:10]}, {machine}{load}{command}"


def markdown_table(headings: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def mean_std(values: list[float], sign: str = "") -> str:
    """Mean ± std; one value alone, since it has no spread to show. sign="+" writes gains as +2.1 / -1.5."""
    mean = f"{statistics.mean(values):{sign}.1f}"
    return f"{mean} ± {statistics.stdev(values):.1f}" if len(values) > 1 else mean


def oracle_success(row: dict) -> str:
    """Successes over judged episodes, and how many needed an LLM judge the bench does not run."""
    unjudged = f" ({len(row['unjudged'])} unjudged)" if row["unjudged"] else ""
    return f"{row['success']}/{row['judged']}{unjudged}"


def throughput(result: dict, view: str) -> str:
    tables = []
    for task_set, by_workers in result["workers"].items():
        base = by_workers[min(by_workers, key=int)]["steps_per_s"]
        rows = [
            [
                w,
                f"{r['steps_per_s']:.2f}",
                f"{r['episodes_per_s']:.2f}",
                oracle_success(r),
                f"{r['steps_per_s'] / base:.2f}",
            ]
            for w, r in by_workers.items()
        ]
        headings = ["workers", "oracle steps/s", "episodes/s", "oracle success (judged)", "ratio vs 1 worker"]
        tables.append(f"**{task_set}**\n\n" + markdown_table(headings, rows))
    return "\n\n".join(tables)


def step(result: dict, view: str) -> str:
    rows = [[part, f"{n['median_ms']:.0f} ms", f"{n['p90_ms']:.0f} ms"] for part, n in result["parts"].items()]
    return markdown_table(["part of a step", "median", "p90"], rows) + f"\n\nover {result['steps']} steps"


def reset(result: dict, view: str) -> str:
    rows = [
        [
            site,
            "no-op" if n["database_kib"] is None else f"{n['database_kib']:,.0f} KiB",
            f"{n['restore_median_ms']:.1f} ms",
            f"{n['restore_p90_ms']:.1f} ms",
            f"{n['round_trip_median_ms']:.1f} ms",
            f"{n['exact']}/{n['rounds']}",
        ]
        for site, n in result["sites"].items()
    ]
    headings = ["site", "database", "restore median", "restore p90", "round trip median", "exact after reset"]
    return markdown_table(headings, rows)


def cluster(result: dict, view: str) -> str:
    rows = [
        [
            r["executor"],
            f"{r['workers']} × {r['slots']}",
            f"{r['wall_s']:.1f} s",
            f"{r['episodes_per_s']:.2f}",
            f"{r['mb']:,.0f} MB",
            f"{r['ready_s']:.1f} s" if "ready_s" in r else "–",
            f"{r['ratio']:.2f} / {r['ratio_after_start']:.2f}" if "ratio" in r else "–",
        ]
        for r in result["rows"]
    ]
    headings = ["executor", "workers × slots", "wall", "episodes/s", "memory", "workers ready"]
    headings.append("vs local (after start)")
    return markdown_table(headings, rows) + f"\n\n{result['episodes']} oracle episodes of `{result['tasks']}` a row"


def before_after(result: dict, view: str) -> str:
    means = result["means"]
    rows = [
        [name, f"{means['before'][name]:.3g}", f"{after:.3g}", f"{after / means['before'][name]:.2f}"]
        for name, after in means["after"].items()
    ]
    rounds = len(result["rounds"]["after"])
    title = f"before `{result['before']['commit']}`, after `{result['commit']}`, mean of {rounds} alternating rounds"
    return f"{title}\n\n" + markdown_table(["number", "before", "after", "after / before"], rows)


def demo(result: dict, view: str) -> str:
    """The README's demo, phase by phase: held-out success over all environments, the demonstrated and the new ones."""
    rows = [
        [
            "0: SFT" if row["phase"] == 0 else str(row["phase"]),
            f"{row['Average']:.1f}%",
            *(f"{row[c]:.1f}%" for c in ENVIRONMENT_COLUMNS),
        ]
        for row in result["phases"]
    ]
    table = markdown_table(["phase", "held-out success", *ENVIRONMENT_COLUMNS], rows)
    took = f"The run took {result['minutes']} min, start to end, on {result['cores']} cores of an {result['machine']}."
    return f"{table}\n\n{took}"


def learning(result: dict, view: str) -> str:
    """headline: per arm, the gain over SFT on the held-out non-trivial environments (mean over runs, 95% interval,
    runs above 0) and the paired difference; demonstrated: the same on the demonstrated non-trivial environments;
    gates: G1-G3 as measured; runs: every (split, seed) row; environments: every environment's rates by role;
    verdict: the README's first-screen list, the headline and the gates in words."""
    if view == "gates":
        rows = []
        for gate, measured in result.get("gates", {}).items():
            values = "; ".join(
                f"{k.replace('_', ' ')}: {', '.join(f'{v:.1f}' for v in vals)}"
                for k, vals in measured.items()
                if k != "holds" and vals
            )
            outcome = OUTCOME[measured["holds"]].replace("fails", "**fails**")
            rows.append([gate, outcome, values or "–"])
        return markdown_table(["gate", "outcome", "measured (per run, %; G3: points between seeds of a split)"], rows)
    if view == "environments":
        return learning_environments(result)
    if view == "verdict":
        return learning_verdict(result)
    if view == "runs":
        arms = result["arms"]
        rows = []
        for split, seeds in result["runs"].items():
            for seed, run in seeds.items():
                cells = [f"{success_rate(run[a], run['held_out']):.1f}" if a in run else "–" for a in arms]
                rows.append([split, seed, ", ".join(run["held_out"]), *cells])
        return markdown_table(["split", "seed", "held-out environments", *arms], rows)
    scope, key = ("demonstrated", "summary_demonstrated") if view == "demonstrated" else ("held-out", "summary")
    if key not in result:
        return "*Not summarized yet: `python bench/learning.py --summarize bench/results/learning.json` adds it.*"
    rows = []
    for name, summary in result[key].items():
        if summary:
            low, high = summary["ci95"]
            above = f"{summary['runs_above_zero']} of {summary['runs']}"
            rows.append([name, f"**{summary['mean']:+.1f}**", f"[{low:+.1f}, {high:+.1f}]", above])
    if not rows:
        return f"*No arm beyond SFT has finished a run yet ({len(result['runs'])} split(s) with an SFT actor).*"
    return markdown_table([f"{scope} non-trivial environments", "mean (points)", "95% interval", "runs above 0"], rows)


def learning_verdict(result: dict) -> str:
    """The headline in words: is the pre-registered goal met (an arm's lower bound above LEARNING_GOAL and every run
    above 0), each summary with its interval, the demonstrated view (not pre-registered) and the gates' outcomes."""
    if not result.get("summary") or not any(result["summary"].values()):
        return "*No arm beyond SFT has finished a run yet.*"

    def said(summaries: dict) -> str:
        return "; ".join(
            f"{name.removeprefix('gain ')} {s['mean']:+.1f} points [{s['ci95'][0]:+.1f}, {s['ci95'][1]:+.1f}] "
            f"({s['runs_above_zero']} of {s['runs']} runs above 0)"
            for name, s in summaries.items()
            if s
        )

    gains = {name: s for name, s in result["summary"].items() if name.startswith("gain ") and s}
    met = [
        name.removeprefix("gain ")
        for name, s in gains.items()
        if s["ci95"][0] > LEARNING_GOAL and s["runs_above_zero"] == s["runs"]
    ]
    runs = next(iter(gains.values()))["runs"]
    seeds = sorted({len(per_split) for per_split in result["runs"].values()})
    each = f"{seeds[0]} seed{'s' * (seeds[0] > 1)}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]} seeds"
    splits = f"{len(result['runs'])} split{'s' * (len(result['runs']) > 1)}"
    goal = f"met by {', '.join(met)}" if met else "**not met** by any arm"
    gates = ", ".join(f"{gate} {OUTCOME[measured['holds']]}" for gate, measured in result.get("gates", {}).items())
    lines = [
        f"- The pre-registered goal (lower bound above +{LEARNING_GOAL:.0f} points, every run above 0) is {goal}.",
        f"- The gain over SFT on the held-out non-trivial environments, with its 95% interval, over {runs} runs "
        f"({splits} of the environments, {each} each): {said(result['summary'])}.",
    ]
    if demonstrated := said(result.get("summary_demonstrated", {})):
        lines.append(
            "- The same on the demonstrated non-trivial environments (a view added after the first runs, not "
            f"pre-registered): {demonstrated}."
        )
    return "\n".join([*lines, f"- Gates: {gates}."])


def learning_environments(result: dict) -> str:
    """Per environment and role (held out, or demonstrated), success (%) after SFT and after each arm's last phase,
    over the runs where it had that role: where the gains and losses come from."""
    arms = result["arms"]
    nontrivial = [e for envs in result["families"].values() for e in envs]
    rows = []
    for env in [*nontrivial, *result["position_prior"]]:
        for role in ("held out", "demonstrated"):
            runs = [
                run
                for seeds in result["runs"].values()
                for run in seeds.values()
                if (env in run["held_out"]) == (role == "held out") and all(a in run for a in arms)
            ]
            if runs:
                cells = [f"{statistics.mean(success_rate(run[a], [env]) for run in runs):.0f}" for a in arms]
                rows.append([env, role, str(len(runs)), *cells])
    return markdown_table(["environment", "role", "runs", *arms], rows)


def success_rate(outcomes: dict[str, str], envs: list[str]) -> float:
    """Success (%) over the episodes of `envs` (outcome strings of bench/learning.py)."""
    values = [c == "1" for env in envs for c in outcomes.get(env, "")]
    return 100 * sum(values) / len(values) if values else float("nan")


def compare(result: dict, view: str) -> str:
    curves = result["curves"]
    phases = max(len(c) for runs in curves.values() for c in runs)
    rows = []
    for arm, runs in curves.items():
        cells = [mean_std([c[k] for c in runs]) if all(len(c) > k for c in runs) else "–" for k in range(phases)]
        rows.append([arm, str(len(runs)), *cells, f"**{mean_std([c[-1] for c in runs])}**"])
    return markdown_table(["arm", "seeds", *(f"phase {k}" for k in range(phases)), "final"], rows)


def printed_table(result: dict, view: str) -> str:
    """A bench's table as it printed it (bench/stamp.py's table_numbers)."""
    rows = [[cell.replace("|", "\\|") for cell in row] for row in result["rows"]]
    return f"{result['title']}\n\n" + markdown_table(result["columns"], rows)


RENDERERS: dict[str, Callable[[dict, str], str]] = {
    "table": printed_table,
    "throughput": throughput,
    "step": step,
    "reset": reset,
    "cluster": cluster,
    "before_after": before_after,
    "compare": compare,
    "demo": demo,
    "learning": learning,
}


def table_block(spec: str) -> str:
    name, _, view = spec.partition("/")
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        return f"*Not measured yet: `bench/results/{name}.json` does not exist (run the bench above).*"
    result = json.loads(path.read_text())
    return RENDERERS[result["bench"]](result, view) + "\n\n" + stamp_line(name, result)


def svg_figure(draw: Callable, size: tuple[float, float]) -> str:
    """A figure drawn by `draw(panel)` on one panel, as SVG text."""
    import io

    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    # Text as text and fixed ids: the same result file gives the same SVG bytes, so --check can compare them.
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "webrl", "font.size": 9})
    figure, panel = plt.subplots(figsize=size)
    draw(panel)
    figure.tight_layout()
    svg = io.StringIO()
    figure.savefig(svg, format="svg", metadata={"Date": None})
    plt.close(figure)
    return svg.getvalue()


def figure_title(name: str, result: dict, separator: str = ": ") -> str:
    """What a figure shows, then the stamp of its result file."""
    sources = result.get("sources") or [result]
    machine = f", {result['machine']}" if result.get("machine") else ""
    commits = list(dict.fromkeys(source["commit"] for source in sources))
    days = sorted({source["date"][:10] for source in sources})
    when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    stamp = f"commit{'s' * (len(commits) > 1)} {', '.join(commits)}, {when}, {result['cores']} cores{machine}"
    return f"{name}{separator}{stamp}"


def demo_figure(result: dict) -> str:
    """The README's demo, held-out success by phase: all environments, the demonstrated and the new ones; the stamp
    in the title."""

    def draw(panel) -> None:
        phases = [row["phase"] for row in result["phases"]]
        for column, label, width in (("Average", "all environments", 2.5), *((c, c, 1) for c in ENVIRONMENT_COLUMNS)):
            panel.plot(phases, [row[column] for row in result["phases"]], marker="o", linewidth=width, label=label)
        panel.set_xticks(phases, ["SFT", *(str(k) for k in phases[1:])])
        panel.set_xlabel("phase")
        panel.set_ylabel("held-out success (%)")
        panel.set_ylim(0, 100)
        panel.grid(alpha=0.3)
        panel.legend(frameon=False, loc="lower right")
        panel.set_title(figure_title("cpu-demo", result))

    return svg_figure(draw, (6, 3.3))


def learning_figure(result: dict) -> str:
    """The learning benchmark's headline: per arm (and the paired difference), each run's gain over SFT on the
    held-out non-trivial environments as a dot, the mean over runs and its 95% interval as a bar, beside 0 and
    the pre-registered goal."""
    rows = [(name, summary) for name, summary in result.get("summary", {}).items() if summary]

    def draw(panel) -> None:
        for y, (name, summary) in enumerate(reversed(rows)):
            low, high = summary["ci95"]
            panel.plot([low, high], [y, y], color="C0", linewidth=2.5, solid_capstyle="butt")
            panel.plot([summary["mean"]], [y], marker="D", color="C0", markersize=7)
            runs = summary.get("per_run", [])
            offsets = [0.18 * ((k % 3) - 1) for k in range(len(runs))]  # runs on one gain stay apart
            panel.scatter(runs, [y + 0.25 + o / 3 for o in offsets], s=14, color="C1", alpha=0.8, zorder=3)
        panel.axvline(0, color="black", linewidth=0.8)
        panel.axvline(LEARNING_GOAL, color="C2", linestyle="--", linewidth=1, label=f"goal: +{LEARNING_GOAL:g}")
        panel.set_yticks(range(len(rows)), [name for name, _ in reversed(rows)])
        panel.set_ylim(-0.6, len(rows) - 0.2)
        panel.set_xlabel("held-out non-trivial success, points against the SFT actor")
        panel.plot([], [], marker="D", color="C0", linewidth=2.5, label="mean, 95% interval")
        panel.scatter([], [], s=14, color="C1", label="one run (split, seed)")
        panel.grid(axis="x", alpha=0.3)
        panel.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=8)
        runs = max((summary["runs"] for _, summary in rows), default=0)
        panel.set_title(figure_title(f"learning benchmark, {runs} run{'s' * (runs != 1)}", result, "\n"), fontsize=9)

    return svg_figure(draw, (6, 0.6 * len(rows) + 2.0))


# A figure of the docs: its file, the result file it is drawn from, and how.
FIGURES: dict[Path, tuple[str, Callable[[dict], str]]] = {
    ROOT / "docs" / "demo-curve.svg": ("demo", demo_figure),
    ROOT / "docs" / "learning-gains.svg": ("learning", learning_figure),
}


def type_name(annotation: object) -> str:
    """A field's type as a reader writes it: int, a | b for choices, list[str], ... or nothing."""
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(str(a) for a in typing.get_args(annotation))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in typing.get_args(annotation) if a is not type(None))
    return getattr(annotation, "__name__", str(annotation)).replace("typing.", "")


def default_cell(field) -> str:
    if "shown" in field_extra(field):  # a default the command fills in (its description says which)
        return field_extra(field)["shown"]
    if field.is_required():
        return "required"
    default = field.get_default(call_default_factory=True)
    if isinstance(default, Path):  # the user's data folder: the same page on every machine
        default = str(default).replace(str(Path.home()), "~")
    return "–" if default is None or default == {} else f"`{json.dumps(default, default=str)}`"


def cell_text(text: str | None) -> str:
    return (text or "").replace("\n", " ").replace("|", "\\|")


def settings_rows(model: type[BaseModel], prefix: str) -> list[list[str]]:
    rows = []
    for key, field in model.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            rows += settings_rows(nested, f"{prefix}{key}.")
            continue
        if option_name(key, field) is None or not field_extra(field).get("in_file", True):  # the run's, or option only
            continue
        rows.append(
            [f"`{prefix}{key}`", type_name(field.annotation), default_cell(field), cell_text(field.description)]
        )
    return rows


def option_rows(model: type[BaseModel]) -> list[list[str]]:
    rows = []
    for key, field in model.model_fields.items():
        option = option_name(key, field)
        if option is not None:
            flag = f"`--{option.replace('_', '-')}`"
            rows.append([flag, type_name(field.annotation), default_cell(field), cell_text(field.description)])
    return rows


def model_named(target: str) -> type[BaseModel]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def settings_block(spec: str) -> str:
    target, _, prefix = spec.partition(" ")
    return markdown_table(["setting", "type", "default", "what it does"], settings_rows(model_named(target), prefix))


def options_block(spec: str) -> str:
    return markdown_table(["option", "type", "default", "what it does"], option_rows(model_named(spec)))


PLAN_TOKENS = 16384  # the paper preset's micro-batches: one prompt and answer at the official token limit
PLAN_STAGES = ((0, False), (1, False), (2, False), (3, False), (3, True))  # (ZeRO stage, offload)


def memory_block(spec: str) -> str:
    """Peak GiB per GPU of a phase's update (the larger of its actor's and critic's) with the paper preset's update
    settings (gradient checkpointing, micro-batches of PLAN_TOKENS), fully and with rank-16 LoRA."""
    rows = []
    for name in spec.split():
        for gpus in (1, 2, 4, 8):
            for method, lora in (("full", LoraSettings()), ("LoRA r=16", LoraSettings(rank=16))):
                peaks = [
                    plan(PUBLISHED_SHAPES[f"meta-llama/{name}"], lora, stage, gpus, PLAN_TOKENS, True, offload)
                    for stage, offload in PLAN_STAGES
                ]
                rows.append(
                    [name, str(gpus), method, *(f"{max(t.total for t in p.values()) / 2**30:.0f}" for p in peaks)]
                )
    stages = [f"ZeRO-{stage}" + (" + offload" if offload else "") for stage, offload in PLAN_STAGES]
    return markdown_table(["model", "GPUs", "training", *stages], rows)


def render(text: str) -> str:
    """`text` with every generated block made anew."""

    def fill(match: re.Match) -> str:
        kind, spec = match.group(1), match.group(2)
        blocks = {"table": table_block, "settings": settings_block, "options": options_block, "memory": memory_block}
        body = blocks[kind](spec)
        return f"<!-- {kind}: {spec} -->\n{body}\n<!-- end -->"

    return BLOCK.sub(fill, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page's blocks differ")
    parser.add_argument("pages", nargs="*", type=Path, default=list(PAGES))
    args = parser.parse_args(argv)
    stale = []
    for figure, (name, draw) in FIGURES.items():
        if not (RESULTS / f"{name}.json").is_file():  # not measured yet: the pages say so where they use it
            continue
        made = draw(json.loads((RESULTS / f"{name}.json").read_text()))
        if not figure.is_file() or figure.read_text() != made:
            stale.append(figure)
            if not args.check:
                figure.write_text(made)
    for page in args.pages:
        text = page.read_text()
        if len(MARKER.findall(text)) != len(BLOCK.findall(text)):
            print(f"{page}: a table or settings marker without its `<!-- end -->` line", file=sys.stderr)
            return 2
        made = render(text)
        if made != text:
            stale.append(page)
            if not args.check:
                page.write_text(made)
    if args.check and stale:
        for page in stale:
            what = "figure" if page.suffix == ".svg" else "table"
            print(f"{page}: a generated {what} differs from what scripts/docs_tables.py makes of it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
