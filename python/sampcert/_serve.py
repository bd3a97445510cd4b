"""Serves a Python sampler named by module or file to `sampcert --sampler exec:...`.

    python .../sampcert/_serve.py [--path DIR]... [--info JSON] [--arrays torch|jax] TARGET

TARGET is `module:qualname` (imported from the --path folders) or `/abs/file.py:qualname` (the
file is executed as module `__sampcert_main__`, so an `if __name__ == "__main__":` block does
not run). A file that calls sampcert.certify at its top level stops loading at that call: what
it defined before is served. The object is a function `f(batch, seed, first_draw,
draws_per_row)` or a class, instantiated once with no arguments, with `sample` and optionally
`probabilities(batch)`, `create(config)`, `verify(chains, seed)` (a speculative-decoding
verifier, declaring "verify") and `info`. sampcert.certify writes this command; it is
what a report's reproduction lines run. With SAMPCERT_FORK_SERVER set (certify's fork server,
_fork_server.py) it asks that server for a forked child to serve it, and loads the sampler
itself only where the server cannot.

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
            raise SystemExit(
                f"sampcert _serve: {where} defines no {qualname} where its loading stopped (a "
                "file that calls sampcert.certify at its top level is loaded up to its first "
                "such call: put several calls under `if __name__ == \"__main__\":`)") from None
    return obj


def _parse(argv):
    parser = argparse.ArgumentParser(prog="sampcert-serve")
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--info", default=None)
    parser.add_argument("--arrays", default="numpy", choices=("numpy", "torch", "jax"))
    parser.add_argument("--fork-server", default=None, metavar="SOCKET",
                        help=argparse.SUPPRESS)
    parser.add_argument("target")
    return parser.parse_args(argv)


def main() -> None:
    argv = sys.argv[1:]
    args = _parse(argv)
    server = os.environ.get("SAMPCERT_FORK_SERVER")
    if server and args.fork_server is None:
        # certify() runs a fork server for this very command: a child forked from it, with the
        # sampler already imported, serves this process's protocol descriptors instead.
        from sampcert import _fork_server
        _fork_server.delegate(server, argv)  # returns only where the server cannot serve it
    # The caller's own sys.path entries first, in its order (its script folder, pytest's
    # rootdir, PYTHONPATH): the sampler and what it imports resolve as they did there.
    sys.path[:0] = [p for p in args.path if p not in sys.path]
    obj = _load(args.target)
    if args.fork_server is not None:
        from sampcert import _fork_server, protocol  # noqa: F401 - imported once, for children
        if args.arrays != "numpy":
            __import__(args.arrays)
        key = [a for i, a in enumerate(argv)
               if a != "--fork-server" and (i == 0 or argv[i - 1] != "--fork-server")]
        _fork_server.serve_forever(args.fork_server, key, lambda: _serve(obj, args))
        return
    _serve(obj, args)


def _serve(obj, args) -> None:
    from sampcert import protocol
    if isinstance(obj, type):
        instance = obj()
        sample_fn = instance.sample
        probabilities_fn = getattr(instance, "probabilities", None)
        create_fn = getattr(instance, "create", None)
        verify_fn = getattr(instance, "verify", None)
    else:
        instance = obj
        sample_fn, probabilities_fn, create_fn, verify_fn = obj, None, None, None
    info = (protocol.Info(**json.loads(args.info)) if args.info
            else getattr(instance, "info", None))
    if info is not None and not isinstance(info, protocol.Info):
        raise SystemExit(f"sampcert _serve: {args.target}'s info is a {type(info).__name__}, "
                         "not a sampcert.protocol.Info")
    if info is None:
        info = protocol.Info(name=args.target.rpartition(":")[2])
    protocol.serve(sample_fn, info=info, probabilities_fn=probabilities_fn, create_fn=create_fn,
                   arrays=args.arrays, verify_fn=verify_fn)


if __name__ == "__main__":
    # sys.path[0] is this file's folder, the package itself: it must not shadow anything. The
    # package's parent goes last, for a source tree where sampcert is not installed.
    del sys.path[0]
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
