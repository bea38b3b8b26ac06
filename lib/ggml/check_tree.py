#!/usr/bin/env python3
"""Configure-time check of the llama.cpp tree -Dllama_cpp names (docs/llama-cpp.md).

The backend is compiled against ggml's internal header ggml/src/ggml-backend-impl.h, whose
structs change between ggml versions, so a tree of another version is refused, naming the
version found and the one expected; so is a tree not yet built with cmake into build/.

Usage: check_tree.py TREE     prints TREE's build/bin directory, or exits 1 with the problem
"""
import pathlib
import re
import sys

EXPECTED_GGML = "0.25.1"          # ggml/CMakeLists.txt GGML_VERSION_{MAJOR,MINOR,PATCH}
EXPECTED_BACKEND_API = "2"        # ggml/src/ggml-backend-impl.h GGML_BACKEND_API_VERSION
EXPECTED_COMMIT = "de3ff815ea7d559ee917f063901b8986f038abc6"  # scripts/llama's pin


def ggml_version(tree):
    text = (tree / "ggml" / "CMakeLists.txt").read_text()
    parts = [re.search(rf"set\(GGML_VERSION_{p} (\d+)\)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else "unknown"


def problem(tree):
    if not (tree / "ggml" / "CMakeLists.txt").is_file():
        return f"{tree} is not a llama.cpp source tree (no ggml/CMakeLists.txt)"
    found = ggml_version(tree)
    if found != EXPECTED_GGML:
        return (f"{tree} holds ggml {found}; this backend is written for ggml {EXPECTED_GGML} "
                f"(llama.cpp {EXPECTED_COMMIT})")
    impl = (tree / "ggml" / "src" / "ggml-backend-impl.h").read_text()
    api = re.search(r"#define GGML_BACKEND_API_VERSION (\d+)", impl)
    if not api or api.group(1) != EXPECTED_BACKEND_API:
        return (f"{tree} has ggml backend API version {api.group(1) if api else 'unknown'}, "
                f"expected {EXPECTED_BACKEND_API}")
    if not (tree / "build" / "bin" / "libggml-base.so").is_file():
        return (f"{tree}/build/bin/libggml-base.so is missing: build the tree with cmake into "
                "build/ with -DBUILD_SHARED_LIBS=ON first (scripts/llama does)")
    return None


def main():
    tree = pathlib.Path(sys.argv[1]).resolve()
    why = problem(tree)
    if why:
        print(f"-Dllama_cpp: {why}", file=sys.stderr)
        return 1
    print(tree / "build" / "bin", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
