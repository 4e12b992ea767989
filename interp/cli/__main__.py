"""``python -m interp.cli``: the command line, as ``interp`` (torchrun starts its workers this way)."""

from interp.cli import main

if __name__ == "__main__":
    main()
