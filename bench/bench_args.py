"""Command-line options of the bench scripts: `opt(argv, "--name", default)` takes `--name VALUE` out of argv."""


def opt(argv, name, default):
    if name in argv:
        i = argv.index(name)
        if i + 1 >= len(argv):
            raise SystemExit("%s needs a value" % name)
        v = argv[i + 1]
        del argv[i:i + 2]
        return v
    return default
