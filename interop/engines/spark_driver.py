"""One Spark session (local mode, Iceberg's Spark runtime) that a test
package keeps for all its tests, since a session costs seconds to start.

It reads one JSON request per line on stdin and answers each with one JSON
line on stdout (Spark's own logging goes to stderr):

  {"op": "catalog", "session": "s1", "props": {"type": "jdbc", ...}}
      names the props (spark.sql.catalog.floe.*) of an Iceberg catalog
      `floe` that requests of session s1 read through: the JDBC catalog
      keeps only the rows of its own name, and the embedded warehouse names
      its catalog floe. Each request runs in a Spark session of its own
      (sharing the one SparkContext) with a new catalog, closed after it:
      Iceberg's JDBC catalog over SQLite keeps reading the catalog as it
      first found it (docs/interop.md), so one catalog would not see what
      floe commits between requests
  {"op": "sql", "session": "s1", "sql": "..."}
      runs a statement; answers {"ok": true}
  {"op": "rows", "session": "s1", "sql": "..."}
      runs a query; answers {"ok": true, "columns": [...], "rows": [...]},
      each row an object in the JSON form `floe scan --output-format jsonl`
      uses (interop/stats_test.go reads both alike)
  {"op": "script", "session": "s1", "path": "x.py", "args": {...}}
      runs a Python file with `spark` and `args` in scope; answers
      {"ok": true, "result": <the file's `result`>}

A failure answers {"ok": false, "error": "..."} and the session goes on.
"""

import base64
import datetime
import decimal
import json
import math
import os
import sys
import traceback

from pyspark.sql import SparkSession


def session(jars):
    b = (
        SparkSession.builder.master(os.environ.get("FLOE_SPARK_MASTER", "local[2]"))
        .appName("floe-interop")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", os.environ.get("FLOE_SPARK_DRIVER_MEMORY", "2g"))
    )
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s


def value(v):
    """A collected value in floe's jsonl form (arrow-go's JSON encoding)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        return v
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, dict):
        return {k: value(x) for k, x in v.items()}
    if isinstance(v, list):
        # pyarrow gives a map as a list of (key, value) tuples.
        if v and all(isinstance(e, tuple) and len(e) == 2 for e in v):
            return [{"key": value(k), "value": value(x)} for k, x in v]
        return [value(e) for e in v]
    if isinstance(v, tuple):
        return [value(e) for e in v]
    raise TypeError("no JSON form for %r (%s)" % (v, type(v).__name__))


def rows(spark, sql):
    df = spark.sql(sql)
    t = df.toArrow()
    out = []
    for r in t.to_pylist():
        out.append({k: value(v) for k, v in r.items()})
    return {"columns": t.column_names, "rows": out}


def handle(root, sessions, req):
    op = req.get("op")
    if op == "catalog":
        sessions[req["session"]] = req.get("props", {})
        return {}
    props = sessions.get(req.get("session"))
    if props is None:
        return run(root, op, req)
    spark = root.newSession()
    spark.conf.set("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
    for k, v in props.items():
        spark.conf.set("spark.sql.catalog.floe." + k, v)
    try:
        return run(spark, op, req)
    finally:
        close_catalog(spark)


def close_catalog(spark):
    """Closes the session's Iceberg catalog (its JDBC connections), if it
    was opened."""
    manager = spark._jsparkSession.sessionState().catalogManager()
    if manager.isCatalogRegistered("floe"):
        manager.catalog("floe").icebergCatalog().close()


def run(spark, op, req):
    if op == "sql":
        spark.sql(req["sql"]).collect()
        return {}
    if op == "rows":
        return rows(spark, req["sql"])
    if op == "script":
        scope = {"spark": spark, "args": req.get("args", {}), "rows": lambda q: rows(spark, q), "result": None}
        with open(req["path"]) as f:
            code = compile(f.read(), req["path"], "exec")
        exec(code, scope)
        return {"result": scope["result"]}
    raise ValueError("unknown op %r" % op)


def main():
    jars = [a for a in sys.argv[1:] if a.endswith(".jar")]
    out = sys.stdout
    # Spark and py4j print to stdout at times; answers need it alone.
    sys.stdout = sys.stderr
    spark = session(jars)
    sessions = {}
    out.write(json.dumps({"ok": True, "ready": True, "version": spark.version}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = handle(spark, sessions, json.loads(line))
            answer["ok"] = True
        except Exception as e:  # the test reads the error; the session goes on
            answer = {"ok": False, "error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()}
        out.write(json.dumps(answer, allow_nan=False) + "\n")
        out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
