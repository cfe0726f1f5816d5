#!/usr/bin/python3
"""First paint and time to a drawn page in Debian's headless Chromium.

  dashboard_paint.py URL [LOADS]

Loads URL LOADS times (default 5) and prints, per load, the first
contentful paint and the time until the page has drawn its data
(window.qkov.ready), both from the start of navigation, then the medians.
With dashboard_bench --hold_port_file (docs/PERFORMANCE.md).
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'browser'))
import cdp  # noqa: E402

url = sys.argv[1]
loads = int(sys.argv[2]) if len(sys.argv) > 2 else 5
browser = cdp.Browser()
paint, ready = [], []
try:
    for i in range(loads):
        browser.open(url, timeout=120)
        fcp = browser.evaluate(
            "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || -1")
        # The page records when it has drawn its data (app.js markReady).
        drawn = browser.evaluate('window.qkovReadyAt')
        paint.append(fcp)
        ready.append(drawn)
        print(f'load {i + 1}: first contentful paint {fcp:.0f} ms, data drawn {drawn:.0f} ms')
    print(f'median: first contentful paint {statistics.median(paint):.0f} ms, '
          f'data drawn {statistics.median(ready):.0f} ms ({loads} loads)')
    if browser.errors:
        print('console errors:', browser.errors)
finally:
    browser.close()
