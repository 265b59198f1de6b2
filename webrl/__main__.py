"""`python -m webrl` is the `webrl` command."""

from webrl.cli.main import run

run()
