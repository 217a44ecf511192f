"""Writes the flag list that pipescope's CI checks `export megatron` against.

Run from a Megatron-LM checkout with torch importable (a CPU build is enough):

    PYTHONPATH=/path/to/Megatron-LM python tests/megatron/dump_flags.py COMMIT DATE > tests/megatron/flags.txt

It builds the parser exactly as `megatron.training.arguments.parse_args` does and prints one
line per option string: the flag, then `switch` (takes no value), or the value's type, `list`
when it takes several values, and the allowed choices in braces.
"""

import argparse
import enum
import sys

from megatron.training.arguments import add_megatron_arguments


def kind(action):
    if action.nargs == 0:
        return "switch"
    name = getattr(action.type, "__name__", None) or "str"
    if name not in ("int", "float", "str"):
        name = "str"
    if action.nargs in ("+", "*") or isinstance(action.nargs, int) and action.nargs > 1:
        name = f"list({name})"
    if action.choices is not None:
        # Enum choices are given on the command line by their names (`flash`).
        names = (c.name if isinstance(c, enum.Enum) else str(c) for c in action.choices)
        name += " {" + ",".join(names) + "}"
    return name


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else "unknown"
    date = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    parser = add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False))
    print(f"# Megatron-LM {commit}: megatron/training/arguments.py, add_megatron_arguments")
    print(f"# commit of {date}, written by tests/megatron/dump_flags.py")
    print("# flag, then `switch` (no value) or the value's type; choices in braces")
    lines = set()
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--"):
                lines.add(f"{option} {kind(action)}")
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
