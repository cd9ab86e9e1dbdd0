#!/usr/bin/python3
"""`make report`: runs the benchmark suite against the peers and writes docs/report/.

    /usr/bin/python3 bench/report/make_report.py                 # full: the runners' defaults
    /usr/bin/python3 bench/report/make_report.py --quick         # REPORT=quick: under 10 minutes
    /usr/bin/python3 bench/report/make_report.py --only engine,server
    /usr/bin/python3 bench/report/make_report.py --render-only   # redraw from docs/report/results

Each section runs one or more runners under bench/ (the same ones the `make bench-*` targets run),
keeps what they print (their Markdown tables, with the peers beside us and the ratios) and the
records they write with --json, and draws its figures from those records through plots.py. The
report, docs/report/README.md, is laid out as our design report was: environment, methodology,
what moved since the last report, then one part per scenario. The records are kept in
docs/report/results/, so the next run can say what moved; a section that cannot run here (the
hit-ratio traces live beside the repository, in ../shared) says why instead of failing the report.

Needs matplotlib: Debian's python3-matplotlib, which `make report` installs, seen by
/usr/bin/python3.
"""

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import plots  # noqa: E402
import sections  # noqa: E402

# A change smaller than this, run to run, is noise on these VMs: "what moved" lists only larger.
MOVED_THRESHOLD = 0.10


def log(message):
    print(f"report: {message}", file=sys.stderr, flush=True)


def git(*args):
    result = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return result.stdout.strip()


def commit_name():
    sha = git("rev-parse", "--short", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{sha}-dirty" if dirty else sha


def first_line_of(command):
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 \
        else "not found"


def environment():
    """(label, value) rows describing the machine and the software under test."""
    cpu = "?"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "?"
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    try:
        debian = pathlib.Path("/etc/debian_version").read_text().strip()
    except OSError:
        debian = "?"
    return [
        ("CPU", f"{cpu}, {len(os.sched_getaffinity(0))} cores usable"),
        ("Memory", memory),
        ("Kernel", platform.release()),
        ("OS", f"Debian {debian}"),
        ("Compiler", first_line_of(["g++", "--version"])),
        ("redis-server", first_line_of(["redis-server", "--version"])),
        ("redis-benchmark", first_line_of(["redis-benchmark", "--version"])),
        ("Python / matplotlib", f"{platform.python_version()} / {plots.matplotlib.__version__}"),
    ]


def run_runner(run, out_dir):
    """Runs one runner; returns (stdout text, records document or None, seconds, error or None).
    A runner without records gets an empty document."""
    json_path = out_dir / "results" / f"{run.name}.json"
    command = [*run.argv, "--json", str(json_path)] if run.records else run.argv
    log("$ " + run.command())
    started = time.time()
    try:
        result = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True,
                                timeout=run.timeout_s, env={**os.environ, **run.env})
    except subprocess.TimeoutExpired:
        return "", None, time.time() - started, f"timed out after {run.timeout_s} s"
    seconds = time.time() - started
    if result.returncode != 0:
        return result.stdout, None, seconds, f"exit status {result.returncode}"
    if not run.records:
        document = {"benchmark": run.name, "records": []}
        json_path.write_text(json.dumps(document) + "\n")
        return result.stdout, document, seconds, None
    try:
        document = json.loads(json_path.read_text())
    except (OSError, ValueError) as error:
        return result.stdout, None, seconds, f"no records: {error}"
    return result.stdout, document, seconds, None


def headline_changes(previous, current):
    """Lines for "what moved": headline figures that changed by more than MOVED_THRESHOLD."""
    lines = []
    for label, (value, unit, better) in current.items():
        if label not in previous:
            continue
        before = previous[label][0]
        if not before or value is None:
            continue
        change = value / before - 1
        if abs(change) < MOVED_THRESHOLD:
            continue
        improved = (change < 0) == (better == "lower")
        lines.append(f"| {label} | {sections.number(before)} {unit} | {sections.number(value)} "
                     f"{unit} | {change * 100:+.0f} % | {'better' if improved else 'worse'} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smaller runs, fewer repetitions: the whole report in under 10 min")
    parser.add_argument("--out", default=str(REPO / "docs" / "report"))
    parser.add_argument("--build-dir", default=str(REPO / "build" / "release"))
    parser.add_argument("--only", default="",
                        help="comma-separated sections: " + ",".join(sections.NAMES))
    parser.add_argument("--render-only", action="store_true",
                        help="run nothing: redraw the report from the records in OUT/results")
    parser.add_argument("--traces", default=str(REPO.parent / "shared" / "data" / "traces"),
                        help="the hit-ratio sample traces (default: %(default)s)")
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    (out_dir / "results").mkdir(parents=True, exist_ok=True)
    chosen = [s for s in args.only.split(",") if s] or sections.NAMES
    unknown = sorted(set(chosen) - set(sections.NAMES))
    if unknown:
        sys.exit(f"report: unknown section(s) {', '.join(unknown)}; choose from "
                 f"{', '.join(sections.NAMES)}")

    meta_path = out_dir / "results" / "meta.json"
    previous_meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    commit = commit_name()
    mode = "quick" if args.quick else "full"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    context = sections.Context(build_dir=pathlib.Path(args.build_dir), out_dir=out_dir,
                               quick=args.quick, commit=commit, traces=pathlib.Path(args.traces))

    parts = []
    failures = []
    section_meta = dict(previous_meta.get("sections", {}))
    for section in sections.ALL:
        previous = section_meta.get(section.name, {})
        rerun = section.name in chosen and not args.render_only
        # A section not run now is redrawn from its stored records, in the name of the commit
        # whose run made them.
        section_context = context if rerun else dataclasses.replace(
            context, commit=previous.get("commit", commit), quick=previous.get("mode") == "quick")
        outputs = {}
        notes = []
        unavailable = section.unavailable(section_context) if rerun else ""
        for run in ([] if unavailable else section.runs(section_context)):
            json_path = out_dir / "results" / f"{run.name}.json"
            text_path = out_dir / "results" / f"{run.name}.md"
            if not rerun:
                if json_path.exists():
                    outputs[run.name] = (text_path.read_text() if text_path.exists() else "",
                                         json.loads(json_path.read_text()), run)
                continue
            text, document, seconds, error = run_runner(run, out_dir)
            text_path.write_text(text)
            if error:
                failures.append(f"{run.name}: {error}")
                notes.append(f"`{run.command()}` failed ({error}); its part is missing.")
                continue
            log(f"{run.name}: {seconds:.0f} s")
            outputs[run.name] = (text, document, run)
        if not rerun and not outputs:
            continue  # never run into this folder: nothing to show
        body, headlines = section.render(section_context, outputs)
        parts.append(sections.Part(section, unavailable, notes, body))
        if rerun and outputs:
            section_meta[section.name] = {
                "commit": commit, "mode": mode, "date": date, "headlines": headlines,
                "moved": headline_changes(previous.get("headlines", {}), headlines),
                "compared_with": {key: previous[key] for key in ("commit", "mode", "date")
                                  if key in previous}}

    meta = {"commit": commit, "date": date, "mode": mode, "sections": section_meta}
    if not args.render_only:
        meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    report = sections.report_markdown(context, meta, environment(), parts, sys.argv[1:])
    (out_dir / "README.md").write_text(report)
    for stale in sorted(set(out_dir.glob("*.png")) - {out_dir / name for name in
                                                       re.findall(r"\]\(([^)/]+\.png)\)", report)}):
        stale.unlink()  # a figure this report no longer draws
    log(f"wrote {out_dir / 'README.md'}")
    if failures:
        log("these runs failed: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
