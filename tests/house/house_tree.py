"""What the house checks' self-tests share: writing a scratch tree of files, and the tally
line. Imported by check_size.py, check_layers.py, check_citations.py and check_paths.py (they
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
