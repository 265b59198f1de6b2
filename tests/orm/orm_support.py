"""Synthetic labelled trajectories for the ORM tests (tests/orm is on sys.path: no __init__.py).

Each trajectory is a shop task: search, open a product, add it to the cart, check out, exit. Whether the
order went through shows only on the final page, in one of a few phrasings per outcome; the action histories
of both outcomes come from the same templates. Product names, element ids and filler elements vary, so a
model must read the page's status to beat the majority class.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from cli_support import webrl

from webrl.orm.data import Example

PRODUCTS = [
    "red hiking boots",
    "blue ceramic mug",
    "wireless mouse",
    "oak bookshelf",
    "yoga mat",
    "steel kettle",
    "wool scarf",
    "desk lamp",
    "running socks",
    "garden hose",
    "phone case",
    "travel pillow",
]
SUCCESS = [
    "Thank you for your purchase! Your order is confirmed.",
    "Order placed successfully.",
    "Your order has been received and will ship soon.",
]
FAILURE = [
    "Sorry, this product is out of stock.",
    "Payment failed: your card was declined.",
    "Error: the cart is empty.",
]

# What an in-process engine put into os.environ: a child must build its own process group.
DIST_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
# 32 optimizer steps of 4 examples at a high learning rate: enough for tiny to read the final page's status.
# a constant rate: 32 steps at 2e-3 teach tiny the synthetic labels (the default cosine's mean rate is half that)
TRAIN_ARGS = [
    "--lr",
    "2e-3",
    "--lr-schedule",
    "constant",
    "--epochs",
    "2",
    "--micro-batch-size",
    "4",
    "--precision",
    "fp32",
]


def cli_env(tmp: Path) -> dict[str, str]:
    """This environment for a child: its own process group and state dir, one thread."""
    env = {k: v for k, v in os.environ.items() if k not in DIST_ENV and not k.startswith("WEBRL_")}
    return env | {"WEBRL_STATE_DIR": str(tmp / "state"), "OMP_NUM_THREADS": "1", "COLUMNS": "200"}


def orm_cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """`webrl orm ARGS` as a user runs it, with a private state dir under `tmp`."""
    return webrl(cli_env(tmp), "orm", *args, timeout=600)


def page(rng: random.Random, status: str) -> str:
    """A final page in the simplified-HTML style: a header, filler links, the status message, a footer."""
    links = " ".join(
        f'<a id="{rng.randint(1, 99)}" data-bbox="{rng.randint(0, 900)},{rng.randint(0, 600)},80,16">'
        f"{rng.choice(PRODUCTS)}</a>"
        for _ in range(rng.randint(2, 6))
    )
    return (
        f'<html> <body> <div id="1" data-text="One Stop Market"> One Stop Market </div> {links} '
        f'<div data-text="{status}"> {status} </div> <span> Copyright 2024 </span> </body> </html>'
    )


def responses(rng: random.Random, product: str) -> tuple[str, ...]:
    steps = [
        f'# Element: the search box\ndo(action="Search", argument="{product}", element="{rng.randint(2, 9)}")',
        f'# Element: the link to the {product}\ndo(action="Click", element="{rng.randint(10, 40)}")',
        f'do(action="Click", element="{rng.randint(10, 40)}")',
        'exit(message="")',
    ]
    return tuple(steps[:2] + steps[2:3] * rng.randint(1, 2) + steps[3:])


def synthetic_examples(count: int, seed: int, success_rate: float = 0.4) -> list[Example]:
    """`count` labelled trajectories; about `success_rate` of them succeed. Sites alternate between the shop and
    its admin so that per-site scores have two columns."""
    rng = random.Random(seed)
    examples = []
    for index in range(count):
        product, label = rng.choice(PRODUCTS), int(rng.random() < success_rate)
        status = rng.choice(SUCCESS if label else FAILURE)
        examples.append(
            Example(
                intent=f"Buy a {product} and check out",
                responses=responses(rng, product),
                html=page(rng, status),
                label=label,
                task_id=index,
                sites=("shopping",) if index % 3 else ("shopping_admin",),
                source=f"synthetic-{seed}",
            )
        )
    return examples
