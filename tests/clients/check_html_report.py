#!/usr/bin/python3
"""check_html_report.py — opens smcrypt-load's HTML report in Debian's headless Chromium and
checks what a reader sees: at least one chart; every chart has data points (circles or
bars of class "point") of non-zero size; every legend's bounding box, as Chromium lays out
its text, lies inside its chart's viewBox; the page logs nothing to the console (the report
has no scripts, so any console message is an error such as a resource that failed to
load); and the HTML references no external URL (the SVG namespace name aside).

Usage: check_html_report.py REPORT.html [CHROMIUM]
Exit 0 when every check passes, 1 with the failed checks on stderr, 77 when no Chromium is
installed (ctest's skip code).

The report is loaded into an iframe of a wrapper page in a temporary directory, whose script
measures the report's SVGs (getBBox) and writes the figures into its own DOM; Chromium's
--dump-dom prints that DOM once the page has loaded. Console messages come from Chromium's
log on stderr (--enable-logging=stderr), where each is a line with "CONSOLE".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WRAPPER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="result">not measured</pre>
<iframe id="report" src="report.html" width="1400" height="900"></iframe>
<script>
document.getElementById("report").addEventListener("load", function () {
  var out = {charts: []};
  try {
    var doc = this.contentDocument;
    var svgs = doc.querySelectorAll("svg");
    for (var i = 0; i < svgs.length; i++) {
      var svg = svgs[i];
      var vb = svg.viewBox.baseVal;
      var chart = {viewBox: [vb.x, vb.y, vb.width, vb.height], points: 0, legends: []};
      var points = svg.querySelectorAll(".point");
      for (var j = 0; j < points.length; j++) {
        var b = points[j].getBBox();
        if (b.width > 0 && b.height > 0) chart.points++;
      }
      var legends = svg.querySelectorAll(".legend");
      for (var k = 0; k < legends.length; k++) {
        var l = legends[k].getBBox();
        chart.legends.push([l.x, l.y, l.width, l.height]);
      }
      out.charts.push(chart);
    }
  } catch (e) {
    out.error = String(e);
  }
  document.getElementById("result").textContent = "RESULT " + JSON.stringify(out);
});
</script>
</body></html>
"""


def find_chromium(arg):
    for c in [arg, "chromium", "chromium-browser", "google-chrome"]:
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    chromium = find_chromium(sys.argv[2] if len(sys.argv) > 2 else None)
    if chromium is None:
        print("check_html_report: no chromium installed (apt-get install chromium)",
              file=sys.stderr)
        return 77
    with open(sys.argv[1], encoding="utf-8") as f:
        html = f.read()
    failures = []
    external = [u for u in re.findall(r"""(?:src|href|url)\s*[=(]\s*["']?\s*(\w+://[^"')\s]+)""", html)]
    external += [u for u in re.findall(r"https?://[^\s\"'<>)]+", html)
                 if u != "http://www.w3.org/2000/svg"]
    if external:
        failures.append(f"external references: {sorted(set(external))}")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(sys.argv[1], os.path.join(tmp, "report.html"))
        with open(os.path.join(tmp, "wrapper.html"), "w", encoding="utf-8") as f:
            f.write(WRAPPER)
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
               "--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
               f"--user-data-dir={tmp}/profile", "--no-first-run", "--disable-extensions",
               "--virtual-time-budget=5000", "--dump-dom",
               "file://" + os.path.join(tmp, "wrapper.html")]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            print("check_html_report: chromium timed out", file=sys.stderr)
            return 1
    m = re.search(r"RESULT (\{.*\})", run.stdout)
    if not m:
        print(f"check_html_report: no measurement in chromium's DOM (exit {run.returncode});"
              f" stderr:\n{run.stderr[-3000:]}", file=sys.stderr)
        return 1
    result = json.loads(m.group(1).replace("&quot;", '"'))
    console = [l for l in run.stderr.splitlines() if "CONSOLE" in l and "report.html" in l]
    if console:
        failures.append("console messages:\n  " + "\n  ".join(console))
    if "error" in result:
        failures.append(f"measuring the report failed: {result['error']}")
    charts = result["charts"]
    if not charts:
        failures.append("no chart in the report")
    for i, c in enumerate(charts):
        x0, y0, w, h = c["viewBox"]
        if w <= 0 or h <= 0:
            failures.append(f"chart {i}: no viewBox")
        if c["points"] == 0:
            failures.append(f"chart {i}: no data points")
        if not c["legends"]:
            failures.append(f"chart {i}: no legend")
        for lx, ly, lw, lh in c["legends"]:
            if lx < x0 or ly < y0 or lx + lw > x0 + w or ly + lh > y0 + h:
                failures.append(f"chart {i}: legend box ({lx:.1f}, {ly:.1f}, {lw:.1f} x {lh:.1f}) "
                                f"outside the viewBox ({x0}, {y0}, {w} x {h})")
    if failures:
        print("check_html_report: " + sys.argv[1] + "\n" + "\n".join(failures), file=sys.stderr)
        return 1
    print(f"check_html_report: {len(charts)} charts, "
          f"{sum(c['points'] for c in charts)} data points, legends inside")
    return 0


if __name__ == "__main__":
    sys.exit(main())
