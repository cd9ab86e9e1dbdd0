"""Machine-readable results beside a benchmark's Markdown: what `make report` reads.

Each runner under bench/ prints its tables for people and, given `--json PATH`, also writes the
numbers behind them as records, one flat dict per measured row, so the report can compare runs and
draw plots without parsing Markdown:

    {"benchmark": "server", "conditions": "...", "argv": [...], "records": [{...}, ...]}

A record names what it measured in its own keys (e.g. {"kind": "throughput", "server":
"redis-server", "command": "get", "pipeline": 16, "rps": 812345.0}): strings for the row's
identity, numbers in base units or with the unit in the key's name (`_ms`, `_bytes`, `_s`).
Standard library only, like the runners.
"""

import json
import math
import os
import sys


def add_json_argument(parser):
    parser.add_argument("--json", metavar="PATH",
                        help="also write the measured rows as JSON records (for make report)")


def _strict(value):
    """NaN and infinities (a ratio over nothing) as null: JSON has no number for them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_strict(item) for item in value]
    return value


def write_results(path, benchmark, records, conditions=""):
    """Writes the records to `path` (nothing when path is None), atomically."""
    if not path:
        return
    document = _strict({"benchmark": benchmark, "conditions": conditions, "argv": sys.argv[1:],
                        "records": records})
    temporary = f"{path}.tmp"
    with open(temporary, "w") as out:
        json.dump(document, out, indent=1, sort_keys=True, allow_nan=False)
        out.write("\n")
    os.replace(temporary, path)
