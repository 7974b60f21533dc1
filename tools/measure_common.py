"""What tools/measure-kernels.py and tools/measure-models.py share: a log
that goes to stdout and, once opened, to OUT/log.txt (appended)."""

LOG = None


def open_log(path):
    """Append every later log() line to path as well."""
    global LOG
    LOG = open(path, "a")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    if LOG:
        LOG.write(s + "\n")
        LOG.flush()
