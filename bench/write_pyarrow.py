"""Rewrites Parquet files with pyarrow, for floe's formats benchmark.

    python bench/write_pyarrow.py OUT_DIR IN_FILE...

Each input is read whole and written to OUT_DIR under its own name by
pq.write_table with pyarrow's defaults (row groups, dictionary, statistics,
format version) but zstd: the files as a pyarrow user writes them. Prints
the rows written.
"""

import os
import sys

import pyarrow.parquet as pq


def main(out_dir, inputs):
    rows = 0
    for path in inputs:
        table = pq.read_table(path)
        out = os.path.join(out_dir, os.path.basename(path))
        pq.write_table(table, out + ".tmp", compression="zstd")
        os.replace(out + ".tmp", out)
        rows += table.num_rows
    print(rows)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
