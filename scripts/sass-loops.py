#!/usr/bin/env python3
"""The instruction mix of each kernel's main loop, from its SASS.

A GEMM's inner loop is issue-bound when its math pipe accepts one warp
instruction a cycle, as Hopper's FFMA pipe does: each scheduler issues one
instruction a cycle, so every shared load, address add or branch in the loop
takes an FFMA's slot, and the loop's FFMA share bounds the fraction of FP32
peak it can reach. mma.sync (HMMA) keeps the tensor core busy for several
cycles, so there the share says how much room the other instructions leave,
not a bound; wgmma kernels are only named.

For every kernel in the input this finds its main loop (the smallest
natural loop holding nearly all of its math instructions: the target of a
backward branch and every instruction that reaches the branch without
passing the target, out-of-line blocks included) and prints its size, its
math share and what the rest is. Counts are static: a loop with branches inside (copies with edge
cases, inner loops) runs a different mix than it holds, and the line says
so.

Usage:
  scripts/sass-loops.py BINARY_OR_OBJECT...   runs cuobjdump -sass on each
  cuobjdump -sass X | scripts/sass-loops.py -
Options: --kernel TEXT keeps kernels whose name contains TEXT.
cuobjdump comes with the CUDA toolkit (PATH, $CUDA_HOME/bin or
/usr/local/cuda/bin); NVIDIA's nvidia-cuda-cuobjdump wheel has one too.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

MATH = ("FFMA", "HMMA", "IMMA", "DFMA", "HFMA2")
# One wgmma instruction multiplies a whole 64xN tile from shared memory: what
# else its loop holds says little, so those kernels are only named.
WGMMA = ("HGMMA", "QGMMA", "IGMMA")
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;")
# BRA, BRA.U.ANY, BRA.DIV...; an optional operand (P1, !UP0, UR4) before the target.
BRANCH = re.compile(r"\bBRA(?:\.[A-Z]+)*\s+(?:\S+,\s*)?(?:0x)?([0-9a-f]+)\b")


def cuobjdump():
    for where in (shutil.which("cuobjdump"), os.path.join(os.environ.get("CUDA_HOME", ""), "bin", "cuobjdump"),
                  "/usr/local/cuda/bin/cuobjdump"):
        if where and os.access(where, os.X_OK):
            return where
    sys.exit("sass-loops: no cuobjdump (looked on PATH, in $CUDA_HOME/bin and /usr/local/cuda/bin)")


def sass_of(path):
    if path == "-":
        return sys.stdin.read()
    if not os.path.exists(path):
        sys.exit(f"sass-loops: {path}: no such file")
    done = subprocess.run([cuobjdump(), "-sass", path], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sass-loops: cuobjdump -sass {path} failed: {done.stderr.strip()}")
    return done.stdout


def demangle(names):
    if not shutil.which("c++filt"):
        return names
    done = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    out = done.stdout.splitlines()
    return out if done.returncode == 0 and len(out) == len(names) else names


def is_math(text):
    # HFMA2.MMA with zero operands is how the compiler moves a constant into
    # a register on the FMA pipe: no arithmetic.
    return opcode(text) in MATH and "HFMA2.MMA" not in text


def opcode(text):
    words = text.split()
    if words and words[0].startswith("@"):  # a predicate guards it
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def functions(sass):
    """(mangled name, [(address, text)]) for every function in cuobjdump's output."""
    for part in re.split(r"\n\s*Function : ", sass)[1:]:
        name = part.split("\n", 1)[0].strip()
        body = [(int(m.group(1), 16), m.group(2)) for m in map(INSTRUCTION.match, part.split("\n")) if m]
        yield name, body


def successors(body, index):
    """succ[i]: the instructions control may pass to after body[i]."""
    succ = []
    for i, (_, text) in enumerate(body):
        words = text.split()
        guarded = bool(words) and words[0].startswith("@")
        op = opcode(text)
        branch = BRANCH.search(text) if op == "BRA" else None
        # BRA.U !UP0, target and BRA.DIV are conditional too: an operand before the target.
        conditional = guarded or (branch is not None and "," in text.split("BRA", 1)[1])
        out = []
        if branch and int(branch.group(1), 16) in index:
            out.append(index[int(branch.group(1), 16)])
        if i + 1 < len(body) and (conditional or op not in ("BRA", "EXIT", "RET")):
            out.append(i + 1)
        succ.append(out)
    return succ


