"""The `interp` command line: each command parses, builds a config, makes one library call, formats.

Options shared by commands come in groups (:mod:`interp.cli.options`), each
a decorator: ``data`` (--task, --data-file, --data-dir, --skip-checksums),
``sample`` (--splits, --max-examples, --max-per-split, --seed), ``run``
(--batch-size, --device, --wordpiece, --backend, --quiet), ``model``
(--model, --label-map), ``output`` (--out, --overwrite) and ``settings``, any
options gathered into one dict of a config's own fields. A command receives
a group as the library's spec object (``data``, ``sample``, ``run``:
:mod:`interp.api.specs`) and passes it on as it is; none takes more than a
dozen parameters.

Errors from the library (:class:`interp.core.errors.InterpError`) become one
line on stderr and exit code 2, as do click's usage errors
(:mod:`interp.cli.base`). Library messages name parameters
(``batch_size=``); :data:`interp.cli.base.FLAGS` is the one table that
writes them as this command line's flags. Importing the command line imports
neither torch nor transformers: a command imports its job when it runs.

Commands by module: :mod:`~interp.cli.models` (train, evaluate, inoculate,
inoculation-figure, convert-checkpoint), :mod:`~interp.cli.analyses` (cache,
probe, intervene, das, location-sweep, head-sweep, cliques),
:mod:`~interp.cli.steering` (ablate, steer), :mod:`~interp.cli.demo` (demo, report) and
:mod:`~interp.cli.generators` (fragments, mqnli, monotonicity, monli-generate).
"""

from interp.cli.base import main
from interp.cli import analyses, demo, generators, models, steering  # noqa: F401  (each adds its commands to main)

__all__ = ["main"]
