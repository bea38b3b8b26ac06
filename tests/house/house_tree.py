"""What the house checks share: their command line, and for their self-tests writing a
scratch tree of files and the tally line. Imported by check_size.py, check_layers.py, check_citations.py, check_paths.py and check_json.py (they
run as scripts from this folder, so it is on their import path)."""
import os


def write_tree(root, files):
    """Writes {relative path: text} under root, making the folders."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def tally(cases, failed):
    """The self-test's last line and exit code."""
    print(f"self-test: {cases - failed} of {cases} cases right")
    return 1 if failed else 0


def run(argv, doc, self_test, check_root):
    """The command line of every check: `CHECK ROOT` runs check_root(ROOT) and returns its exit
    code; `CHECK --self-test` runs the check on its own fixtures; anything else prints the
    usage (the script's docstring) and returns 2."""
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(doc)
        return 2
    return check_root(argv[1])
