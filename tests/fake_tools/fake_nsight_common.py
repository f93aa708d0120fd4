# Shared helpers of the fake Nsight tools (nsys, ncu, QdstrmImporter) in this directory.
# See README.md for the modes and environment variables.
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))


def data_dir():
    """The recorded fixtures (tests/data/h100-nsight-2025.3), or FAKE_NSIGHT_DATA_DIR."""
    return os.environ.get("FAKE_NSIGHT_DATA_DIR", os.path.join(HERE, "..", "data", "h100-nsight-2025.3"))


def fixture(relative):
    return os.path.join(data_dir(), relative)


def print_file(path, stream=None):
    stream = stream or sys.stdout
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        stream.write(handle.read())
    stream.flush()


def log_invocation(variable, tool):
    """Appends {"tool", "argv", "cwd"} as one JSON line to the file named by `variable`, when set."""
    path = os.environ.get(variable)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool": tool, "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")


def resolve_application(name):
    """Like the real tools: a path with '/' must exist; a bare name is looked up on PATH."""
    if "/" in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name)


def run_application(argv, on_start=None):
    """Runs the profiled application as a child with inherited stdio; returns its exit status. on_start(pid) is
    called once it runs (the fake ncu prints "Connected to process PID" with the application's pid, as ncu does)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        child = subprocess.Popen(argv)
    except OSError as error:
        sys.stderr.write(f"{argv[0]}: {error}\n")
        return 127
    if on_start:
        on_start(child.pid)
    returncode = child.wait()
    return returncode if returncode >= 0 else 128 - returncode


def write_file(path, content):
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        return False
    with open(path, "wb") as handle:
        handle.write(content)
    return True
