"""The `webrl` command line (Typer + rich): thin commands that parse, call the library and print."""
