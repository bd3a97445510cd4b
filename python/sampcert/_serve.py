"""Serves a Python sampler named by module or file to `sampcert --sampler exec:...`.

    python .../sampcert/_serve.py [--path DIR]... [--info JSON] [--arrays torch] TARGET

TARGET is `module:qualname` (imported from the --path folders) or `/abs/file.py:qualname` (the
file is executed as module `__sampcert_main__`, so an `if __name__ == "__main__":` block does
not run). A file that calls sampcert.certify at its top level stops loading at that call: what
it defined before is served. The object is a function `f(batch, seed, first_draw,
draws_per_row)` or a class, instantiated once with no arguments, with `sample` and optionally
`probabilities(batch)`, `create(config)` and `info`. sampcert.certify writes this command; it is
what a report's reproduction lines run.

Run as a script (not with -m) so that it needs nothing on PYTHONPATH: it puts the folder that
holds this package first on sys.path.
"""

import argparse
import importlib.util
import json
import os
import sys


def _load(target: str):
    import sampcert.api as api
    where, sep, qualname = target.rpartition(":")
    if not sep or not where or not qualname:
        raise SystemExit(f"sampcert _serve: TARGET must be module:qualname or file.py:qualname, "
                         f"not {target!r}")
    if where.endswith(".py") and os.path.isabs(where):
        name = "__sampcert_main__"
        spec = importlib.util.spec_from_file_location(name, where)
    else:
        name = where
        spec = importlib.util.find_spec(where)
    if spec is None or spec.loader is None:
        raise SystemExit(f"sampcert _serve: cannot find {where} (sys.path: {sys.path})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    api._IN_SAMPLER_PROCESS = True
    try:
        spec.loader.exec_module(module)
    except api._StopLoading:
        pass  # the file called sampcert.certify: everything above that call is defined
    obj = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemExit(f"sampcert _serve: {where} defines no {qualname} (at the point "
                             "where it called sampcert.certify, if it did)") from None
    return obj


def main() -> None:
    parser = argparse.ArgumentParser(prog="sampcert-serve")
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--info", default=None)
    parser.add_argument("--arrays", default="numpy", choices=("numpy", "torch"))
    parser.add_argument("target")
    args = parser.parse_args()
    for p in reversed(args.path):
        sys.path.insert(0, p)

    from sampcert import protocol
    obj = _load(args.target)
    if isinstance(obj, type):
        instance = obj()
        sample_fn = instance.sample
        probabilities_fn = getattr(instance, "probabilities", None)
        create_fn = getattr(instance, "create", None)
    else:
        sample_fn, probabilities_fn, create_fn = obj, None, None
    info = protocol.Info(**json.loads(args.info)) if args.info else getattr(obj, "info", None)
    if info is None:
        info = protocol.Info(name=args.target.rpartition(":")[2])
    protocol.serve(sample_fn, info=info, probabilities_fn=probabilities_fn, create_fn=create_fn,
                   arrays=args.arrays)


if __name__ == "__main__":
    # sys.path[0] is this file's folder (the package itself); the package's parent replaces it.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    main()