def natural_loop(head, tails, pred):
    """The instructions of the loop that the backward branches body[tail] ->
    body[head], for every tail in tails, close: head, and every instruction
    that reaches a tail without passing head. Blocks the compiler moved out
    of line (a barrier, a rare path) belong to it as much as the ones
    between head and tail. None when the kernel's entry reaches a tail
    without passing head: then that branch only returns from an out-of-line
    block (a shuffle's divergent path) and closes no loop."""
    inside = {head}
    stack = [t for t in tails if t != head]  # a branch to itself: a loop of one
    inside.update(stack)
    while stack:
        for p in pred[stack.pop()]:
            if p not in inside:
                inside.add(p)
                stack.append(p)
    return None if 0 in inside and head != 0 else sorted(inside)


def main_loop(body):
    """The innermost loop holding (nearly) the most math instructions:
    (math, first address, last address, instructions), or None. A kernel's
    tile loop holds its k-loop and epilogue too; the k-loop is the smallest
    loop with at least 90% of the math."""
    index = {address: i for i, (address, _) in enumerate(body)}
    succ = successors(body, index)
    pred = [[] for _ in body]
    for i, out in enumerate(succ):
        for j in out:
            pred[j].append(i)
    tails = {}  # head -> the backward branches to it: one loop, however many ways round
    for tail, (address, text) in enumerate(body):
        branch = BRANCH.search(text) if opcode(text) == "BRA" else None
        if branch and int(branch.group(1), 16) <= address and int(branch.group(1), 16) in index:
            tails.setdefault(index[int(branch.group(1), 16)], []).append(tail)
    loops = []  # (math, instruction indices)
    for head, its_tails in tails.items():
        members = natural_loop(head, its_tails, pred)
        math = sum(is_math(body[i][1]) for i in members) if members else 0
        if math:
            loops.append((math, members, len(its_tails)))
    if not loops:
        return None
    most = max(loop[0] for loop in loops)
    math, members, back = min((loop for loop in loops if loop[0] >= 0.9 * most), key=lambda loop: len(loop[1]))
    return math, body[members[0]][0], body[members[-1]][0], [body[i] for i in members], back


def describe(loop):
    math, start, end, instructions, back = loop
    ops = Counter(opcode(t) for _, t in instructions if not is_math(t))
    # Branches and exits that may leave the path round: all but the backward ones.
    branches_inside = ops["BRA"] - back + sum(1 for _, t in instructions if opcode(t) == "EXIT")
    rest = ", ".join([f"{op} {n}" for op, n in ops.most_common()][:16])
    span = (end - start) // 16 + 1  # sm_90 instructions are 16 bytes
    where = f"0x{start:x}-0x{end:x}" + (f" ({span - len(instructions)} between not in the loop)"
                                        if span > len(instructions) else "")
    line = f"{math} math of {len(instructions)} ({100.0 * math / len(instructions):.0f}%), {where}; rest: {rest}"
    if branches_inside > 0:
        line += f"; {branches_inside} branch(es) inside: static counts"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+",
                        help="binaries or objects (cuobjdump -sass runs on each), or - for SASS text")
    parser.add_argument("--kernel", default="", help="only kernels whose name contains this")
    args = parser.parse_args()
    rows, loopless = [], 0
    for path in args.inputs:
        for name, body in functions(sass_of(path)):
            wgmma = sum(opcode(t) in WGMMA for _, t in body)
            loop = main_loop(body)
            if wgmma:
                rows.append((name, f"{wgmma} wgmma instructions: a tile each, not counted"))
            elif loop:
                rows.append((name, describe(loop)))
            elif any(is_math(t) for _, t in body):
                loopless += 1  # straight-line math (a transform, an epilogue): no loop to count
    names = demangle([name for name, _ in rows])
    shown, seen = 0, set()
    for readable, (_, line) in zip(names, rows):
        # A binary may hold a kernel more than once (several libraries compile it).
        if args.kernel in readable and (readable, line) not in seen:
            seen.add((readable, line))
            print(f"{readable}\n  {line}")
            shown += 1
    if loopless and not args.kernel:
        print(f"sass-loops: {loopless} kernel(s) with math instructions but no loop around them, not listed",
              file=sys.stderr)
    if shown == 0:
        sys.exit("sass-loops: no kernel with a math loop" + (f" matching '{args.kernel}'" if args.kernel else ""))


if __name__ == "__main__":
    main()
