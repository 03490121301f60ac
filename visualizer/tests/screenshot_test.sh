#!/bin/sh
# One headless test of warpnet-viz: render a panel under Xvfb (Mesa's
# llvmpipe), then check the PNG with check_png.
#   screenshot_test.sh VIZ CHECK_PNG OUT.png WxH "CHECKS" [warpnet-viz options...]
# With EXPECT set (an extended regular expression), warpnet-viz's output must
# also hold a line matching it; with EXPECT_STATUS, warpnet-viz must exit with
# that status (default 0: an error the panel shows fails the test; 2, options refused, leaves no
# picture to check). Exits 77 (CTest: skipped) when xvfb-run is
# not installed, else non-zero on any failure.
set -u
viz=$1 checker=$2 out=$3 size=$4 checks=$5
shift 5
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIPPED: xvfb-run is not installed (scripts/setup.sh installs xvfb and xauth)"
  exit 77
fi
rm -f "$out"
log="$out.log"
# -a: a free display number (CTest still runs these one at a time, RESOURCE_LOCK xvfb: two
# started together can pick the same one); 24-bit colour.
# -f: the X authority file in a folder of ours. In its own temporary folder,
# xvfb-run removes the folder before it stops Xvfb, and once that removal
# failed (exit 5, "problem while cleaning up temporary directory", CI of
# 2026-12-02) after warpnet-viz had exited as expected.
auth=$(mktemp -d) || exit 1
touch "$auth/Xauthority"
xvfb-run -a -f "$auth/Xauthority" -s "-screen 0 ${size}x24" "$viz" --screenshot "$out" --size "$size" "$@" \
  >"$log" 2>&1
status=$?
rm -rf "$auth"
cat "$log"
if [ "$status" -ne "${EXPECT_STATUS:-0}" ]; then
  echo "FAIL: warpnet-viz exited with $status, expected ${EXPECT_STATUS:-0}"
  exit 1
fi
if [ -n "${EXPECT:-}" ] && ! grep -Eq -e "$EXPECT" "$log"; then
  echo "FAIL: no line of warpnet-viz's output matches: $EXPECT"
  exit 1
fi
# Status 2: options refused before any window opened, so no picture to check.
if [ "${EXPECT_STATUS:-0}" -eq 2 ]; then
  exit 0
fi
# shellcheck disable=SC2086  # CHECKS is a list of options
"$checker" "$out" --size "$size" $checks
