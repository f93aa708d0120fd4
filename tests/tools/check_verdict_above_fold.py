#!/usr/bin/env python3
"""Checks that report.html's verdict card shows the headline and the ranked levers above the fold at 1400x900.

For each --run: copies the run directory to --work, runs `deep-profile report` on the copy, then in headless
Chromium at --window-size=1400,900:
1. `--dump-dom` of a copy of report.html with a probe script appended: the script writes the layout width and
   the bounding boxes of the headline (#headline) and the first levers table into the DOM, and the check asserts
   both lie inside the first viewport and that the headline's text is the one report.md opens with;
2. `--screenshot` of report.html itself: a 1400x900 PNG whose headline box holds dark text pixels on the card's
   light background (decoded with check_report_browser.decode_png, stdlib only).
--save DIR keeps each screenshot as DIR/<name>.png (docs/images/ holds those of the recorded runs).
Prints LLMPROF-SKIPPED (ctest SKIP_REGULAR_EXPRESSION) only when no Chromium is installed.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report_browser import decode_png  # noqa: E402
from headless_chromium import find_chromium, headless_flags  # noqa: E402

WIDTH, HEIGHT = 1400, 900
PROBE = """<script>
(function(){
  function box(element){ if(!element) return null; var r = element.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }
  var headline = document.getElementById("headline");
  document.body.setAttribute("data-probe", JSON.stringify({
    width: window.innerWidth, height: window.innerHeight, headline: box(headline),
    headline_text: headline ? headline.textContent : null,
    levers: box(document.querySelector("table.levers"))}));
})();
</script>"""


def check_run(args, chromium, run, problems):
    name = os.path.basename(os.path.normpath(run))
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    main_dir = os.path.join(work, "run")
    shutil.copytree(run, main_dir)
    subprocess.run([args.deep_profile, "report", main_dir], check=True, stdout=subprocess.DEVNULL)
    markdown = open(os.path.join(main_dir, "report.md"), encoding="utf-8").read()
    # report.md opens with the headline in bold, right under the title.
    opening = re.search(r"^# .*\n\n\*\*(.+)\*\*\n", markdown)
    if not opening:
        problems.append(f"{name}: report.md does not open with a bold headline")
        return
    headline = html.unescape(opening.group(1))
    page = os.path.join(main_dir, "report.html")
    probe_page = os.path.join(main_dir, "report-probe.html")
    text = open(page, encoding="utf-8").read()
    open(probe_page, "w", encoding="utf-8").write(text.replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([chromium, *headless_flags(work, (WIDTH, HEIGHT)), "--dump-dom", "file://" + probe_page], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-probe="([^"]*)"', dom)
    if not found:
        problems.append(f"{name}: the probe script did not run")
        return
    probe = json.loads(html.unescape(found.group(1)))
    print(f"{name}: laid out {probe['width']} wide, headline {probe['headline']}, "
          f"levers {probe['levers']}")
    # Chromium 156's --dump-dom lays the page out 1400 wide but reports a shorter innerHeight (757) than the
    # screenshot's 900 rows; block positions depend on the width only while the stylesheet has no vh units.
    if probe["width"] != WIDTH:
        problems.append(f"{name}: the page was laid out {probe['width']} wide, expected {WIDTH}")
    if re.search(r"[0-9.]vh\b", text):
        problems.append(f"{name}: the stylesheet uses vh units: positions would depend on the window's height")
    if probe["headline_text"] != headline:
        problems.append(f"{name}: the HTML headline {probe['headline_text']!r} is not report.md's {headline!r}")
    for what in ("headline", "levers"):
        box = probe[what]
        if box is None:
            problems.append(f"{name}: no {what} in the verdict card")
        elif box["top"] < 0 or box["bottom"] > HEIGHT or box["right"] > WIDTH:
            problems.append(f"{name}: the {what} ({box}) is not inside the first {WIDTH}x{HEIGHT} viewport")
    png = os.path.join(work, name + ".png")
    subprocess.run([chromium, *headless_flags(work, (WIDTH, HEIGHT)), f"--screenshot={png}", "file://" + page], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    width, height, rows = decode_png(png)
    if (width, height) != (WIDTH, HEIGHT):
        problems.append(f"{name}: screenshot is {width}x{height}, expected {WIDTH}x{HEIGHT}")
    elif probe["headline"]:
        box = probe["headline"]
        pixels = [rows[y][x] for y in range(int(box["top"]), min(int(box["bottom"]), height))
                  for x in range(int(box["left"]), min(int(box["right"]), width), 2)]
        dark = sum(1 for p in pixels if max(p) < 90)
        print(f"{name}: {dark} dark (text) pixels of {len(pixels)} sampled in the headline's box")
        if dark < 200:
            problems.append(f"{name}: the screenshot shows no text where the headline is ({dark} dark pixels)")
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        shutil.copyfile(png, os.path.join(args.save, args.save_prefix + name + ".png"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deep-profile", required=True)
    parser.add_argument("--run", action="append", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--chromium", default="")
    parser.add_argument("--save", default="")
    parser.add_argument("--save-prefix", default="verdict-")
    args = parser.parse_args()
    chromium = find_chromium(args.chromium)
    if not chromium:
        return 0
    problems = []
    for run in args.run:
        check_run(args, chromium, run, problems)
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
