"""What the browser checks share: finding Chromium and the flags of a headless run on this closed network."""
import os
import shutil


def find_chromium(requested=""):
    """--chromium when it exists, else chromium or chromium-browser on PATH; None (after printing the skip marker
    ctest's SKIP_REGULAR_EXPRESSION reads) when there is none."""
    chromium = requested if requested and os.path.exists(requested) else (
        shutil.which("chromium") or shutil.which("chromium-browser"))
    if not chromium:
        print("LLMPROF-SKIPPED: no chromium found (install it with scripts/install-deps.sh, Debian package 'chromium')")
    return chromium


def headless_flags(work, window=None):
    """A fresh profile under `work` per check; `window` = (width, height) sets the viewport."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={work}/profile"]
    if window:
        flags.append(f"--window-size={window[0]},{window[1]}")
    return flags
