#!/usr/bin/env python3
"""Renders a fixture run's report.html in headless Chromium and checks what a person would see.

1. copies the run directory to --work and runs `deep-profile report` on the copy;
2. `chromium --headless --screenshot` at 1280x2000: the PNG (decoded here with zlib, stdlib only) must not be
   blank: many distinct colours, most rows with content, the header's dark band and chart colours present;
3. `chromium --headless --dump-dom`: the DOM Chromium built must hold the charts and tables.
Prints LLMPROF-SKIPPED (ctest SKIP_REGULAR_EXPRESSION) only when no Chromium is installed (scripts/install-deps.sh installs it).
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_chromium import find_chromium, headless_flags  # noqa: E402


def decode_png(path):
    """Returns (width, height, rows) with rows as lists of (r, g, b) tuples; 8-bit RGB/RGBA only."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise ValueError(f"unsupported PNG format depth={depth} colour={colour} interlace={interlace}")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + predictor) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def check_png(path, problems):
    width, height, rows = decode_png(path)
    if (width, height) != (1280, 2000):
        problems.append(f"screenshot is {width}x{height}, expected 1280x2000")
    colours = {}
    for row in rows[::4]:
        for pixel in row[::4]:
            colours[pixel] = colours.get(pixel, 0) + 1
    background = max(colours, key=colours.get)
    rows_with_content = sum(1 for row in rows[::4] if any(p != background for p in row[::8]))
    dark = sum(n for p, n in colours.items() if max(p) < 70)            # the header band
    saturated = sum(n for p, n in colours.items() if max(p) - min(p) > 90)  # chart colours
    print(f"png: {width}x{height}, {len(colours)} distinct colours (sampled), background {background}, "
          f"{rows_with_content}/{len(rows[::4])} sampled rows with content, {dark} dark, {saturated} saturated samples")
    if len(colours) < 50:
        problems.append(f"only {len(colours)} distinct colours: the page looks blank or unstyled")
    if rows_with_content < 0.6 * len(rows[::4]):
        problems.append(f"only {rows_with_content} of {len(rows[::4])} sampled rows have content")
    if dark < 2000:
        problems.append("no dark header band: the stylesheet was not applied")
    if saturated < 300:
        problems.append("few saturated pixels: the SVG charts did not render")


def check_dom(dom, problems):
    expected = {
        'class="chart roofline"': 2, 'class="chart stacked-bars"': 1, 'class="chart timeline"': 1,
        'class="kernel-point"': 9, 'class="timeline-row"': 3, 'id="kernel-table"': 1, 'id="stages"': 1,
        'id="reproduce"': 1, 'id="verdict"': 1,
    }
    for needle, count in expected.items():
        found = dom.count(needle)
        if found != count:
            problems.append(f"DOM has {found} x {needle}, expected {count}")
    if "<title>deep-profile report: 20261122T153122Z-a1b2c3</title>" not in dom:
        problems.append("DOM lacks the page title")
    if "vectorized_layer_norm_kernel&lt;c10::Half" not in dom:
        problems.append("kernel names with templates are not escaped text in the DOM")
    print(f"dom: {len(dom)} characters, {dom.count('<svg')} svg elements, {dom.count('<tr')} table rows")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deep-profile", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--chromium", default="")
    args = parser.parse_args()
    chromium = find_chromium(args.chromium)
    if not chromium:
        return 0
    shutil.rmtree(args.work, ignore_errors=True)
    main_dir = os.path.join(args.work, "run")
    shutil.copytree(args.run, main_dir)
    subprocess.run([args.deep_profile, "report", main_dir, "--format", "html"], check=True)
    html = os.path.join(main_dir, "report.html")
    png = os.path.join(args.work, "report.png")
    flags = headless_flags(args.work)
    subprocess.run([chromium, *flags, f"--screenshot={png}", "--window-size=1280,2000", "file://" + html],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    dom = subprocess.run([chromium, *flags, "--dump-dom", "file://" + html], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    problems = []
    check_png(png, problems)
    check_dom(dom, problems)
    for problem in problems:
        print("FAIL:", problem)
    print("screenshot:", png)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
