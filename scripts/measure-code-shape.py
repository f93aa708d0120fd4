#!/usr/bin/env python3
"""Prints the shape of the code per layer (libllmprof/src/<layer>) and of the CLI (apps/deep-profile): .cpp/.hpp
file count, files over 400 lines, functions, and functions over 60 lines (the sizes past which the project's
style wants a split: README "Development").

    scripts/measure-code-shape.py [REPO]        # REPO defaults to this checkout
    scripts/measure-code-shape.py --long [REPO] # also lists each long file and long function

The function count is a heuristic, not a C++ parser:
  1. comments, string and character literals (raw strings included) are blanked out, keeping line breaks;
  2. the remaining text is scanned brace by brace. A `{` opened outside any function body (at namespace or
     class scope) opens a function body when the text since the previous `;`, `{` or `}` contains a `(` and
     does not start a namespace, class, struct, union or enum, and has no `=` before its first `(` (which
     would make it an initialiser such as `static const std::vector<X> table = {...}`);
  3. the function's length is counted from the first line of that text (its signature; a template<> line
     or attribute included) to its closing `}`, both lines included.
A brace initialiser in a constructor's initialiser list (`: member_{value}`) is skipped, not taken for the body.
Lambdas and local classes inside a function count toward that function, not as functions of their own;
a lambda at namespace scope (`const auto f = [](...) {...}`) is not counted (its `=` comes first).
Preprocessor lines are skipped. Good enough to follow the counts from one tree to the next.
"""
import argparse
import pathlib
import re
import sys

LONG_FILE_LINES = 400
LONG_FUNCTION_LINES = 60
# `) : member_{` or `), member_{`: a brace initialiser inside a constructor's initialiser list.
INITIALISER_IN_LIST = re.compile(r"\)\s*(?:noexcept\s*)?:(?!:)[^{]*\w\s*$", re.S)
NOT_FUNCTION = re.compile(r"^\s*(?:template\s*<.*>\s*)?(?:namespace|class|struct|union|enum)\b", re.S)


def blank_literals_and_comments(text: str) -> str:
    """Replaces comments and the contents of string/char literals with spaces; line breaks stay."""
    out = []
    i, n = 0, len(text)

    def blank(segment: str) -> str:
        return "".join("\n" if c == "\n" else " " for c in segment)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(blank(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(blank(text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            close = text.find(")" + delimiter + '"', open_paren)
            end = n if close < 0 else close + len(delimiter) + 2
            out.append('""' + blank(text[i + 2:end]))
            i = end
        elif c in "\"'":
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + blank(text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_preprocessor(text: str) -> str:
    lines = text.split("\n")
    result, continued = [], False
    for line in lines:
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            result.append("")
        else:
            result.append(line)
    return "\n".join(result)


def functions_of(text: str):
    """(first line, last line) of each function body found by the heuristic above, 1-based."""
    text = skip_preprocessor(blank_literals_and_comments(text))
    found = []
    stack = []  # per open brace: (whether it opened a function body, the function's first line)
    header_start = 0  # index just past the previous ; { }
    index = 0
    while index < len(text):
        c = text[index]
        if c == "{":
            inside_function = any(opened for opened, _ in stack)
            header = text[header_start:index]
            if not inside_function and INITIALISER_IN_LIST.search(header):
                index = matching_brace(text, index) + 1  # x_{a} in a constructor's initialiser list
                continue
            is_function = False
            if not inside_function and "(" in header and not NOT_FUNCTION.match(header):
                is_function = "=" not in header[: header.index("(")]
            offset = len(header) - len(header.lstrip())
            stack.append((is_function, text.count("\n", 0, header_start + offset) + 1))
            header_start = index + 1
        elif c == "}":
            if stack:
                opened_function, start_line = stack.pop()
                if opened_function:
                    found.append((start_line, text.count("\n", 0, index) + 1))
            header_start = index + 1
        elif c == ";":
            header_start = index + 1
        index += 1
    return found


def matching_brace(text: str, open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def measure(repo: pathlib.Path, long_listing: bool):
    source = repo / "libllmprof" / "src"
    rows = []
    listing = []
    # The library's layers, then the CLI: the app stays thin, and its long functions count too.
    folders = sorted(p for p in source.iterdir() if p.is_dir()) + [repo / "apps" / "deep-profile"]
    for layer in folders:
        files = sorted(p for p in layer.rglob("*") if p.suffix in (".cpp", ".hpp"))
        long_files = 0
        functions = 0
        long_functions = 0
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = text.count("\n")
            if lines > LONG_FILE_LINES:
                long_files += 1
                listing.append(f"  file {path.relative_to(repo)}: {lines} lines")
            for first, last in functions_of(text):
                functions += 1
                if last - first + 1 > LONG_FUNCTION_LINES:
                    long_functions += 1
                    listing.append(f"  function {path.relative_to(repo)}:{first}: {last - first + 1} lines")
        name = "apps/deep-profile" if layer.parent.name == "apps" else layer.name
        rows.append((name, len(files), long_files, functions, long_functions))
    header = ("layer", "files", f"files >{LONG_FILE_LINES}", "functions", f"functions >{LONG_FUNCTION_LINES}")
    total = ("total",) + tuple(sum(row[i] for row in rows) for i in range(1, 5))
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows + [total]:
        print("| " + " | ".join(str(value) for value in row) + " |")
    if long_listing and listing:
        print()
        print("\n".join(listing))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", nargs="?", default=str(pathlib.Path(__file__).resolve().parent.parent))
    parser.add_argument("--long", action="store_true", help="list each long file and long function")
    arguments = parser.parse_args()
    measure(pathlib.Path(arguments.repo), arguments.long)
    return 0


if __name__ == "__main__":
    sys.exit(main())
