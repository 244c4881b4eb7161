"""Command lines of the bench scripts: `[BUILD_DIR] [--name VALUE ...]`."""
import os
import sys


def opt(argv, name, default):
    """Takes `--name VALUE` out of argv; `default` if it is not there."""
    if name in argv:
        i = argv.index(name)
        if i + 1 >= len(argv):
            raise SystemExit("%s needs a value" % name)
        v = argv[i + 1]
        del argv[i:i + 2]
        return v
    return default


def command_line(script, defaults):
    """`defaults`: option -> default value. Returns (the values by option, the trnsim binary of BUILD_DIR, by
    default build/ beside bench/); exits naming the binary if it is not built."""
    argv = sys.argv[1:]
    values = {name: opt(argv, name, d) for name, d in defaults.items()}
    build = os.path.abspath(argv[0] if argv else os.path.join(os.path.dirname(script), "..", "build"))
    trnsim = os.path.join(build, "apps", "trnsim")
    if not os.access(trnsim, os.X_OK):
        sys.exit("%s: %s not built (cmake --build %s --target trnsim)" % (os.path.basename(script), trnsim, build))
    return values, trnsim
