#!/usr/bin/env python3
"""Writes bench/results/ptxas-sm90a-<date>.txt: what ptxas gives each kernel
of the chosen registration files (registers a thread, spills, stack, shared
memory) when nvcc compiles them for sm_90a, as scripts/gpu-bundle.sh builds
the binary a lent GPU runs. No GPU needed: the CUDA toolkit's nvcc. The
compile commands come from a configured build with the toolkit (the default
preset's build/compile_commands.json); each is rerun for sm_90a alone with
--resource-usage, the object thrown away.

  scripts/ptxas-record.py [--build DIR] [--jobs N] [--out FILE] PATTERN...

PATTERN: a regular expression on a registration's path under
src/device/kernels (matmul/09_, conv/wgrad_05); "." takes every one. Lessons
and kernel headers quote register counts from the record, so they name a run
of this code. The dated record is of every file: a run of some of them
writes its --out file instead, and is refused without one."""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)' for 'sm_90a'")
PROPERTIES = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def for_sm90a(command):
    """The CMake command, compiling for sm_90a only, its resources printed, nothing written."""
    words = [w for w in shlex.split(command) if not w.startswith("--generate-code")]
    out = words.index("-o")
    words[out + 1] = os.devnull
    return words[:1] + ["--generate-code=arch=compute_90a,code=[sm_90a]", "--resource-usage"] + words[1:]


def compile_one(entry):
    done = subprocess.run(for_sm90a(entry["command"]), cwd=entry["directory"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{entry['file']}: nvcc failed:\n{done.stderr[-4000:]}")
    return done.stderr + done.stdout


def kernels_of(log):
    """(mangled name, registers, stack, spill stores, spill loads, shared bytes) per kernel, in ptxas's order."""
    rows, name, props = [], None, None
    for line in log.splitlines():
        if m := ENTRY.search(line):
            name, props = m.group(1), None
        elif name and (m := PROPERTIES.search(line)):
            props = tuple(int(g) for g in m.groups())
        elif name and props and (m := USED.search(line)):
            rows.append((name, int(m.group(1)), *props, int(m.group(2) or 0)))
            name = None
    return rows


def demangle(names):
    done = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    # The registration files wrap the kernel files in an anonymous namespace.
    return [re.sub(r"\(anonymous namespace\)::", "", n) for n in done.stdout.splitlines()]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", help="a configured build with the CUDA toolkit (default: build)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", help="where to write (default: bench/results/ptxas-sm90a-<date>.txt, "
                        "for the pattern \".\" only)")
    parser.add_argument("patterns", nargs="+", metavar="PATTERN")
    args = parser.parse_args()
    if args.out is None and args.patterns != ["."]:
        sys.exit("ptxas-record: the dated record is of every registration (PATTERN \".\"); "
                 "for some of them, name a file with --out")
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    database = os.path.join(args.build, "compile_commands.json")
    if not os.path.exists(database):
        sys.exit(f"ptxas-record: no {database}; configure a build with the CUDA toolkit first "
                 "(PATH=/usr/local/cuda/bin:$PATH cmake --preset default)")
    wanted = [re.compile(p) for p in args.patterns]
    entries = [e for e in json.load(open(database))
               if "/cuda_kernels/" in e["file"] and any(p.search(e["file"].split("/cuda_kernels/")[1]) for p in wanted)]
    if not entries:
        sys.exit(f"ptxas-record: no registration under {args.build}'s cuda_kernels matches {' '.join(args.patterns)}")
    entries.sort(key=lambda e: e["file"])
    print(f"ptxas-record: {len(entries)} registration file(s), {args.jobs} at a time", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        logs = list(pool.map(compile_one, entries))

    nvcc = subprocess.run([for_sm90a(entries[0]["command"])[0], "--version"], capture_output=True, text=True).stdout
    release = re.search(r"release [0-9.]+, V[0-9.]+", nvcc)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.count("\n")
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out_path = args.out or f"bench/results/ptxas-sm90a-{today}.txt"
    with open(out_path, "w") as out:
        out.write("# scripts/ptxas-record.py: ptxas --resource-usage for sm_90a, per kernel of each registration file\n")
        out.write(f"# commit {commit} ({dirty} files uncommitted), nvcc {release.group(0) if release else '?'}; "
                  f"made {today} on {os.cpu_count()} cores of {cpu_model()}\n")
        out.write(f"# patterns: {' '.join(args.patterns)}\n")
        out.write("# registers  stack  spill stores/loads  shared  kernel\n")
        for entry, log in zip(entries, logs):
            rows = kernels_of(log)
            out.write(f"\n{entry['file'].split('/cuda_kernels/')[1]}\n")
            for row, name in sorted(zip(rows, demangle([r[0] for r in rows])), key=lambda p: p[1]):
                _, registers, stack, stores, loads, shared = row
                out.write(f"  {registers:4d}  {stack:5d}  {stores:6d}/{loads:<6d}  {shared:6d}  {name}\n")
    print(out_path)


if __name__ == "__main__":
    main()
