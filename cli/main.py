"""The `webrl` command: global options, the command groups, and the exit-code contract
(0 ok, 1 runtime failure, 2 usage or input error; one error line, a traceback only with --debug)."""

from __future__ import annotations

import errno
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import click
import typer
from rich.console import Console
from rich.markup import escape

from webrl.cli.global_options import GLOBALS
from webrl.errors import WebrlError

app = typer.Typer(
    name="webrl",
    help="Train and evaluate LLM web agents with self-evolving curriculum RL (WebRL) on WebArena-Lite sites.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # help texts use literal [default: ...] brackets
)
err_console = Console(stderr=True, soft_wrap=True)  # an error stays one line
# click's exceptions, and the copies of them that typer raises since it vendors click (0.20 on)
BAD_USAGE = tuple({click.ClickException, getattr(typer, "TyperException", click.ClickException)})
ABORTED = tuple({click.exceptions.Abort, typer.Abort})
EXITED = tuple({click.exceptions.Exit, typer.Exit})
# A full disk, a read-only file system or a folder the user may not write: a state the user fixes (exit 2), not a
# fault; each with what to do about it.
STORAGE_ERRORS = {
    errno.ENOSPC: "free some space there or choose another folder",
    errno.EDQUOT: "free some of your disk quota or choose another folder",
    errno.EROFS: "choose a folder on a writable file system",
    errno.EACCES: "check its permissions or choose another folder",
}


@app.callback()
def main(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="YAML or TOML settings file; WEBRL_* variables and flags override it.",
            dir_okay=False,
        ),
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where pid files, logs, databases and snapshots live [default: the user data dir, "
            "e.g. ~/.local/share/webrl; env WEBRL_STATE_DIR].",
            file_okay=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
) -> None:
    GLOBALS.config_file, GLOBALS.state_dir = config, state_dir
    GLOBALS.debug = debug or GLOBALS.debug


def _register() -> None:
    from webrl.cli import doctor, evaluation, images, models, orm, serve, sites, tasks, train

    sites.register(app)
    images.register(app)
    evaluation.register(app)
    serve.register(app)
    tasks.register(app)
    models.register(app)
    train.register(app)
    orm.register(app)
    doctor.register(app)


_register()


def no_accelerator_notice() -> None:
    """DeepSpeed announces on stdout, as it is imported, that it found no GPU; transformers imports it (through
    accelerate, which PEFT needs) whenever a model loads, so every command that loads one would print it. The
    filter stays on the logger DeepSpeed configures when it creates it."""
    logging.getLogger("DeepSpeed").addFilter(
        lambda record: not record.getMessage().startswith("Setting accelerator to CPU")
    )


def run() -> None:
    """Console-script entry point."""
    GLOBALS.debug = "--debug" in sys.argv or os.environ.get("WEBRL_DEBUG") == "1"
    no_accelerator_notice()
    try:
        result = app(standalone_mode=False)  # returns the exit code of typer.Exit / --help
    except ABORTED:
        err_console.print("aborted")
        sys.exit(130)
    except BAD_USAGE as err:  # bad flags or arguments: click's message, on one line like every other error
        ctx = getattr(err, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        print_error(f"{err.format_message()}{hint}")
        sys.exit(2)
    except EXITED as err:
        sys.exit(err.exit_code)
    except WebrlError as err:
        if GLOBALS.debug:
            raise
        print_error(str(err))
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as err:
        if err.errno not in STORAGE_ERRORS or GLOBALS.debug:
            unexpected(err)
        print_error(storage_message(err))
        sys.exit(2)
    except Exception as err:
        unexpected(err)
    sys.exit(result if isinstance(result, int) else 0)


def print_error(message: str) -> None:
    """One error line; the message as it is (a `[cluster]` in it is text, not console markup)."""
    err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False)


def storage_message(err: OSError) -> str:
    """'PATH: No space left on device (what to do)'; the writers of files name the path where the OS does not
    (webrl.files.writing)."""
    if err.filename is None:
        return f"{err.strerror} (run with --debug to see where)"
    return f"{err.filename}: {err.strerror} ({STORAGE_ERRORS[err.errno]})"


def unexpected(err: Exception) -> NoReturn:
    """A bug or an unexpected environment fault: still one line by default, the traceback with --debug."""
    if GLOBALS.debug:
        raise err
    print_error(f"unexpected {type(err).__name__}: {err} (run with --debug for details)")
    sys.exit(1)


if __name__ == "__main__":
    run()
