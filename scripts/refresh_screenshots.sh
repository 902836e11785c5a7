#!/usr/bin/env bash
# Re-take the pictures in docs/screenshots (and the README) with the real-browser test: it drives the app
# through a tour (train live, reload, evaluate, draw, compare, weights, two workers, Chinese) and a lesson in
# presentation mode (tests/browser/test_browser_lesson.py), a class with phones (tests/browser/test_browser_class.py), and saves
# what the browser shows. The tests themselves write their screenshots to test-output/ (ignored).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STUDIO_SCREENSHOTS="$here/docs/screenshots" STUDIO_REQUIRE_BROWSER=1 "$here/test.sh" tests/browser/test_browser.py tests/browser/test_browser_lesson.py tests/browser/test_browser_class.py tests/browser/test_browser_class_round.py "$@"
