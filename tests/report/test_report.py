"""The report's own code and the one plotting path, without running a benchmark.

    /usr/bin/python3 -m unittest discover -s tests/report -q     (make test runs it)

Needs Debian's python3-matplotlib (make test's setup installs it), hence the system interpreter.
"""

import json
import pathlib
import struct
import subprocess
import sys
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
REPORT = REPO / "bench" / "report"
sys.path.insert(0, str(REPORT))
sys.path.insert(0, str(REPO / "bench" / "common"))
import make_report  # noqa: E402
import plot_sim  # noqa: E402
import plots  # noqa: E402
import results  # noqa: E402
import sections  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from a PNG's IHDR chunk; fails the caller's test if it is not a PNG."""
    data = pathlib.Path(path).read_bytes()
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG")
    return struct.unpack(">II", data[16:24])


class PlotsTest(unittest.TestCase):
    def test_both_kinds_of_chart_write_a_png_of_the_documented_size(self):
        with tempfile.TemporaryDirectory() as tmp:
            bars = f"{tmp}/bars.png"
            lines = f"{tmp}/lines.png"
            plots.bar_chart(bars, "t", ["a", "b"], {"x": [1.0, None], "y": [2.0, 3.0]}, "ns",
                            "cmd @ abc", value_format="{:.1f}")
            plots.line_chart(lines, "t", {"x": ([1, 10, 100], [0.5, 0.4, 0.1])}, "size", "miss",
                             "cmd @ abc", log_x=True, engineering_x=True)
            width, height = plots.SIZE_INCHES
            expected = (int(width * plots.DPI), int(height * plots.DPI))
            self.assertEqual(png_size(bars), expected)
            self.assertEqual(png_size(lines), expected)


class PlotSimTest(unittest.TestCase):
    CSV = ("trace,policy,cache_size,requests,hits,hit_ratio,miss_ratio\n"
           "cpp,lru,100,1000,600,0.600000,0.400000\n"
           "cpp,lru,50,1000,300,0.300000,0.700000\n"
           "cpp,sieve,50,1000,350,0.350000,0.650000\n")

    def test_series_come_per_policy_with_sizes_ascending(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "cpp.csv"
            path.write_text(self.CSV)
            trace, series = plot_sim.miss_ratio_series(path)
            self.assertEqual(trace, "cpp")
            self.assertEqual(series["lru"], ([50, 100], [0.7, 0.4]))
            self.assertEqual(series["sieve"], ([50], [0.65]))

    def test_the_command_line_draws_the_csv_and_refuses_an_empty_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv_path = pathlib.Path(tmp) / "cpp.csv"
            csv_path.write_text(self.CSV)
            png = pathlib.Path(tmp) / "cpp.png"
            subprocess.run([sys.executable, str(REPORT / "plot_sim.py"), str(csv_path), "--png",
                            str(png)], check=True)
            png_size(png)
            empty = pathlib.Path(tmp) / "empty.csv"
            empty.write_text(self.CSV.splitlines()[0] + "\n")
            result = subprocess.run([sys.executable, str(REPORT / "plot_sim.py"), str(empty),
                                     "--png", str(png)], capture_output=True, text=True)
            self.assertEqual(result.returncode, 1)
            self.assertIn("no rows", result.stderr)


class RunnerMarkdownTest(unittest.TestCase):
    def test_conditions_are_fenced_headings_demoted_and_code_blocks_kept(self):
        printed = "\n".join([
            "# chronocache abc g++ -O3 cores=2",
            "# command: python3 x.py",
            "",
            "## Engine",
            "```",
            "# not a condition: inside a code block",
            "```",
        ])
        self.assertEqual(sections.markdown_of_runner(printed).splitlines(), [
            "```text",
            "# chronocache abc g++ -O3 cores=2",
            "# command: python3 x.py",
            "```",
            "",
            "#### Engine",
            "```",
            "# not a condition: inside a code block",
            "```",
        ])


class WhatMovedTest(unittest.TestCase):
    def test_only_changes_beyond_the_noise_threshold_are_listed_with_their_direction(self):
        before = {"get": (10.0, "ns", "lower"), "put": (10.0, "ns", "lower"),
                  "hit": (50.0, "%", "higher"), "gone": (1.0, "x", "lower")}
        now = {"get": (12.0, "ns", "lower"), "put": (10.5, "ns", "lower"),
               "hit": (60.0, "%", "higher"), "new": (3.0, "x", "lower")}
        lines = make_report.headline_changes(before, now)
        self.assertEqual(len(lines), 2)
        self.assertIn("| get | 10 ns | 12 ns | +20 % | worse |", lines)
        self.assertIn("| hit | 50 % | 60 % | +20 % | better |", lines)


class ResultsTest(unittest.TestCase):
    def test_records_are_strict_json_with_nan_as_null(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = f"{tmp}/r.json"
            results.write_results(path, "x", [{"ratio": float("nan"), "n": 1}], "# c")
            document = json.loads(pathlib.Path(path).read_text(),
                                  parse_constant=lambda name: self.fail(f"bare {name}"))
            self.assertEqual(document["records"], [{"n": 1, "ratio": None}])
            self.assertEqual(document["benchmark"], "x")


class RenderOnlyTest(unittest.TestCase):
    """The whole report drawn from canned records: the frame, a section, its figures."""

    ENGINE = {"benchmark": "engine", "conditions": "# chronocache abc", "argv": [], "records": [
        {"kind": "time", "scenario": "bm_getHit", "peer": "chronocache", "ns_per_op": 5.0},
        {"kind": "time", "scenario": "bm_getHit", "peer": "boost_flat", "ns_per_op": 4.0},
        {"kind": "memory", "peer": "chronocache", "entries": 1000, "peak_heap_bytes": 2**20,
         "peak_rss_bytes": 2 * 2**20},
    ]}

    def render(self, out, *extra):
        return subprocess.run([sys.executable, str(REPORT / "make_report.py"), "--render-only",
                               "--out", str(out), "--only", "engine", *extra],
                              capture_output=True, text=True)

    def test_a_report_is_drawn_from_the_records_with_provenance_on_every_figure(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp)
            (out / "results").mkdir()
            (out / "results" / "engine.json").write_text(json.dumps(self.ENGINE))
            (out / "results" / "engine.md").write_text("# chronocache abc\n\n## Engine\n")
            result = self.render(out)
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (out / "README.md").read_text()
            self.assertIn("## 1. Engine", report)
            self.assertIn("## Environment", report)
            self.assertIn("no earlier run to compare with", report)
            for figure in ("engine_latency.png", "engine_memory.png"):
                self.assertIn(f"]({figure})", report)
                png_size(out / figure)
            self.assertRegex(report, r"Made by `python3 bench/engine/run_engine_bench.py[^`]*` at ")
            self.assertIn("#### Engine", report)

    def test_an_unknown_section_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run([sys.executable, str(REPORT / "make_report.py"),
                                     "--render-only", "--out", tmp, "--only", "nosuch"],
                                    capture_output=True, text=True)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("unknown section", result.stderr)


if __name__ == "__main__":
    unittest.main()
